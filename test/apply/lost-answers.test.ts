/**
 * Answers lost after the service acted (a proxy on 127.0.0.1 cuts the connection once the sandbox answered), and the
 * intents they leave in the state: the next run settles them without reporting govops' own write as someone else's.
 * Real sandbox over HTTP; govops and the sandbox share one clock the test moves (helpers/clock.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { SETTLE_WAIT_MS } from '../../src/apply/tasks.js';
import { judgeResult } from '../../src/daemon/classify.js';
import { reconcile } from '../../src/reconcile/engine.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import type { ManualClock } from '../helpers/clock.js';
import { cuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { engineOptions, type FlatEngineOptions } from '../helpers/engine-options.js';
import { dataSourceManifest, objectStoreManifest } from '../helpers/manifests.js';
import { trackApi, type TrackedApi } from '../helpers/tracked-api.js';
import { clockRig, lakeManifest, webhookManifest, type Rig } from './inproc.js';

let r: Rig;
let clock: ManualClock;
let proxy: CuttingProxy;
let client: ServiceClient;
let tracked: TrackedApi<ServiceClient>;
async function start(behaviours: readonly string[] = []): Promise<void> {
  ({ r, clock } = await clockRig({ transitionMs: 300, behaviours }));
  proxy = await cuttingProxy(r.sandbox.url);
  // no retries: the run that lost the answer ends there, as one killed right after sending would
  client = new ServiceClient({ baseUrl: proxy.url, token: r.sandbox.adminToken, logger: silentLogger(), retries: 0, clock });
  tracked = trackApi(client, clock);
}
beforeEach(() => start());
afterEach(async () => {
  await client.close();
  await proxy.close();
  await r.close();
});

function run(opts: Partial<FlatEngineOptions> = {}): Promise<ReconcileResult> {
  return clock.runUntil(
    reconcile(
      tracked.api,
      engineOptions({
        root: r.dir,
        paths: ['m'],
        apply: true,
        prune: false,
        allowReplace: false,
        logger: silentLogger(),
        statePath: r.statePath,
        env: r.env,
        timeoutMs: 60_000,
        pollIntervalMs: 20,
        pollMaxIntervalMs: 200,
        clock,
        ...opts,
      }),
    ),
  );
}

describe('an integration delete whose answer was lost', () => {
  it('the next run, while the integration is still deleting, ends the delete as done: no "deleted meanwhile" failure', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false)); // (the manifest set is not empty)
    const created = await run();
    expect(created.ok, created.error).toBe(true);
    const id = (await r.state()).resources.find((e) => e.name === 'store')!.id;
    await r.remove('store.yaml');
    // the service carries the delete out (status deleting) and the answer is lost; deleting lasts into the next run
    r.sandbox.setStuckTransitions(['deleting']);
    proxy.cut = (line) => line === `DELETE /integrations/${id}`;
    const lost = await run({ prune: true });
    expect(lost.ok).toBe(false);
    expect(proxy.requests).toContain(`DELETE /integrations/${id} cut`);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'store', id, pending: 'delete' }));
    expect((await r.api.getIntegration(id)).status).toBe('deleting');
    // the next run's dry run finds it still deleting (409); the delete then finishes while govops waits
    proxy.cut = (line) => {
      if (line.startsWith(`DELETE /integrations/${id}`)) r.sandbox.setStuckTransitions(false);
      return false;
    };
    const next = await run({ prune: true });
    expect(next.ok, next.error).toBe(true);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'store', action: 'delete', result: 'ok' })]);
    expect((await r.state()).resources.map((e) => e.name)).toEqual(['hook']);
    expect(await r.api.listIntegrations()).toEqual([]);
  });
});

/** The POST of a create is carried out and its answer lost, and so is the client's look-up right after it. */
function cutCreateAndLookup(): void {
  let posted = false;
  proxy.cut = (line) => {
    if (line === 'POST /integrations') return (posted = true);
    return posted && line === 'GET /integrations';
  };
}

/** An object_store manifest `name` whose creation the sandbox ends in createError (its config name). */
async function writeLateFailingStore(name: string): Promise<void> {
  await r.write('store.yaml', objectStoreManifest(name, 's3://store/data').replace('name: store\n    cloud', 'name: store.late-fail.example\n    cloud'));
}

