/**
 * A create that meets the service's 400 "previously failed to create (id N); use PUT to fix it" fixes N with a PUT and
 * records it as govops'. N is someone else's when the plan did not see it (a lagging list, or a saved plan made before
 * it was created): under --no-adopt that PUT is the takeover the guard exists to keep with the operator.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeCreate, type OpContext } from '../../src/apply/integration.js';
import { ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { systemClock } from '../../src/util/clock.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { rig, sqlManifest, type Rig } from './inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig({ behaviours: ['list-lag'] });
  Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-AAAA-1111', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-BBBB-2222' });
});
afterEach(async () => {
  await r.close();
});

async function theirsInCreateError(host: string): Promise<string> {
  const made = await r.api.createIntegration({
    type: 'sql_analytics',
    autoBootstrap: true,
    config: { host, database: 'governance', schema: 'theirs', username: 'them', password: 'their-pw' },
  });
  r.sandbox.finishTransitions();
  expect((await r.api.getIntegrationStatus(made.id)).status).toBe('createError');
  return made.id;
}

function run(noAdopt: boolean) {
  const flat = engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, pollIntervalMs: 10, timeoutMs: 20_000 });
  return reconcile(r.api, { ...flat, plan: { ...flat.plan, noAdopt } });
}

describe('a create meeting "previously failed to create" for an integration govops does not own', () => {
  it('under --no-adopt: not written (no PUT), not recorded as govops\', the failure names the id and the way to adopt it', async () => {
    const theirs = await theirsInCreateError('db.late-fail.example');
    await r.write('a.yaml', sqlManifest('ours', 'db.late-fail.example'));
    r.sandbox.clearRequests();
    const res = await run(true);
    expect(res.ok).toBe(false);
    expect(r.lines().filter((l) => l.startsWith('PUT'))).toEqual([]);
    const live = await r.api.getIntegration(theirs);
    expect(live.config.schema).toBe('theirs');
    expect((await r.state()).resources.filter((e) => e.kind === 'Integration')).toEqual([]);
    const o = res.outcomes.find((x) => x.name === 'ours')!;
    expect(o.result).toBe('failed');
    expect(o.error).toContain(`integration ${theirs}`);
    expect(o.error).toContain(`govops state adopt Integration/ours --id ${theirs}`);
  });

  it('under --no-adopt, the real create meeting it (a plan older than it): no PUT, the refusal drops the intent', async () => {
    const theirs = await theirsInCreateError('late.late-fail.example');
    await r.api.listIntegrations(); // the list has caught up: the create finds it
    const body = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'late.late-fail.example', database: 'governance', schema: 's', username: 'u', password: 'p' } };
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 10_000, initialMs: 20, maxMs: 100 }, noAdopt: true };
    r.sandbox.clearRequests();
    let refused = 0;
    const err = await writeCreate(ctx, body, () => refused++, 'Integration/late').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCode.alreadyExists });
    expect(String((err as Error).message)).toContain(`govops state adopt Integration/late --id ${theirs}`);
    expect(refused).toBe(1);
    expect(r.lines().filter((l) => !l.startsWith('GET'))).toEqual(['POST /integrations 400']);
  });

  it('without --no-adopt it is fixed with PUT, as the service says (the default adoption by natural key)', async () => {
    const theirs = await theirsInCreateError('db.late-fail.example');
    await r.write('a.yaml', sqlManifest('ours', 'db.late-fail.example'));
    const res = await run(false);
    expect(res.ok, res.error).toBe(true);
    expect((await r.state()).resources.map((e) => [e.name, e.id])).toEqual([['ours', theirs]]);
  });

  it('under --no-adopt, a 409 whose holder is found by natural key says the next plan blocks it and how to adopt it (not "adopts it")', async () => {
    const body = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'held.example.com', database: 'governance', schema: 's', username: 'u', password: 'p' } };
    const made = await r.api.createIntegration(body);
    r.sandbox.finishTransitions();
    await r.api.listIntegrations(); // the list has caught up
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 10_000, initialMs: 20, maxMs: 100 }, noAdopt: true };
    const err = await writeCreate(ctx, body, () => undefined, 'Integration/held').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCode.alreadyExists });
    expect(String((err as Error).message)).not.toContain('the next plan adopts it');
    expect(String((err as Error).message)).toContain(`govops state adopt Integration/held --id ${made.id}`);
  });

  it('a dry run of a create answered 409 by an integration someone else made (a lagging list left it out): one try, the holder named, not retried as busy', async () => {
    const made = await r.api.createIntegration({
      type: 'sql_analytics',
      autoBootstrap: true,
      config: { host: 'taken.example.com', database: 'governance', schema: 'theirs', username: 'them', password: 'their-pw' },
    });
    r.sandbox.finishTransitions();
    await r.write('a.yaml', sqlManifest('ours', 'taken.example.com'));
    r.sandbox.clearRequests();
    const res = await run(false);
    expect(res.ok).toBe(false);
    expect(r.lines().filter((l) => !l.startsWith('GET'))).toEqual(['POST /integrations?dryRun=true 409']);
    const o = res.outcomes.find((x) => x.name === 'ours')!;
    expect(o).toMatchObject({ result: 'failed', code: ErrorCode.alreadyExists });
    expect(o.error).toContain(`integration ${made.id}`);
    // the next plan sees it and adopts it (the default)
    const next = await run(false);
    expect(next.ok, next.error).toBe(true);
    expect((await r.state()).resources.map((e) => [e.name, e.id, e.origin])).toEqual([['ours', made.id, 'adopted']]);
  });
});
