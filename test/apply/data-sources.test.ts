/**
 * Data sources through the real reconcile engine against the sandbox over HTTP: ordering (after the
 * integration on create, before it on delete), one create request per integration, adoption, drift, prune,
 * the mass-deletion guard, interrupted runs, and a service without data sources.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Ledger } from '../../src/apply/ledger.js';
import type { Plan } from '../../src/plan/types.js';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';
import { rig, type Rig } from './inproc.js';

let w: Rig | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const acting = (plan: Plan | undefined) => (plan?.changes ?? []).filter((c) => c.action !== 'noop' || c.adopt).map((c) => `${c.action} ${c.resourceKind}/${c.name}${c.blocked ? ' (blocked)' : ''}`);
const writes = (r: Rig) => r.lines().filter((l) => !l.startsWith('GET ') && !l.includes('dryRun=true'));

describe('data sources through the engine', () => {
  it('created with their integration in one revision: after it is enabled, in one request; then a no-op', async () => {
    w = await rig({ transitionMs: 30 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('ds.yaml', [source('events', 'raw', 's3://raw/events'), source('logs', 'raw', 's3://raw/logs/*')].join('---\n'));
    const first = await w.run();
    expect(first.ok, first.error).toBe(true);
    expect(acting(first.plan)).toEqual(['create Integration/raw', 'create DataSource/events', 'create DataSource/logs']);
    expect(writes(w)).toEqual(['POST /integrations 200', 'POST /native-s3/handler 200']);
    const lines = w.lines();
    // the data sources were registered only after the status poll saw the integration enabled
    expect(lines.indexOf('POST /native-s3/handler 200')).toBeGreaterThan(lines.lastIndexOf(lines.filter((l) => l.startsWith('GET /integrations/1/status'))[0]!));
    const live = w.sandbox.dataSources.list();
    expect(live.map((d) => [d.dataSourceName, d.prefix, d.integrationId])).toEqual([
      ['events', 's3://raw/events', 1],
      ['logs', 's3://raw/logs/*', 1],
    ]);
    const state = await w.state();
    expect(state.resources.filter((r) => r.kind === 'DataSource').map((r) => [r.name, r.id, r.pending])).toEqual([
      ['events', String(live[0]!.id), undefined],
      ['logs', String(live[1]!.id), undefined],
    ]);
    w.sandbox.clearRequests();
    const again = await w.run();
    expect(again.ok).toBe(true);
    expect(again.changed).toBe(false);
    expect(writes(w)).toEqual([]);
  });

  it('a data source finds its integration\'s id by name in the ledger: copies of the whole state do not grow with the data sources (issue #26)', async () => {
    // Each data source used to copy the whole state (`ledger.current`) and search it: quadratic at 10,000 + 10,000.
    const copies = async (n: number): Promise<number> => {
      w = await rig({ transitionMs: 10 });
      await w.write('store.yaml', store('raw', 's3://raw/'));
      await w.write('ds.yaml', Array.from({ length: n }, (_, i) => source(`ds-${i}`, 'raw', `s3://raw/p${i}/`)).join('---\n'));
      const spy = vi.spyOn(Ledger.prototype, 'current', 'get');
      try {
        const r = await w.run();
        expect(r.ok, r.error).toBe(true);
        expect(w.sandbox.dataSources.size).toBe(n);
        expect((await w.state()).resources.filter((e) => e.kind === 'DataSource' && e.id !== '' && !e.pending)).toHaveLength(n);
        return spy.mock.calls.length;
      } finally {
        spy.mockRestore();
        await w.close();
        w = undefined;
      }
    };
    expect(await copies(8)).toBe(await copies(1));
  });

  it('adds and removes prefixes; removing needs --prune; the guard counts data sources', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    await w.write('b.yaml', source('b', 'raw', 's3://raw/b'));
    expect((await w.run()).ok).toBe(true);
    await w.write('c.yaml', source('c', 'raw', 's3://raw/c'));
    await w.remove('b.yaml');
    w.sandbox.clearRequests();
    const noPrune = await w.run();
    expect(acting(noPrune.plan)).toEqual(['create DataSource/c']);
    expect(noPrune.plan!.warnings.map((w) => w.message)).toContain('DataSource/b is managed by govops but has no manifest: run with --prune to delete it');
    const pruned = await w.run({ prune: true });
    expect(pruned.ok, pruned.error).toBe(true);
    expect(acting(pruned.plan)).toEqual(['delete DataSource/b']);
    expect(w.sandbox.dataSources.list().map((d) => d.dataSourceName)).toEqual(['a', 'c']); // b hard-deleted, not only disabled
    // Two DELETEs: the first disables, the second removes.
    expect(writes(w).filter((l) => l.startsWith('DELETE'))).toEqual(['DELETE /dataSource/2 200', 'DELETE /dataSource/2 200']);
    expect((await w.state()).resources.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(['DataSource/a', 'DataSource/c', 'Integration/raw']);
    // the guard: removing both data sources of 3 managed resources is more than 25%
    await w.remove('a.yaml');
    await w.remove('c.yaml');
    const guarded = await w.run({ prune: true });
    expect(guarded.plan!.deletionRefusal?.rule).toBe('share');
    expect(acting(guarded.plan)).toEqual(['delete DataSource/a (blocked)', 'delete DataSource/c (blocked)']);
    expect(w.sandbox.dataSources.size).toBe(2);
  });

  it('a name still held by a suspended data source whose manifest is gone: the create is blocked in the plan, nothing is sent', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    const suspended = source('old', 'raw', 's3://raw/old', 'shared').replace('  name: old\n', '  name: old\n  annotations:\n    govops/suspend: "true"\n');
    await w.write('old.yaml', source('old', 'raw', 's3://raw/old', 'shared'));
    expect((await w.run()).ok).toBe(true);
    await w.write('old.yaml', suspended);
    expect((await w.run()).ok).toBe(true);
    await w.remove('old.yaml');
    await w.write('new.yaml', source('new', 'raw', 's3://raw/new', 'shared'));
    w.sandbox.clearRequests();
    const r = await w.run({ prune: true });
    // the suspended one is never pruned, so its name stays taken: sending the create would be refused (409)
    expect(acting(r.plan)).toEqual(['create DataSource/new (blocked)']);
    expect(r.plan!.changes.find((c) => c.name === 'new')!.blocked).toMatchObject({ code: 'name-taken' });
    expect(writes(w)).toEqual([]);
    expect(w.sandbox.dataSources.list().map((d) => [d.dataSourceName, d.prefix])).toEqual([['shared', 's3://raw/old']]);
  });

  it('renaming a data source replaces it (no update endpoint)', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a', 'alpha'));
    expect((await w.run()).ok).toBe(true);
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a', 'beta'));
    const r = await w.run();
    expect(r.ok, r.error).toBe(true);
    expect(r.plan!.changes.find((c) => c.name === 'a')).toMatchObject({ action: 'replace', changes: [{ path: 'dataSourceName', before: 'alpha', after: 'beta' }] });
    expect(w.sandbox.dataSources.list().map((d) => [d.dataSourceName, d.prefix])).toEqual([['beta', 's3://raw/a']]);
    expect((await w.run()).changed).toBe(false);
  });

  it('another prefix or another integration in a managed manifest is another data source: replaced, never left in place as a no-op', async () => {
    // Matched by its recorded id, the old data source used to be a no-op: the manifest's prefix or integration was
    // never registered, the old one stayed, and the plan said in sync.
    w = await rig({ transitionMs: 10 });
    await w.write('raw.yaml', store('raw', 's3://raw/'));
    await w.write('other.yaml', store('other', 's3://other/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    expect((await w.run()).ok).toBe(true);
    const ids = new Map((await w.state()).resources.filter((x) => x.kind === 'Integration').map((x) => [x.name, Number(x.id)]));
    const liveNow = () => w!.sandbox.dataSources.list().filter((d) => d.deletedAt === undefined).map((d) => [d.integrationId, d.prefix, d.dataSourceName]);

    await w.write('a.yaml', source('a', 'raw', 's3://raw/b'));
    const moved = await w.run();
    expect(moved.ok, moved.error).toBe(true);
    expect(moved.plan!.changes.find((c) => c.name === 'a')).toMatchObject({ action: 'replace', changes: [{ path: 'prefix', before: 's3://raw/a', after: 's3://raw/b', forcesReplace: true }] });
    expect(liveNow()).toEqual([[ids.get('raw'), 's3://raw/b', 'a']]);
    expect((await w.run()).changed).toBe(false);

    await w.write('a.yaml', source('a', 'other', 's3://other/b'));
    const across = await w.run();
    expect(across.ok, across.error).toBe(true);
    expect(across.plan!.changes.find((c) => c.name === 'a')).toMatchObject({
      action: 'replace',
      integration: { name: 'other', liveId: String(ids.get('other')) },
      changes: [
        { path: 'integration', before: 'raw', after: 'other' },
        { path: 'prefix', before: 's3://raw/b', after: 's3://other/b' },
      ],
    });
    expect(liveNow()).toEqual([[ids.get('other'), 's3://other/b', 'a']]);
    expect((await w.run()).changed).toBe(false);

    // to an integration this revision creates: registered once it is enabled, the old one deleted
    await w.write('new.yaml', store('fresh', 's3://fresh/'));
    await w.write('a.yaml', source('a', 'fresh', 's3://fresh/b'));
    const toNew = await w.run();
    expect(toNew.ok, toNew.error).toBe(true);
    const freshId = Number((await w.state()).resources.find((x) => x.kind === 'Integration' && x.name === 'fresh')!.id);
    expect(liveNow()).toEqual([[freshId, 's3://fresh/b', 'a']]);
    expect((await w.run()).changed).toBe(false);
  });

  it('renaming a data source to a name another data source of its integration holds: blocked in the plan, nothing deleted', async () => {
    // The rename is a replace (delete, then create): the name check of a create was not made, so govops deleted its
    // data source and the service then refused the new one (409): the data source was gone, its replacement never made.
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a', 'alpha'));
    expect((await w.run()).ok).toBe(true);
    const rawId = (await w.state()).resources.find((x) => x.kind === 'Integration')!.id;
    await w.api.createDataSources(rawId, [{ dataSourceName: 'beta', prefix: 's3://raw/by-hand' }]);
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a', 'beta'));
    w.sandbox.clearRequests();
    const r = await w.run();
    expect(r.ok).toBe(false);
    const change = r.plan!.changes.find((c) => c.name === 'a')!;
    expect(change).toMatchObject({ action: 'replace', blocked: { code: 'name-taken' } });
    expect(change.blocked!.message).toMatch(/^the name beta is taken by data source \d+ \(s3:\/\/raw\/by-hand\) of Integration\/raw, which govops does not delete/);
    expect(writes(w)).toEqual([]);
    expect(w.sandbox.dataSources.list().filter((d) => d.deletedAt === undefined).map((d) => [d.dataSourceName, d.prefix])).toEqual([
      ['alpha', 's3://raw/a'],
      ['beta', 's3://raw/by-hand'],
    ]);
  });

  it('renaming a data source to the name of one this plan prunes: the replace waits for that delete', async () => {
    // A create waited for the deletes of its integration's data sources, a replace did not: its create half could
    // run before the prune freed the name, and the service refused it (409) after the replace had deleted its own.
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a', 'alpha'));
    await w.write('b.yaml', source('b', 'raw', 's3://raw/b', 'beta'));
    expect((await w.run()).ok).toBe(true);
    const bId = (await w.state()).resources.find((x) => x.name === 'b')!.id;
    await w.remove('b.yaml');
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a', 'beta'));
    // the prune's delete is slow: without the order, the replace's create half goes first
    w.sandbox.faults.add({ type: 'latency', method: 'DELETE', path: `/dataSource/${bId}`, latencyMs: 300 });
    const r = await w.run({ prune: true });
    expect(r.ok, r.error).toBe(true);
    expect(w.sandbox.dataSources.list().filter((d) => d.deletedAt === undefined).map((d) => [d.dataSourceName, d.prefix])).toEqual([['beta', 's3://raw/a']]);
    w.sandbox.faults.clear();
    expect((await w.run({ prune: true })).changed).toBe(false);
  });

  it('adopts a data source that exists in the service; a different name needs --allow-replace', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    expect((await w.run()).ok).toBe(true);
    const id = w.sandbox.integrations.snapshot().integrations[0]!.id;
    await w.api.createDataSources(String(id), [
      { dataSourceName: 'events', prefix: 's3://raw/events' },
      { dataSourceName: 'other', prefix: 's3://raw/other' },
    ]);
    await w.write('ds.yaml', [source('events', 'raw', 's3://raw/events'), source('other', 'raw', 's3://raw/other', 'renamed')].join('---\n'));
    w.sandbox.clearRequests();
    const r = await w.run();
    expect(acting(r.plan)).toEqual(['adopt DataSource/events', 'replace DataSource/other (blocked)']);
    expect(r.plan!.changes.find((c) => c.name === 'events')!.reasons.map((r) => r.message).join(' ')).toMatch(/not in govops state: adopted/);
    expect(writes(w)).toEqual([]);
    expect((await w.state()).resources.find((r) => r.name === 'events')).toMatchObject({ kind: 'DataSource', origin: 'adopted' });
    const allowed = await w.run({ allowReplace: true });
    expect(allowed.ok, allowed.error).toBe(true);
    expect(w.sandbox.dataSources.list().map((d) => d.dataSourceName).sort()).toEqual(['events', 'renamed']);
  });

  it('an adopted data source deleted out of band, its id given to another team\'s: left alone, the manifest\'s created again', async () => {
    // An adoption recorded no identity (a create did): the record's id, reused by a data source of another
    // integration, was taken for the manifest's own and its manifest never registered again (a no-op).
    w = await rig({ transitionMs: 10, behaviours: ['reuse-ids'] });
    await w.write('raw.yaml', store('raw', 's3://raw/'));
    await w.write('theirs.yaml', store('theirs', 's3://theirs/'));
    expect((await w.run()).ok).toBe(true);
    const ids = new Map((await w.state()).resources.map((x) => [x.name, x.id]));
    const [made] = await w.api.createDataSources(ids.get('raw')!, [{ dataSourceName: 'events', prefix: 's3://raw/events' }]);
    await w.write('events.yaml', source('events', 'raw', 's3://raw/events'));
    expect(acting((await w.run()).plan)).toEqual(['adopt DataSource/events']);
    expect((await w.state()).resources.find((x) => x.name === 'events')).toMatchObject({ id: made!.id, identity: `${ids.get('raw')}|s3://raw/events` });
    await w.api.deleteDataSource(made!.id);
    const [outsider] = await w.api.createDataSources(ids.get('theirs')!, [{ dataSourceName: 'their-events', prefix: 's3://theirs/events' }]);
    expect(outsider!.id).toBe(made!.id);
    w.sandbox.clearRequests();
    const r = await w.run({ prune: true });
    expect(r.ok, r.error).toBe(true);
    expect(writes(w).filter((l) => l.startsWith('DELETE'))).toEqual([]);
    const live = w.sandbox.dataSources.list().filter((d) => d.deletedAt === undefined).map((d) => [String(d.integrationId), d.prefix]);
    expect(live).toEqual([
      [ids.get('theirs'), 's3://theirs/events'],
      [ids.get('raw'), 's3://raw/events'],
    ]);
    expect((await w.run({ prune: true })).changed).toBe(false);
  });

  it('drift: a data source deleted out of band is created again', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    expect((await w.run()).ok).toBe(true);
    const [d] = w.sandbox.dataSources.list();
    w.sandbox.dataSources.delete(d!); // soft delete: still listed, as deleted
    const plan = await w.run({ apply: false });
    expect(acting(plan.plan)).toEqual(['create DataSource/a']);
    expect(plan.plan!.changes[1]!.reasons.map((r) => r.message)).toContain(`recorded id ${d!.id} no longer exists in the service`);
    expect((await w.run()).ok).toBe(true);
    expect(w.sandbox.dataSources.list().filter((x) => x.deletedAt === undefined).map((x) => x.prefix)).toEqual(['s3://raw/a']);
  });

  it('deleting the integration with its data sources: the data sources first, then the integration', async () => {
    w = await rig({ transitionMs: 20 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('ds.yaml', [source('a', 'raw', 's3://raw/a'), source('b', 'raw', 's3://raw/b')].join('---\n'));
    await w.write('keep.yaml', store('keep', 's3://keep/'));
    await w.write('k1.yaml', source('k1', 'keep', 's3://keep/1'));
    await w.write('k2.yaml', source('k2', 'keep', 's3://keep/2'));
    expect((await w.run()).ok).toBe(true);
    const rawId = (await w.state()).resources.find((x) => x.kind === 'Integration' && x.name === 'raw')!.id;
    await w.remove('store.yaml');
    await w.remove('ds.yaml');
    w.sandbox.clearRequests();
    const r = await w.run({ prune: true, maxDeletes: 3 });
    expect(r.ok, r.error).toBe(true);
    expect(acting(r.plan)).toEqual(['delete Integration/raw', 'delete DataSource/a', 'delete DataSource/b']);
    const order = writes(w).filter((l) => l.startsWith('DELETE'));
    expect(order.slice(0, 4).every((l) => l.startsWith('DELETE /dataSource/'))).toBe(true);
    expect(order[4]).toBe(`DELETE /integrations/${rawId} 200`);
    expect(w.sandbox.dataSources.list().map((d) => d.prefix)).toEqual(['s3://keep/1', 's3://keep/2']);
    expect((await w.state()).resources.map((x) => x.name).sort()).toEqual(['k1', 'k2', 'keep']);
  });

  it('a DataSource whose integration this plan deletes is a plan error', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    expect((await w.run()).ok).toBe(true);
    await w.write('store.yaml', store('raw', 's3://raw/').replace('  name: raw\nspec', '  name: raw\n  annotations:\n    govops/delete: "true"\nspec'));
    const r = await w.run({ prune: true });
    expect(r.ok).toBe(false);
    expect(r.plan!.errors).toEqual(['DataSource/a is registered under Integration/raw, which this plan deletes: remove the DataSource manifest (or mark it govops/delete) too']);
  });

  it('replacing the integration registers its data sources again under the new one', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    expect((await w.run()).ok).toBe(true);
    await w.write('store.yaml', store('raw', 's3://raw/').replace('cloudAccountId: "123456789012"', 'cloudAccountId: "999999999999"'));
    const blocked = await w.run({ apply: false });
    expect(acting(blocked.plan)).toEqual(['replace Integration/raw (blocked)']);
    const r = await w.run({ allowReplace: true });
    expect(r.ok, r.error).toBe(true);
    expect(acting(r.plan)).toEqual(['replace Integration/raw', 'create DataSource/a']);
    expect(r.plan!.changes[1]!.reasons.map((r) => r.message).join(' ')).toMatch(/is replaced and the service deletes its data sources with it/);
    const live = w.sandbox.dataSources.list();
    expect(live.map((d) => [d.integrationId, d.prefix])).toEqual([[2, 's3://raw/a']]);
    expect((await w.run()).changed).toBe(false);
  });

  it('an integration not enabled: the data source waits (blocked while the plan does not wait for it), the next run registers it', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    expect((await w.run()).ok).toBe(true);
    w.sandbox.setStuckTransitions(['editing']);
    await w.write('store.yaml', store('raw', 's3://raw/').replace('us-east-1', 'eu-west-1'));
    const edit = await w.run({ timeoutMs: 300 });
    expect(edit.ok).toBe(false); // the update does not settle
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    await w.write('store.yaml', store('raw', 's3://raw/').replace('us-east-1', 'eu-west-1'));
    const waiting = await w.run({ apply: false });
    // govops' own edit, still going on: the plan waits for it (settle), and registers the data source after that
    expect(waiting.plan!.changes.map((c) => [c.name, c.action, c.blocked?.message])).toEqual([['raw', 'settle', undefined], ['a', 'create', undefined]]);
    // ... unless the plan leaves the integration out (--only)
    const only = await w.run({ apply: false, only: ['DataSource/a'] });
    expect(only.plan!.changes.find((c) => c.name === 'a')!.blocked?.message).toBe(
      'waits for Integration/raw (settle: status editing: waited for until the service settles it (nothing to send)), which this targeted plan leaves out: add --only Integration/raw',
    );
    w.sandbox.setStuckTransitions(false);
    w.sandbox.finishTransitions();
    const later = await w.run();
    expect(later.ok, later.error).toBe(true);
    expect(w.sandbox.dataSources.size).toBe(1);
  });

  it('--only DataSource/NAME under an integration in createError: blocked in the plan, nothing sent, until the fix is targeted too', async () => {
    // Before, the create was kept (the integration's live id is known) without the PUT that fixes the integration:
    // the data source was sent to an integration in createError and the service refused it (409).
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/').replace('name: raw\n    cloudAccountId', 'name: raw.late-fail.example\n    cloudAccountId'));
    expect((await w.run()).ok).toBe(false); // create ended in status createError
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    w.sandbox.clearRequests();
    const only = await w.run({ only: ['DataSource/a'] });
    expect(only.ok).toBe(false);
    expect(only.plan!.changes.find((c) => c.name === 'a')!.blocked?.message).toBe(
      'waits for Integration/raw (update: status createError: fixed by PUT), which this targeted plan leaves out: add --only Integration/raw',
    );
    expect(writes(w)).toEqual([]);
    const both = await w.run({ only: ['DataSource/a', 'Integration/raw'] });
    expect(both.ok, both.error).toBe(true);
    expect(writes(w)).toEqual(['PUT /integrations/1 200', 'POST /native-s3/handler 200']);
  });

  it('a service without data sources: one warning, blocked creates, integrations still applied', async () => {
    w = await rig({ transitionMs: 10, behaviours: ['no-data-sources'] });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('ds.yaml', [source('a', 'raw', 's3://raw/a'), source('b', 'raw', 's3://raw/b')].join('---\n'));
    const r = await w.run();
    expect(r.ok).toBe(false);
    expect(r.plan!.warnings.map((w) => w.message)).toEqual([
      'data sources not supported by this service (GET /native-s3/handler answered 404); set --data-sources-path if the service has them elsewhere: 2 DataSource manifests not applied',
    ]);
    expect(acting(r.plan)).toEqual(['create Integration/raw', 'create DataSource/a (blocked)', 'create DataSource/b (blocked)']);
    expect(r.outcomes.map((o) => [o.name, o.result, o.code])).toEqual(
      expect.arrayContaining([
        ['raw', 'ok', undefined],
        ['a', 'skipped', 'GOVOPS_BLOCKED'],
        ['b', 'skipped', 'GOVOPS_BLOCKED'],
      ]),
    );
    expect(w.sandbox.integrations.size).toBe(1);
    expect(w.lines().filter((l) => l.includes('native-s3'))).toEqual(['GET /native-s3/handler 404']);
  });

  it('without DataSource manifests or state entries the data-source list is never asked for', async () => {
    w = await rig({ transitionMs: 10, behaviours: ['no-data-sources'] });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    const r = await w.run();
    expect(r.ok, r.error).toBe(true);
    expect(r.plan!.warnings.map((w) => w.message)).toEqual([]);
    expect(w.lines().some((l) => l.includes('native-s3'))).toBe(false);
  });

  it('an interrupted create is found by (integration, prefix) on the next run', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    expect((await w.run()).ok).toBe(true);
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    w.sandbox.faults.add({ type: 'drop', method: 'POST', path: '/native-s3/handler', count: 10 });
    const failed = await w.run();
    expect(failed.ok).toBe(false);
    // the intent is on disk, the service has nothing: the next run drops the intent and creates it
    expect((await w.state()).resources.find((r) => r.name === 'a')).toMatchObject({ pending: 'create', key: '1|s3://raw/a' });
    w.sandbox.faults.clear();
    const again = await w.run();
    expect(again.ok, again.error).toBe(true);
    expect(w.sandbox.dataSources.size).toBe(1);
    expect((await w.state()).resources.find((r) => r.name === 'a')!.pending).toBeUndefined();
  });

  it('a create that landed before govops stopped is recorded by (integration, prefix), not sent again', async () => {
    w = await rig({ transitionMs: 10 });
    await w.write('store.yaml', store('raw', 's3://raw/'));
    await w.write('a.yaml', source('a', 'raw', 's3://raw/a'));
    expect((await w.run()).ok).toBe(true);
    // as if the POST landed and govops died before the answer: the entry is a pending create without id
    const st = await w.state();
    const entry = st.resources.find((r) => r.name === 'a')!;
    const id = entry.id;
    const { writeFile } = await import('node:fs/promises');
    await writeFile(w.statePath, JSON.stringify({ ...st, resources: st.resources.map((r) => (r.name === 'a' ? { ...r, id: '', pending: 'create', key: `1|s3://raw/a` } : r)) }));
    w.sandbox.clearRequests();
    const again = await w.run();
    expect(again.ok, again.error).toBe(true);
    expect(writes(w)).toEqual([]);
    const resolved = (await w.state()).resources.find((r) => r.name === 'a')!;
    expect(resolved.id).toBe(id);
    expect(resolved.pending).toBeUndefined();
  });
});