describe('an integration create whose answer was lost', () => {
  it('the run that lost it and could not look it up keeps the intent; the next run records the integration, waits for it, fixes a createError by PUT, and then writes nothing', async () => {
    const name = 'store';
    await writeLateFailingStore(name);
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false));
    cutCreateAndLookup();
    const lost = await run();
    expect(lost.ok).toBe(false);
    expect(proxy.requests.filter((l) => l.startsWith('POST /integrations'))).toEqual(['POST /integrations?dryRun=true', 'POST /integrations cut']);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name, id: '', pending: 'create' }));
    proxy.cut = () => false;
    proxy.requests.length = 0;
    const next = await run();
    const live = await r.api.listIntegrations();
    expect(live).toHaveLength(1);
    expect(proxy.requests.filter((l) => l.startsWith('POST /integrations'))).toEqual([]);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name, id: live[0]!.id, origin: 'created' }));
    expect((await r.state()).resources.find((e) => e.name === name)!.pending).toBeUndefined();
    expect(next.ok, next.error).toBe(true);
    expect((await r.api.getIntegration(live[0]!.id)).status).toBe('enabled');
    proxy.requests.length = 0;
    const after = await run();
    expect(after.ok, after.error).toBe(true);
    expect(after.outcomes).toEqual([]);
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
  });
});

describe('an integration create whose answer was lost, still creating when the next run resolves it', () => {
  it('the next run waits for the creation as a create does, and its createError is the failure of that run; the run after it fixes it by PUT', async () => {
    const name = 'store';
    await writeLateFailingStore(name);
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false));
    r.sandbox.setStuckTransitions(['creating']);
    cutCreateAndLookup();
    const lost = await run();
    expect(lost.ok).toBe(false);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name, id: '', pending: 'create' }));
    const id = (await r.api.listIntegrations())[0]!.id;
    expect((await r.api.getIntegration(id)).status).toBe('creating');
    // The next run lists it still creating (its plan: settle, nothing to send); the creation goes on once the plan is made.
    proxy.cut = (line) => {
      if (line.startsWith('GET /integrations/')) r.sandbox.setStuckTransitions(false);
      return false;
    };
    proxy.requests.length = 0;
    const next = await run();
    expect(next.plan!.changes.find((c) => c.name === name)).toMatchObject({ action: 'settle', liveId: id, changes: [] });
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
    expect(next.ok).toBe(false);
    expect(next.outcomes).toEqual([expect.objectContaining({ name, action: 'settle', result: 'failed', code: ErrorCode.statusError })]);
    expect((await r.api.getIntegration(id)).status).toBe('createError');
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name, id, origin: 'created' }));
    // the run after it fixes it with PUT, as for any createError
    const fixed = await run();
    expect(fixed.ok, fixed.error).toBe(true);
    expect(fixed.outcomes).toEqual([expect.objectContaining({ name, action: 'update', result: 'ok' })]);
  });

  it('one that ends enabled: the next run waits for it and reports it ok, then writes nothing', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    r.sandbox.setStuckTransitions(['creating']);
    cutCreateAndLookup();
    expect((await run()).ok).toBe(false);
    proxy.cut = (line) => {
      if (line.startsWith('GET /integrations/')) r.sandbox.setStuckTransitions(false);
      return false;
    };
    const next = await run();
    expect(next.ok, next.error).toBe(true);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'store', action: 'settle', result: 'ok' })]);
    const id = (await r.api.listIntegrations())[0]!.id;
    expect((await r.api.getIntegration(id)).status).toBe('enabled');
    proxy.requests.length = 0;
    const after = await run();
    expect(after.ok, after.error).toBe(true);
    expect(after.outcomes).toEqual([]);
    expect(after.plan!.changes.map((c) => c.action)).toEqual(['noop']);
  });
});

