import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dryRunCreate, settleIntegration, writeCreate, writeUpdate, type OpContext } from '../../src/apply/integration.js';
import { createWebhooks } from '../../src/apply/webhooks.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { ManualClock } from '../helpers/clock.js';
import { engineOptions } from '../helpers/engine-options.js';
import { trackApi } from '../helpers/tracked-api.js';
import { rig, sqlManifest, lakeManifest, type Rig } from './inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig();
  Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-AAAA-1111', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-BBBB-2222', GOVOPS_SECRET_LAKE_TOKEN: 'tok-CCCC-3333' });
});
afterEach(async () => {
  await r.close();
});

describe('apply error paths (sandbox over HTTP)', () => {
  it('422 on the dry run: failure with the validation results, no real call', async () => {
    await r.write('a.yaml', sqlManifest('bad', 'db.invalid'));
    const res = await r.run();
    expect(res.ok).toBe(false);
    expect(res.stage).toBe('apply');
    const o = res.outcomes[0]!;
    expect(o).toMatchObject({ name: 'bad', action: 'create', result: 'failed' });
    expect(o.error).toMatch(/dry run\) failed validation \(422\)/);
    expect(o.validation?.some((t) => t.status === 'failed')).toBe(true);
    expect(r.lines().filter((l) => l.startsWith('POST /integrations'))).toEqual(['POST /integrations?dryRun=true 422']);
  });

  it('a dry-run test with status warning does not stop the real call (a service may warn on success)', async () => {
    r.sandbox.failures.tests.push({ name: '*', status: 'warning', operation: 'create' });
    await r.write('a.yaml', sqlManifest('warned', 'db.example.com'));
    const res = await r.run();
    expect(res.outcomes[0]).toMatchObject({ result: 'ok' });
    expect(r.lines().filter((l) => l.startsWith('POST /integrations'))).toEqual(['POST /integrations?dryRun=true 200', 'POST /integrations 200']);
  });

  it('createError: failure with validation results; the id is recorded; the next apply fixes it with PUT', async () => {
    await r.write('a.yaml', sqlManifest('late', 'db.late-fail.example'));
    const first = await r.run();
    expect(first.outcomes[0]).toMatchObject({ result: 'failed', liveId: '1' });
    expect(first.outcomes[0]!.error).toMatch(/ended in status createError/);
    expect((await r.state()).resources.map((x) => [x.name, x.id])).toEqual([['late', '1']]);
    const plan = await r.run({ apply: false });
    expect(plan.plan!.changes[0]).toMatchObject({ action: 'update', liveId: '1' });
    r.sandbox.clearRequests();
    const second = await r.run();
    expect(second.ok).toBe(true);
    const writes = r.lines().filter((l) => !l.startsWith('GET'));
    expect(writes).toEqual(['PUT /integrations/1?dryRun=true 200', 'PUT /integrations/1 200']);
    expect((await r.api.getIntegrationStatus('1')).status).toBe('enabled');
  });

  it('400 "previously failed to create": PUT on the integration found by natural key, never an id read from the message', async () => {
    // The host has digits that an id-from-message reading would take for the id ("id-42").
    const body = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'id-42.late-fail.example', database: 'd', schema: 's', username: 'u', password: 'p' } };
    await r.api.createIntegration({ ...body, config: { ...body.config, host: 'db.example.com' } });
    const made = await r.api.createIntegration(body);
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 10_000, initialMs: 20, maxMs: 100 } };
    while ((await r.api.getIntegrationStatus(made.id)).status === 'creating') await new Promise((ok) => setTimeout(ok, 20));
    r.sandbox.clearRequests();
    const fix = await dryRunCreate(ctx, body);
    expect(fix).toBe(made.id);
    await writeUpdate(ctx, fix!, body);
    expect(await settleIntegration(ctx, fix!, 'update', { op: 'update' })).toBe('enabled');
    const writes = r.lines().filter((l) => !l.startsWith('GET'));
    expect(writes).toEqual([
      'POST /integrations?dryRun=true 400',
      `PUT /integrations/${made.id}?dryRun=true 200`,
      `PUT /integrations/${made.id} 200`,
    ]);
  });

  it('400 "previously failed to create" on the real create (a stale plan): fixed with PUT on the id found by natural key', async () => {
    const body = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'h7.late-fail.example', database: 'd', schema: 's', username: 'u', password: 'p' } };
    const made = await r.api.createIntegration(body);
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 10_000, initialMs: 20, maxMs: 100 } };
    while ((await r.api.getIntegrationStatus(made.id)).status === 'creating') await new Promise((ok) => setTimeout(ok, 20));
    r.sandbox.clearRequests();
    expect(await writeCreate(ctx, body)).toBe(made.id);
    expect(r.lines().filter((l) => !l.startsWith('GET'))).toEqual(['POST /integrations 400', `PUT /integrations/${made.id} 200`]);
  });

  it('409 on update: waits for the status to settle and retries within the timeout', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { port: 1500 }));
    r.sandbox.faults.add({ type: 'conflict', method: 'PUT', path: '/integrations/:id', count: 2 });
    r.sandbox.clearRequests();
    const res = await r.run();
    expect(res.ok).toBe(true);
    const puts = r.lines().filter((l) => l.startsWith('PUT'));
    expect(puts).toEqual(['PUT /integrations/1?dryRun=true 409', 'PUT /integrations/1?dryRun=true 409', 'PUT /integrations/1?dryRun=true 200', 'PUT /integrations/1 200']);
    expect(r.lines()).toContain('GET /integrations/1/status 200');
    expect((await r.api.getIntegration('1')).config.port).toBe(1500);
  });

  it('an integration deleted out of band between plan and update (404 on the PUT): GOVOPS_RESOURCE_GONE, transient, as when a 409 wait finds it gone; the next apply creates it', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { port: 1500 }));
    // deleted by someone after govops listed it, before its update's dry run
    const racing = new Proxy(r.api, {
      get(t, prop, recv) {
        const v = Reflect.get(t, prop, recv) as unknown;
        if (typeof v !== 'function') return v;
        if (prop !== 'updateIntegration') return (v as (...a: unknown[]) => unknown).bind(t);
        return async (...args: unknown[]) => {
          if ((await t.listIntegrations()).length) {
            await t.deleteIntegration('1', { authenticationType: 'userPassword', username: 'admin', password: 'x' });
            r.sandbox.finishTransitions();
          }
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
    const res = await reconcile(racing, engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, timeoutMs: 10_000, pollIntervalMs: 10, pollMaxIntervalMs: 50 }));
    expect(res.outcomes[0]).toMatchObject({ action: 'update', result: 'failed', code: 'GOVOPS_RESOURCE_GONE', failureClass: 'transient' });
    expect(res.failure).toEqual({ code: 'GOVOPS_RESOURCE_GONE', failureClass: 'transient' });
    const again = await r.run();
    expect(again.outcomes[0]).toMatchObject({ action: 'create', result: 'ok' });
  });

  it('a status that never settles fails at the --timeout', async () => {
    // on a clock the test moves, shared with the sandbox (helpers/clock.ts): the 400 ms timeout is the clock's, so a
    // busy machine cannot spend it before the first status poll is answered (it then read `last status: unknown`)
    const clock = new ManualClock();
    const c = await rig({ clock });
    try {
      Object.assign(c.env, r.env);
      const tracked = trackApi(c.api, clock);
      c.sandbox.setStuckTransitions(true);
      await c.write('a.yaml', sqlManifest('stuck', 'db.example.com'));
      const started = clock.monotonic();
      const res = await clock.runUntil(
        reconcile(
          tracked.api,
          engineOptions({
            root: c.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: c.statePath,
            env: c.env, clock, timeoutMs: 400, pollIntervalMs: 20, pollMaxIntervalMs: 200,
          }),
        ),
      );
      expect(res.outcomes[0]).toMatchObject({ result: 'failed' });
      expect(res.outcomes[0]!.error).toMatch(/timed out waiting for integration 1 to settle \(last status: creating\)/);
      const polls = tracked.calls.filter((x) => x.method === 'getIntegrationStatus').map((x) => x.at);
      expect(polls.length).toBeGreaterThan(1);
      // it gave up at the timeout: not before it, and with no poll sent after it
      expect(clock.monotonic() - started).toBeGreaterThanOrEqual(400);
      expect(Math.max(...polls) - started).toBeLessThan(400);
    } finally {
      await c.close();
    }
  });

  it('one failing resource never stops the others', async () => {
    await r.write('a.yaml', sqlManifest('bad', 'db.invalid'));
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    const res = await r.run();
    expect(res.outcomes.map((o) => `${o.name}:${o.result}`).sort()).toEqual(['bad:failed', 'lake:ok']);
    expect(res.error).toMatch(/1 of 2 resources not applied/);
  });

  it('lakehouse metastore 422 is reported with its message', async () => {
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com', '/sql/nometastore'));
    const res = await r.run();
    expect(res.outcomes[0]!.error).toMatch(/422.*[Mm]etastore/);
  });

  it('an aborted apply starts nothing new', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    const ac = new AbortController();
    ac.abort();
    const res = await r.run({ signal: ac.signal });
    expect(res.outcomes[0]).toMatchObject({ result: 'skipped', error: 'aborted before it started' });
    expect(r.lines().filter((l) => !l.startsWith('GET'))).toEqual([]);
  });

  it('webhook batch create: per-item errors are mapped to their resources', async () => {
    const good = { url: 'https://hooks.example.com/a', name: 'a', global: false, notificationType: ['modelCreated'], actionType: 'triggered' as const };
    const bad = { ...good, name: 'b', notificationType: ['noSuchEvent'] };
    const res = await createWebhooks(r.api, [good, bad]);
    expect(res[0]).toMatchObject({ ok: true, webhook: { name: 'a' } });
    expect(res[1]).toMatchObject({ ok: false });
    expect(!res[1]!.ok && res[1]!.error.message).toMatch(/noSuchEvent/);
    expect(!res[1]!.ok && res[1]!.definite).toBe(true);
    expect(r.lines().filter((l) => l.startsWith('POST /webhooks'))).toHaveLength(1);
  });
});