describe('an integration create whose answer was lost, kept creating by the service for hours', () => {
  it('the next run waits for it SETTLE_WAIT_MS, not its whole --timeout, and reports it still settling (no failure); a later run waits again', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    r.sandbox.setStuckTransitions(['creating']);
    cutCreateAndLookup();
    expect((await run()).ok).toBe(false);
    proxy.cut = () => false;
    proxy.requests.length = 0;
    const started = clock.monotonic();
    const next = await run({ timeoutMs: 600_000 });
    // before: the whole --timeout waited, then GOVOPS_SETTLE_TIMEOUT (a daemon retried it with backoff, holding the lock)
    expect(next.ok, next.error).toBe(true);
    expect(clock.monotonic() - started).toBeLessThan(SETTLE_WAIT_MS + 1_000);
    const id = (await r.api.listIntegrations())[0]!.id;
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'store', action: 'settle', result: 'settling', liveId: id })]);
    expect(next.outcomes[0]!.error).toMatch(/still settling after 1m.*last status: creating.*the next run looks again/);
    expect(next.outcomes[0]!.code).toBeUndefined();
    expect(next.changed).toBe(false);
    // the daemon: in sync, nothing to retry (it looks again at its resync period)
    expect(judgeResult(next, true)).toMatchObject({ verdict: 'in-sync', retry: 'none', blocksReadiness: false });
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
    // the service ends it: the next run waits for it again and reports it ok
    r.sandbox.setStuckTransitions(false);
    const after = await run({ timeoutMs: 600_000 });
    expect(after.ok, after.error).toBe(true);
    expect((await r.api.getIntegration(id)).status).toBe('enabled');
  });

  it('a data source under it is not started (registered by a run after it settles enabled): held back, not a failure the daemon retries', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data/'));
    r.sandbox.setStuckTransitions(['creating']);
    cutCreateAndLookup();
    expect((await run()).ok).toBe(false);
    proxy.cut = () => false;
    await r.write('events.yaml', dataSourceManifest('events', 'store', 's3://store/data/events'));
    const next = await run({ timeoutMs: 600_000 });
    const byName = new Map(next.outcomes.map((o) => [o.name, o]));
    expect(byName.get('store')).toMatchObject({ action: 'settle', result: 'settling' });
    expect(byName.get('events')).toMatchObject({ action: 'create', result: 'skipped', code: ErrorCode.blocked });
    expect(byName.get('events')!.error).toMatch(/waits for Integration\/store, still creating or editing/);
    expect(judgeResult(next, true)).toMatchObject({ verdict: 'blocked', retry: 'none', blocksReadiness: false });
    r.sandbox.setStuckTransitions(false);
    const after = await run({ timeoutMs: 600_000 });
    expect(after.ok, after.error).toBe(true);
    expect(await r.api.listDataSources()).toHaveLength(1);
  });

  it("govops' own write in the same run is waited for as before (its --timeout fails it); the settle waits while it lasts and is still settling, not failed", async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    r.sandbox.setStuckTransitions(['creating']);
    cutCreateAndLookup();
    expect((await run()).ok).toBe(false);
    proxy.cut = () => false;
    await r.write('other.yaml', objectStoreManifest('other', 's3://other/data'));
    const started = clock.monotonic();
    const next = await run({ timeoutMs: 300_000 });
    expect(clock.monotonic() - started).toBeGreaterThanOrEqual(300_000);
    expect(next.ok).toBe(false);
    const byName = new Map(next.outcomes.map((o) => [o.name, o]));
    expect(byName.get('other')).toMatchObject({ action: 'create', result: 'failed', code: ErrorCode.settleTimeout });
    expect(byName.get('store')).toMatchObject({ action: 'settle', result: 'settling' });
    expect(byName.get('store')!.durationMs).toBeGreaterThan(SETTLE_WAIT_MS);
  });
});

describe('an owned integration another client is editing (the same values), whose edit ends in editError', () => {
  it('the settle fails the run with a message that does not blame an earlier run: it says this run did not send it', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    expect((await run()).ok).toBe(true);
    const id = (await r.state()).resources[0]!.id;
    // another tool sends the same values; the service keeps it editing, then ends the edit in editError
    r.sandbox.setStuckTransitions(['editing']);
    r.sandbox.failures.next.push({ operation: 'edit', count: 1 });
    await r.api.updateIntegration(id, {
      type: 'object_store',
      autoBootstrap: false,
      config: { name: 'store', cloudAccountId: '123456789012', cloudRegion: 'us-east-1', cloudLocationRole: 'arn:cloud:iam::123456789012:role/grants', cloudLocationPath: 's3://store/data', authenticationType: 'auto' },
    });
    expect((await r.api.getIntegration(id)).status).toBe('editing');
    proxy.cut = (line) => {
      if (line.startsWith(`GET /integrations/${id}/`)) r.sandbox.setStuckTransitions(false);
      return false;
    };
    const next = await run();
    expect(next.plan!.changes).toEqual([expect.objectContaining({ name: 'store', action: 'settle' })]);
    expect(next.ok).toBe(false);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'store', action: 'settle', result: 'failed', code: ErrorCode.statusError })]);
    const error = next.outcomes[0]!.error!;
    expect(error).toMatch(/ended in status editError/);
    expect(error).not.toMatch(/an earlier run sent/);
    expect(error).toMatch(/not sent by this run/);
  });
});

describe('a data source create whose answer was lost', () => {
  it("the next run records the data source with its identity: once its id is given to another team's data source, a prune never deletes that one", async () => {
    await r.close();
    await client.close();
    await proxy.close();
    await start(['reuse-ids']);
    await r.write('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
    await r.write('events.yaml', dataSourceManifest('events', 'raw', 's3://raw.example.com/base/events'));
    // the POST is carried out and its answer lost, and so is the client's look-up right after it
    let posted = false;
    proxy.cut = (line) => {
      if (line === 'POST /native-s3/handler') return (posted = true);
      return posted && line === 'GET /native-s3/handler';
    };
    const lost = await run();
    expect(lost.ok).toBe(false);
    expect(proxy.requests).toContain('POST /native-s3/handler cut');
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'events', id: '', pending: 'create' }));
    proxy.cut = () => false;
    const next = await run();
    expect(next.ok, next.error).toBe(true);
    const ours = (await r.api.listDataSources())[0]!;
    const raw = (await r.state()).resources.find((e) => e.name === 'raw')!.id;
    expect((await r.state()).resources.find((e) => e.name === 'events')).toMatchObject({ id: ours.id, identity: `${raw}|s3://raw.example.com/base/events` });
    // Someone removes it; another team's data source gets its id back.
    await r.api.deleteDataSource(ours.id);
    const theirs = await r.api.createIntegration({
      type: 'object_store', autoBootstrap: false,
      config: { name: 'theirs', cloudAccountId: '123456789012', cloudRegion: 'us-east-1', cloudLocationRole: 'arn:cloud:iam::123456789012:role/grants', cloudLocationPath: 's3://theirs.example.com/base/', authenticationType: 'auto' },
    });
    clock.advance(1_000); // (enabled)
    const outsider = (await r.api.createDataSources(theirs.id, [{ dataSourceName: 'their-a', prefix: 's3://theirs.example.com/base/a' }]))[0]!;
    expect(outsider.id).toBe(ours.id);
    // events' manifest is removed: a prune must not delete what its recorded id names now
    await r.remove('events.yaml');
    proxy.requests.length = 0;
    const pruned = await run({ prune: true });
    expect(pruned.ok, pruned.error).toBe(true);
    expect(proxy.requests.filter((l) => l.startsWith('DELETE'))).toEqual([]);
    expect((await r.api.listDataSources()).map((d) => d.id)).toEqual([outsider.id]);
    expect((await r.state()).resources.map((e) => e.name)).toEqual(['raw']);
  });
});

/**
 * A data source `events` under an object_store `raw`, registered, then its manifest removed and `--prune` run with the
 * first DELETE (the service's soft delete) carried out and its answer lost; the proxy lets everything through again.
 */
async function dataSourceDeleteAnswerLost(): Promise<{ id: string; events: string }> {
  await r.write('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
  const events = dataSourceManifest('events', 'raw', 's3://raw.example.com/base/events');
  await r.write('events.yaml', events);
  const created = await run();
  expect(created.ok, created.error).toBe(true);
  const id = (await r.state()).resources.find((e) => e.name === 'events')!.id;
  await r.remove('events.yaml');
  proxy.cut = (line) => line === `DELETE /dataSource/${id}`;
  expect((await run({ prune: true })).ok).toBe(false);
  proxy.cut = () => false;
  return { id, events };
}

describe('a data source delete whose first answer was lost', () => {
  it('the service only soft-deleted it (still listed, marked deleted): the next run finishes the delete, nothing left behind', async () => {
    // the first DELETE (the soft delete) is carried out and its answer lost: the second, hard delete is never sent
    const { id } = await dataSourceDeleteAnswerLost();
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'events', id, pending: 'delete' }));
    expect(r.sandbox.dataSources.get(Number(id))?.deletedAt).toBeDefined();
    proxy.requests.length = 0;
    const next = await run({ prune: true });
    expect(next.ok, next.error).toBe(true);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'events', action: 'delete', result: 'ok' })]);
    expect(proxy.requests.filter((l) => l.startsWith('DELETE '))).toContain(`DELETE /dataSource/${id}`);
    expect(r.sandbox.dataSources.get(Number(id))).toBeUndefined();
    expect((await r.state()).resources.map((e) => e.name)).toEqual(['raw']);
    // and then nothing to do
    proxy.requests.length = 0;
    const after = await run({ prune: true });
    expect(after.ok, after.error).toBe(true);
    expect(after.outcomes).toEqual([]);
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
  });

  it('a next run without --prune keeps the intent (the record is listed again, a prune candidate); a later --prune finishes it', async () => {
    const { id } = await dataSourceDeleteAnswerLost();
    for (let i = 0; i < 2; i++) {
      const kept = await run();
      expect(kept.ok, kept.error).toBe(true);
      expect(kept.plan!.warnings.map((w) => w.code)).toEqual(['orphan']);
      expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'events', id, pending: 'delete' }));
    }
    const pruned = await run({ prune: true });
    expect(pruned.ok, pruned.error).toBe(true);
    expect(r.sandbox.dataSources.get(Number(id))).toBeUndefined();
    expect((await r.state()).resources.map((e) => e.name)).toEqual(['raw']);
  });

  it('the manifest put back meanwhile: the half-done delete is finished and the data source registered again (never "in sync" while disabled)', async () => {
    const { id, events } = await dataSourceDeleteAnswerLost();
    await r.write('events.yaml', events);
    const back = await run();
    expect(back.ok, back.error).toBe(true);
    expect(back.plan!.changes.find((c) => c.name === 'events')).toMatchObject({ action: 'replace', liveId: id, reasons: [expect.objectContaining({ code: 'soft-deleted' })] });
    const listed = await r.api.listDataSources();
    expect(listed.map((d) => d.prefix)).toEqual(['s3://raw.example.com/base/events']);
    expect(r.sandbox.dataSources.get(Number(id))).toBeUndefined();
    expect((await r.state()).resources.find((e) => e.name === 'events')).toMatchObject({ id: listed[0]!.id });
    expect((await r.state()).resources.find((e) => e.name === 'events')!.pending).toBeUndefined();
    const after = await run();
    expect(after.ok, after.error).toBe(true);
    expect(after.outcomes).toEqual([]);
  });
});

describe('an integration create whose answer was lost, while the list lags behind writes', () => {
  it('the next run does not take its own create for one that never landed: recorded as created, never adopted (--no-adopt)', async () => {
    await r.close();
    await client.close();
    await proxy.close();
    await start(['list-lag']);
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    // the POST is carried out and its answer lost; the client's look-up right after it does not get through
    let posted = false;
    proxy.cut = (line) => {
      if (line === 'POST /integrations') return (posted = true);
      return posted && line === 'GET /integrations' ? 'unsent' : false;
    };
    const lost = await run({ noAdopt: true });
    expect(lost.ok).toBe(false);
    expect((await r.state()).resources).toEqual([expect.objectContaining({ name: 'store', id: '', pending: 'create' })]);
    proxy.cut = () => false;
    // The next run's list lags (it leaves the new integration out): the create is planned again and refused (409, one
    // per natural key), and the intent is kept, not taken for one that never landed.
    const soon = await run({ noAdopt: true });
    expect(soon.outcomes.map((o) => [o.name, o.result, o.code])).toEqual([['store', 'failed', ErrorCode.conflictPersists]]);
    expect(proxy.requests.filter((l) => l.startsWith('POST /integrations ') || l === 'POST /integrations')).toEqual(['POST /integrations cut']);
    expect((await r.state()).resources).toEqual([expect.objectContaining({ name: 'store', id: '', pending: 'create' })]);
    // Once listed, it is govops' own create: recorded as created (--no-adopt does not block it), nothing sent.
    const next = await run({ noAdopt: true });
    expect(next.ok, next.error).toBe(true);
    const live = await r.api.listIntegrations();
    expect(live).toHaveLength(1);
    expect((await r.state()).resources).toEqual([expect.objectContaining({ name: 'store', id: live[0]!.id, origin: 'created' })]);
    expect(proxy.requests.filter((l) => l.startsWith('POST /integrations ') || l === 'POST /integrations')).toEqual(['POST /integrations cut']);
  });
});

describe('an update whose answer was lost', () => {
  it('the next run sends it again (the new credential is not recorded before it is known applied), then writes nothing', async () => {
    r.env.GOVOPS_SECRET_LAKE_TOKEN = 'token-one';
    await r.write('lake.yaml', lakeManifest('lake', 'lake.example.com'));
    expect((await run()).ok).toBe(true);
    const before = (await r.state()).resources[0]!;
    r.env.GOVOPS_SECRET_LAKE_TOKEN = 'token-two';
    proxy.cut = (line) => line === `PUT /integrations/${before.id}`;
    const lost = await run();
    expect(lost.ok).toBe(false);
    expect((await r.state()).resources[0]!.secretFingerprints).toEqual(before.secretFingerprints);
    proxy.cut = () => false;
    proxy.requests.length = 0;
    const next = await run();
    expect(next.ok, next.error).toBe(true);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'lake', action: 'update', result: 'ok' })]);
    expect((await r.state()).resources[0]!.secretFingerprints).not.toEqual(before.secretFingerprints);
    proxy.requests.length = 0;
    const after = await run();
    expect(after.ok, after.error).toBe(true);
    expect(after.outcomes).toEqual([]);
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
  });
});

describe('an update whose answer was lost, still editing when the next run looks', () => {
  it('the next run finds the new value live, waits for the edit to settle (nothing sent) and records the manifest as applied', async () => {
    r.env.GOVOPS_SECRET_LAKE_TOKEN = 'token-one';
    await r.write('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/1'));
    expect((await run()).ok).toBe(true);
    const before = (await r.state()).resources[0]!;
    await r.write('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    r.sandbox.setStuckTransitions(['editing']);
    proxy.cut = (line) => line === `PUT /integrations/${before.id}`;
    expect((await run()).ok).toBe(false);
    expect((await r.api.getIntegration(before.id)).status).toBe('editing');
    proxy.cut = (line) => {
      if (line.startsWith(`GET /integrations/${before.id}/`)) r.sandbox.setStuckTransitions(false);
      return false;
    };
    proxy.requests.length = 0;
    const next = await run();
    expect(next.ok, next.error).toBe(true);
    expect(next.plan!.changes).toEqual([expect.objectContaining({ name: 'lake', action: 'settle', changes: [] })]);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'lake', action: 'settle', result: 'ok' })]);
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
    expect((await r.api.getIntegration(before.id)).status).toBe('enabled');
    expect((await r.state()).resources[0]!.specHash).not.toBe(before.specHash);
  });
});

describe('a webhook delete whose answer was lost', () => {
  it('the next run drops the entry: not re-created, not reported as gone by someone else', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false));
    expect((await run()).ok).toBe(true);
    const id = (await r.state()).resources.find((e) => e.name === 'hook')!.id;
    await r.remove('hook.yaml');
    proxy.cut = (line) => line === `DELETE /webhooks/${id}`;
    const lost = await run({ prune: true });
    expect(lost.ok).toBe(false);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'hook', pending: 'delete' }));
    proxy.cut = () => false;
    proxy.requests.length = 0;
    const next = await run({ prune: true });
    expect(next.ok, next.error).toBe(true);
    expect(next.outcomes).toEqual([]);
    expect(next.plan!.warnings).toEqual([]);
    expect(proxy.requests.filter((l) => !l.startsWith('GET '))).toEqual([]);
    expect((await r.state()).resources.map((e) => e.name)).toEqual(['store']);
    expect(await r.api.listWebhooks()).toEqual([]);
  });
});

describe('a replace whose delete answer was lost', () => {
  it('the next run finds the old integration still deleting, waits for it, and creates the new one', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false));
    expect((await run()).ok).toBe(true);
    const id = (await r.state()).resources.find((e) => e.name === 'store')!.id;
    // cloudLocationPath is not editable: a replace
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/moved'));
    r.sandbox.setStuckTransitions(['deleting']);
    proxy.cut = (line) => line === `DELETE /integrations/${id}`;
    const lost = await run({ allowReplace: true });
    expect(lost.ok).toBe(false);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'store', id, pending: 'delete' }));
    proxy.cut = (line) => {
      if (line.startsWith(`DELETE /integrations/${id}`)) r.sandbox.setStuckTransitions(false);
      return false;
    };
    const next = await run({ allowReplace: true });
    expect(next.ok, next.error).toBe(true);
    const live = await r.api.listIntegrations();
    expect(live.map((i) => i.config.cloudLocationPath)).toEqual(['s3://store/moved']);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'store', id: live[0]!.id, origin: 'created' }));
  });
});

describe('a dry run whose answer was lost', () => {
  it('the real call is never sent without the dry run\'s answer, and no intent is recorded', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    proxy.cut = (line) => line === 'POST /integrations?dryRun=true';
    const lost = await run();
    expect(lost.ok).toBe(false);
    expect(proxy.requests.filter((l) => l.startsWith('POST '))).toEqual(['POST /integrations?dryRun=true cut']);
    expect((await r.state()).resources).toEqual([]);
    expect(await r.api.listIntegrations()).toEqual([]);
  });
});
