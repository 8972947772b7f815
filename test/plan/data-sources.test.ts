/** Planning data sources (pure) and the apply's task dependencies derived from the plan. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LiveDataSource, LiveWebhook } from '../../src/api/types.js';
import { taskDependencies } from '../../src/apply/dependencies.js';
import type { DataSourceManifest } from '../../src/manifests/types.js';
import { attributeDataSources } from '../../src/plan/data-sources.js';
import { prefixUnderLocation } from '../../src/service/data-sources.js';
import { toDesired } from '../../src/plan/desired.js';
import { compareFacts, planFacts } from '../../src/plan/facts.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredDataSource, DesiredResource, PlanChange, PlanOptions } from '../../src/plan/types.js';
import type { GovopsState, ManagedResource } from '../../src/state/types.js';
import { HASH, KEY, SHAPES, integration, liveOf, owned } from './fixtures.js';

const storeConfig = (name: string, location: string) => ({
  name,
  cloudAccountId: '1',
  cloudRegion: 'r',
  cloudLocationRole: 'role',
  cloudLocationPath: location,
  authenticationType: 'auto',
});
const raw = integration('raw', 'object_store', storeConfig('raw', 's3://raw/'), { autoBootstrap: false });

function ds(name: string, prefix: string, dataSourceName = name, extra: { integration?: string; annotations?: Record<string, string> } = {}): DesiredDataSource {
  const m: DataSourceManifest = {
    apiVersion: 'govops/v1',
    kind: 'DataSource',
    metadata: { name, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { integration: extra.integration ?? 'raw', dataSourceName, prefix },
  };
  return toDesired(m, { file: 'ds.yaml', line: 1, column: 1 }, [], HASH) as DesiredDataSource;
}
const live = (id: string, prefix: string, dataSourceName: string, integrationId = '7'): LiveDataSource => ({ id, integrationId, dataSourceName, prefix });
const mine = (d: DesiredDataSource, id: string, origin: 'created' | 'adopted' = 'created'): ManagedResource => ({
  kind: 'DataSource',
  name: d.name,
  id,
  origin,
  specHash: d.specHash,
  secretFingerprints: {},
  updatedAt: '2026-01-01T00:00:00.000Z',
});
const OPTS: PlanOptions = { prune: false, allowReplace: false };

function plan(desired: DesiredResource[], o: { live?: LiveDataSource[] | undefined; unsupported?: string; state?: ManagedResource[]; options?: Partial<PlanOptions>; rawLive?: boolean; rawStatus?: string } = {}) {
  const state: GovopsState = { version: 1, fingerprintKey: KEY, resources: o.state ?? (o.rawLive === false ? [] : [owned(raw, '7')]) };
  return planChanges({
    desired,
    live: {
      integrations: o.rawLive === false ? [] : [liveOf(raw, '7', o.rawStatus ?? 'enabled')],
      webhooks: [],
      ...('live' in o ? (o.live ? { dataSources: o.live } : {}) : { dataSources: [] }),
      ...(o.unsupported ? { dataSourcesUnsupported: o.unsupported } : {}),
    },
    state,
    options: { ...OPTS, ...o.options },
    shapes: SHAPES,
  });
}
const summary = (changes: readonly PlanChange[]) => changes.map((c) => `${c.action} ${c.resourceKind}/${c.name}${c.blocked ? ' !' : ''}`);

describe('planning data sources', () => {
  it('a new data source under a live, enabled integration: a create carrying the integration and its id', () => {
    const p = plan([raw, ds('a', 's3://raw/a')]);
    expect(summary(p.changes)).toEqual(['noop Integration/raw', 'create DataSource/a']);
    expect(p.changes[1]).toMatchObject({
      integration: { name: 'raw', liveId: '7' },
      changes: [
        { path: 'integration', after: 'raw' },
        { path: 'dataSourceName', after: 'a' },
        { path: 'prefix', after: 's3://raw/a' },
      ],
    });
  });

  it('with a new integration: a create after it (no live id yet)', () => {
    const p = plan([raw, ds('a', 's3://raw/a')], { rawLive: false });
    expect(summary(p.changes)).toEqual(['create Integration/raw', 'create DataSource/a']);
    expect(p.changes[1]!.integration).toEqual({ name: 'raw' });
    expect(p.changes[1]!.reasons.map((r) => r.message)).toEqual(['registered once Integration/raw is created and enabled']);
  });

  it('matched by (integration, prefix): same name is a no-op; not in state is adopted; another name is a replace', () => {
    const a = ds('a', 's3://raw/a');
    expect(summary(plan([raw, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')] }).changes)).toEqual(['noop Integration/raw', 'noop DataSource/a']);
    const adopted = plan([raw, a], { live: [live('1', 's3://raw/a', 'a')] });
    expect(summary(adopted.changes)).toEqual(['noop Integration/raw', 'adopt DataSource/a']);
    const renamed = plan([raw, ds('a', 's3://raw/a', 'alpha')], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')] });
    expect(renamed.changes[1]).toMatchObject({ action: 'replace', liveId: '1', changes: [{ path: 'dataSourceName', before: 'a', after: 'alpha', forcesReplace: true }] });
    const adoptRename = plan([raw, ds('a', 's3://raw/a', 'alpha')], { live: [live('1', 's3://raw/a', 'a')] });
    expect(adoptRename.changes[1]!.blocked?.message).toMatch(/--allow-replace/);
    // the same prefix under another integration is another data source
    expect(summary(plan([raw, a], { live: [live('1', 's3://raw/a', 'a', '8')] }).changes)).toEqual(['noop Integration/raw', 'create DataSource/a']);
  });

  it('records without an integration id are attributed by location (the longest that holds the prefix)', () => {
    const inner = integration('inner', 'object_store', storeConfig('inner', 's3://raw/deep'), { autoBootstrap: false });
    const attributed = attributeDataSources([live('1', 's3://raw/deep/x', 'x', ''), live('2', 's3://raw/y', 'y', ''), live('3', 's3://other/z', 'z', '')], [
      liveOf(raw, '7'),
      liveOf(inner, '9'),
    ]);
    expect(attributed.map((d) => d.integrationId)).toEqual(['9', '7', '']);
    expect(summary(plan([raw, ds('y', 's3://raw/y')], { live: [live('2', 's3://raw/y', 'y', '')] }).changes)).toEqual(['noop Integration/raw', 'adopt DataSource/y']);
  });

  it('an integration create blocked once the plan is final (its unique location taken) blocks the data sources under it', () => {
    // another team's integration holds raw's cloudLocationPath: raw's create is blocked at the end of planning
    const theirs = liveOf(integration('theirs', 'object_store', storeConfig('theirs', 's3://raw/')), '9');
    const p = planChanges({
      desired: [raw, ds('a', 's3://raw/a')],
      live: { integrations: [theirs], webhooks: [], dataSources: [] },
      state: { version: 1, fingerprintKey: KEY, resources: [] },
      options: OPTS,
      shapes: SHAPES,
    });
    expect(p.changes.find((c) => c.name === 'raw')!.blocked?.code).toBe('value-taken');
    // before: a create shown as going ahead, which the apply skipped (nothing sent)
    const a = p.changes.find((c) => c.name === 'a')!;
    expect(a).toMatchObject({ action: 'create', blocked: { code: 'waits-for-integration' } });
    expect(a.blocked!.message).toContain('Integration/raw, which is blocked: config.cloudLocationPath');
  });

  it('an integration not enabled (and not changed by this plan) blocks the create', () => {
    const p = plan([raw, ds('a', 's3://raw/a')], { rawStatus: 'createError' });
    // createError is fixed by a PUT: the create waits for that task, not blocked
    expect(summary(p.changes)).toEqual(['update Integration/raw', 'create DataSource/a']);
    // still editing (govops' own edit): the integration is waited for (settle), and the create after that task
    const editing = plan([raw, ds('a', 's3://raw/a')], { rawStatus: 'editing' });
    expect(summary(editing.changes)).toEqual(['settle Integration/raw', 'create DataSource/a']);
    expect(editing.changes[1]!.blocked).toBeUndefined();
    const deleting = plan([raw, ds('a', 's3://raw/a')], { rawStatus: 'deleting' });
    expect(deleting.changes[1]!.blocked?.message).toBe('Integration/raw is deleting: data sources are registered once it is enabled (the next run does it)');
  });

  it('a name taken by a data source govops does not remove blocks the create; one this plan prunes does not', () => {
    const a = ds('a', 's3://raw/a', 'shared');
    const taken = plan([raw, a], { live: [live('5', 's3://raw/other', 'shared')] });
    expect(taken.changes[1]!.blocked?.message).toBe('the name shared is taken by data source 5 (s3://raw/other) of Integration/raw, which govops does not delete: rename one of them');
    const old = ds('old', 's3://raw/other', 'shared');
    const freed = plan([raw, a], { live: [live('5', 's3://raw/other', 'shared')], state: [owned(raw, '7'), mine(old, '5')], options: { prune: true } });
    expect(summary(freed.changes)).toEqual(['noop Integration/raw', 'create DataSource/a', 'delete DataSource/old']);
    expect(freed.changes[2]!.integration).toEqual({ name: 'raw', liveId: '7' });
  });

  it('orphans: a warning without --prune; deleted (or forgotten when gone) with it', () => {
    const a = ds('a', 's3://raw/a');
    const st = [owned(raw, '7'), mine(a, '1')];
    const warn = plan([raw], { live: [live('1', 's3://raw/a', 'a')], state: st });
    expect(warn.warnings.map((w) => w.message)).toEqual(['DataSource/a is managed by govops but has no manifest: run with --prune to delete it']);
    const prune = plan([raw], { live: [live('1', 's3://raw/a', 'a')], state: st, options: { prune: true } });
    expect(prune.changes[1]).toMatchObject({ action: 'delete', liveId: '1', integration: { name: 'raw', liveId: '7' } });
    const gone = plan([raw], { live: [], state: st, options: { prune: true } });
    expect(gone.changes[1]).toMatchObject({ action: 'delete', goneFromService: true });
  });

  it('govops/delete on a data source: deleted with --prune when owned, never when adopted', () => {
    const a = ds('a', 's3://raw/a', 'a', { annotations: { 'govops/delete': 'true' } });
    expect(plan([raw, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')], options: { prune: true } }).changes[1]).toMatchObject({ action: 'delete', liveId: '1' });
    const notOwned = plan([raw, a], { live: [live('1', 's3://raw/a', 'a')], options: { prune: true } });
    expect(notOwned.changes[1]).toMatchObject({ action: 'noop' });
    expect(notOwned.changes[1]!.reasons.map((r) => r.message)).toContain('not owned by govops (not in state): never deleted');
  });

  it('the integration replaced: its data sources are created again; deleting it warns about data sources govops does not manage', () => {
    const changed = integration('raw', 'object_store', { ...storeConfig('raw', 's3://raw/'), cloudAccountId: '2' }, { autoBootstrap: false });
    const a = ds('a', 's3://raw/a');
    const p = plan([changed, a], { live: [live('1', 's3://raw/a', 'a'), live('2', 's3://raw/x', 'x')], state: [owned(raw, '7'), mine(a, '1')], options: { allowReplace: true } });
    expect(summary(p.changes)).toEqual(['replace Integration/raw', 'create DataSource/a']);
    expect(p.changes[1]!.liveId).toBeUndefined();
    expect(p.changes[1]!.integration).toEqual({ name: 'raw' });
    expect(p.warnings.map((w) => w.message)).toEqual([
      'Integration/raw: the replace also deletes 1 data source govops does not manage (ids 2): the service deletes data sources with their integration',
    ]);
    // not allowed: nothing moves, the data source stays as it is
    expect(summary(plan([changed, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')] }).changes)).toEqual(['replace Integration/raw !', 'noop DataSource/a']);
  });

  it('a managed data source moved to another prefix or integration is a replace of the recorded one (before: a no-op)', () => {
    const a = ds('a', 's3://raw/a');
    const other = integration('other', 'object_store', storeConfig('other', 's3://other/'), { autoBootstrap: false });
    const recorded = { ...mine(a, '1'), identity: '7|s3://raw/a' };
    const st = [owned(raw, '7'), owned(other, '8'), recorded];
    const run = (d: DesiredDataSource, options: Partial<PlanOptions> = {}, o: { otherChanged?: boolean; legacy?: boolean } = {}) =>
      planChanges({
        desired: [raw, o.otherChanged ? integration('other', 'object_store', { ...storeConfig('other', 's3://other/'), cloudAccountId: '2' }, { autoBootstrap: false }) : other, d],
        live: { integrations: [liveOf(raw, '7'), liveOf(other, '8')], webhooks: [], dataSources: [live('1', 's3://raw/a', 'a'), live('2', 's3://other/x', 'b', '8')] },
        state: { version: 1, fingerprintKey: KEY, resources: o.legacy ? [owned(raw, '7'), owned(other, '8'), mine(a, '1')] : st },
        options: { ...OPTS, ...options },
        shapes: SHAPES,
      });
    const prefix = run(ds('a', 's3://raw/b'));
    expect(prefix.changes.find((c) => c.name === 'a')).toMatchObject({ action: 'replace', liveId: '1', integration: { name: 'raw', liveId: '7' }, changes: [{ path: 'prefix', before: 's3://raw/a', after: 's3://raw/b', forcesReplace: true }] });
    const moved = run(ds('a', 's3://other/a', 'a', { integration: 'other' }));
    expect(moved.changes.find((c) => c.name === 'a')).toMatchObject({ action: 'replace', liveId: '1', integration: { name: 'other', liveId: '8' } });
    expect(moved.changes.find((c) => c.name === 'a')!.changes.map((f) => [f.path, f.before, f.after])).toEqual([
      ['integration', 'raw', 'other'],
      ['prefix', 's3://raw/a', 's3://other/a'],
    ]);
    // the name is taken under the integration it moves to
    expect(run(ds('a', 's3://other/a', 'b', { integration: 'other' })).changes.find((c) => c.name === 'a')!.blocked?.code).toBe('name-taken');
    // --no-adopt: nothing is registered under an integration govops does not own
    const unowned = planChanges({
      desired: [raw, other, ds('a', 's3://other/a', 'a', { integration: 'other' })],
      live: { integrations: [liveOf(raw, '7'), liveOf(other, '8')], webhooks: [], dataSources: [live('1', 's3://raw/a', 'a')] },
      state: { version: 1, fingerprintKey: KEY, resources: [owned(raw, '7'), recorded] },
      options: { ...OPTS, noAdopt: true },
      shapes: SHAPES,
    });
    expect(unowned.changes.find((c) => c.name === 'a')!.blocked?.code).toBe('waits-for-integration');
    // moved under an integration this plan replaces: the recorded one is still deleted (before: left live, unrecorded)
    const replaced = run(ds('a', 's3://other/a', 'a', { integration: 'other' }), { allowReplace: true }, { otherChanged: true });
    expect(replaced.changes.find((c) => c.name === 'a')).toMatchObject({ action: 'replace', liveId: '1', integration: { name: 'other' } });
    // a record without an identity (an old state file) proves nothing of the item at its id: never deleted, the
    // manifest's created beside it
    const legacy = run(ds('a', 's3://raw/b'), {}, { legacy: true }).changes.find((c) => c.name === 'a')!;
    expect(legacy).toMatchObject({ action: 'create', integration: { name: 'raw', liveId: '7' } });
    expect(legacy.liveId).toBeUndefined();
    expect(legacy.reasons.map((r) => r.message).join(' ')).toMatch(/recorded id 1 holds a data source at integration 7, prefix s3:\/\/raw\/a.*left alone \(never deleted\)/);
  });

  it('not supported: blocked creates and one warning; orphans are not touched', () => {
    const a = ds('a', 's3://raw/a');
    const p = plan([raw, a, ds('b', 's3://raw/b')], { live: undefined, unsupported: 'data sources not supported by this service (GET /x answered 404)', state: [owned(raw, '7'), mine(ds('old', 's3://raw/o'), '3')], options: { prune: true } });
    expect(summary(p.changes)).toEqual(['noop Integration/raw', 'create DataSource/a !', 'create DataSource/b !']);
    expect(p.warnings.map((w) => w.message)).toEqual(['data sources not supported by this service (GET /x answered 404): 2 DataSource manifests not applied, 1 managed data source not checked']);
    expect(p.dataSourcesUnsupported).toBe('data sources not supported by this service (GET /x answered 404)');
  });

  it('the mass-deletion guard counts data sources among the managed resources', () => {
    const st = [owned(raw, '7'), mine(ds('a', 's3://raw/a'), '1'), mine(ds('b', 's3://raw/b'), '2'), mine(ds('c', 's3://raw/c'), '3')];
    const p = plan([raw], { live: [live('1', 's3://raw/a', 'a'), live('2', 's3://raw/b', 'b'), live('3', 's3://raw/c', 'c')], state: st, options: { prune: true } });
    expect(p.deletionRefusal).toMatchObject({ rule: 'share', refused: 3, managed: 4, limit: 1 });
    expect(p.changes.filter((c) => c.blocked?.message).length).toBe(3);
  });

  it('no data sources in play: nothing planned or asked', () => {
    const p = plan([raw], { live: undefined });
    expect(p.warnings.map((w) => w.message)).toEqual([]);
    expect(p.dataSourcesUnsupported).toBeUndefined();
  });
});

describe('data sources with the operator controls (--only, govops/suspend, state adopt, saved plans)', () => {
  const suspend = { 'govops/suspend': 'true' };

  it('--only accepts the DataSource kind; a create kept without its new integration is blocked, naming the pattern to add', () => {
    const a = ds('a', 's3://raw/a');
    const alone = plan([raw, a], { rawLive: false, options: { only: ['DataSource/a'] } });
    expect(summary(alone.changes)).toEqual(['create DataSource/a !']);
    expect(alone.changes[0]!.blocked?.message).toBe('waits for Integration/raw (create), which this targeted plan leaves out: add --only Integration/raw');
    expect(alone.targets).toEqual({ only: ['DataSource/a'], untargeted: 1 });
    const both = plan([raw, a], { rawLive: false, options: { only: ['Integration/raw', 'datasource/*'] } });
    expect(summary(both.changes)).toEqual(['create Integration/raw', 'create DataSource/a']);
    // under a live integration the data source needs nothing else
    expect(summary(plan([raw, a], { options: { only: ['DataSource/a'] } }).changes)).toEqual(['create DataSource/a']);
  });

  it('--only naming an integration delete: its managed data sources left out are named in a warning', () => {
    const a = ds('a', 's3://raw/a');
    const p = plan([], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')], options: { prune: true, allowEmpty: true, only: ['Integration/raw'] } });
    expect(summary(p.changes)).toEqual(['delete Integration/raw']);
    expect(p.warnings.map((w) => w.message)).toContain(
      'Integration/raw: its delete also deletes DataSource/a (the service deletes data sources with their integration), left out of this targeted plan: a plan without --only settles them',
    );
  });

  it('--only naming an integration replace: the re-creation of its data sources left out is named in a warning', () => {
    const changed = integration('raw', 'object_store', { ...storeConfig('raw', 's3://raw/'), cloudAccountId: '2' }, { autoBootstrap: false });
    const a = ds('a', 's3://raw/a');
    const p = plan([changed, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')], options: { allowReplace: true, only: ['Integration/raw'] } });
    expect(summary(p.changes)).toEqual(['replace Integration/raw']);
    expect(p.warnings.map((w) => w.message)).toContain(
      'Integration/raw: its replace also deletes DataSource/a (the service deletes data sources with their integration), left out of this targeted plan: a plan without --only settles them',
    );
  });

  it('a suspended integration is left as it is live: its data sources are not re-registered for a replace that does not happen', () => {
    const changed = integration('raw', 'object_store', { ...storeConfig('raw', 's3://raw/'), cloudAccountId: '2' }, { autoBootstrap: false, annotations: suspend });
    const a = ds('a', 's3://raw/a');
    const p = plan([changed, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')], options: { allowReplace: true } });
    expect(summary(p.changes)).toEqual(['noop Integration/raw', 'noop DataSource/a']);
    expect(p.changes[0]!.suspended).toBe(true);
    // a new data source under it is registered under its live id
    const b = ds('b', 's3://raw/b');
    const q = plan([changed, a, b], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')], options: { allowReplace: true } });
    expect(q.changes.find((c) => c.name === 'b')).toMatchObject({ action: 'create', integration: { name: 'raw', liveId: '7' } });
    expect(q.changes.find((c) => c.name === 'b')!.blocked?.message).toBeUndefined();
  });

  it('a suspended data source is a noop; recorded suspended and without its manifest, it is never pruned', () => {
    const a = ds('a', 's3://raw/a', 'alpha', { annotations: suspend });
    const p = plan([raw, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), mine(a, '1')] });
    expect(p.changes[1]).toMatchObject({ action: 'noop', suspended: true });
    expect(p.changes[1]!.reasons.at(-1)?.message).toMatch(/^suspended \(govops\/suspend: "true"\): govops leaves it alone; otherwise it would be replaced \(dataSourceName\)/);
    const gone = plan([raw], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), { ...mine(a, '1'), suspended: true }], options: { prune: true } });
    expect(summary(gone.changes)).toEqual(['noop Integration/raw', 'noop DataSource/a']);
    expect(gone.changes[1]!.suspended).toBe(true);
    // without --prune the warning says it is never pruned while suspended (not "run with --prune to delete it")
    const kept = plan([raw], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), { ...mine(a, '1'), suspended: true }] });
    expect(kept.warnings.map((w) => w.message)).toContain('DataSource/a is managed by govops but has no manifest; it was suspended, so it is never pruned while suspended');
  });

  it('a data source recorded by state adopt is adopted by its id, and never pruned without a manifest', () => {
    const a = ds('a', 's3://raw/a');
    const adopted = { ...mine(a, '1', 'adopted'), explicitAdopt: true, specHash: '' };
    const p = plan([raw, a], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), adopted] });
    expect(p.changes[1]).toMatchObject({ action: 'adopt', liveId: '1', reasons: [{ code: 'adopted', message: 'adopted explicitly (govops state adopt --id 1)' }] });
    const orphan = plan([raw], { live: [live('1', 's3://raw/a', 'a')], state: [owned(raw, '7'), adopted], options: { prune: true } });
    expect(summary(orphan.changes)).toEqual(['noop Integration/raw']);
    expect(orphan.warnings.map((w) => w.message)).toEqual(['DataSource/a was recorded by govops state adopt but has no manifest: never pruned (govops state forget DataSource/a to drop it)']);
  });

  it('saved-plan facts of a data source come from the data sources (not a webhook with the same id), field by field', () => {
    const a = ds('a', 's3://raw/a', 'alpha');
    const st: GovopsState = { version: 1, fingerprintKey: KEY, resources: [owned(raw, '7'), mine(a, '1')] };
    const p = plan([raw, a], { live: [live('1', 's3://raw/a', 'a')], state: st.resources });
    expect(p.changes[1]!.action).toBe('replace');
    const hook = { id: '1', name: 'hook', url: 'https://h.example.com', global: true, notificationType: [], actionType: null } as unknown as LiveWebhook;
    const factsWith = (dsName: string) =>
      planFacts(p, { manifests: [], desired: [raw, a], state: st, live: { integrations: [liveOf(raw, '7')], webhooks: [hook], dataSources: [live('1', 's3://raw/a', dsName)] }, shapes: SHAPES, hashing: HASH });
    const before = factsWith('a');
    expect(Object.keys(before.live['DataSource/a']!.fields!)).toEqual(['dataSourceName', 'integrationId', 'prefix']);
    expect(compareFacts(before, factsWith('a'))).toEqual([]);
    expect(compareFacts(before, factsWith('renamed'))).toEqual(['DataSource/a (id 1) changed in the service since the plan: dataSourceName']);
  });
});

describe('task dependencies', () => {
  const change = (c: Partial<PlanChange> & Pick<PlanChange, 'resourceKind' | 'name' | 'action'>): PlanChange =>
    ({ adopt: false, changes: [], reasons: [], ...c }) as PlanChange;

  it('creates after their integration; creates after the deletes of their integration; the integration delete after its data sources; a task that waits for nothing has no entry', () => {
    const deps = taskDependencies([
      change({ resourceKind: 'Integration', name: 'new', action: 'create' }),
      change({ resourceKind: 'DataSource', name: 'n1', action: 'create', integration: { name: 'new' } }),
      change({ resourceKind: 'DataSource', name: 'k1', action: 'create', integration: { name: 'keep', liveId: '5' } }),
      change({ resourceKind: 'DataSource', name: 'k0', action: 'delete', liveId: '50', integration: { name: 'keep', liveId: '5' } }),
      change({ resourceKind: 'Integration', name: 'gone', action: 'delete', liveId: '6' }),
      change({ resourceKind: 'DataSource', name: 'g1', action: 'delete', liveId: '60', integration: { name: 'gone', liveId: '6' } }),
      change({ resourceKind: 'DataSource', name: 'g2', action: 'delete', liveId: '61', integration: { liveId: '6' } }),
      change({ resourceKind: 'Webhook', name: 'w', action: 'create' }),
    ]);
    expect(Object.fromEntries(deps)).toEqual({
      'DataSource/n1': ['Integration/new'],
      'DataSource/k1': ['DataSource/k0'],
      'Integration/gone': ['DataSource/g1', 'DataSource/g2'],
    });
  });

  it('finds what a task waits for wherever it sits in the plan, in the plan\'s order, per integration', () => {
    const deps = taskDependencies([
      change({ resourceKind: 'DataSource', name: 'a-new', action: 'create', integration: { name: 'a', liveId: '1' } }),
      change({ resourceKind: 'Integration', name: 'b', action: 'replace', liveId: '2' }),
      change({ resourceKind: 'DataSource', name: 'a-old2', action: 'delete', liveId: '11', integration: { liveId: '1' } }),
      change({ resourceKind: 'DataSource', name: 'b-old', action: 'delete', liveId: '21', integration: { name: 'b', liveId: '2' } }),
      change({ resourceKind: 'DataSource', name: 'a-old1', action: 'delete', liveId: '10', integration: { name: 'a', liveId: '1' } }),
      change({ resourceKind: 'Integration', name: 'c', action: 'delete', liveId: '3' }),
      change({ resourceKind: 'DataSource', name: 'b-new', action: 'create', integration: { name: 'b', liveId: '2' } }),
    ]);
    expect(Object.fromEntries(deps)).toEqual({
      'DataSource/a-new': ['DataSource/a-old2', 'DataSource/a-old1'],
      'Integration/b': ['DataSource/b-old'],
      'DataSource/b-new': ['Integration/b', 'DataSource/b-old'],
    });
  });

  it('refuses a cycle (a planner bug) instead of waiting forever', () => {
    expect(() =>
      taskDependencies([
        change({ resourceKind: 'Integration', name: 'x', action: 'replace', liveId: '1' }),
        change({ resourceKind: 'DataSource', name: 'd', action: 'replace', liveId: '2', integration: { name: 'x', liveId: '1' } }),
      ]),
    ).toThrow(/apply bug: the tasks wait for each other: .*Integration\/x -> DataSource\/d -> Integration\/x|DataSource\/d -> Integration\/x -> DataSource\/d/);
  });
});

describe('attributeDataSources', () => {
  /** The rule as first written: the locations longest first, the first that holds the prefix. */
  function byScan(live: readonly LiveDataSource[], integrations: ReturnType<typeof liveOf>[]): LiveDataSource[] {
    const locations = integrations
      .filter((i) => i.type === 'object_store' && typeof i.config.cloudLocationPath === 'string')
      .map((i) => ({ id: i.id, location: i.config.cloudLocationPath as string }))
      .sort((a, b) => b.location.length - a.location.length);
    return live.map((d) => {
      if (d.integrationId !== '') return d;
      const owner = locations.find((l) => prefixUnderLocation(l.location, d.prefix));
      return owner ? { ...d, integrationId: owner.id } : d;
    });
  }
  const path = fc.array(fc.constantFrom('s3:', '/', '//', 'a', 'b', 'a/b', ''), { maxLength: 5 }).map((parts) => parts.join(''));

  it('gives each record the owner a scan of every location gives (random locations, nested, equal, with slashes and schemes)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(path, fc.constantFrom('object_store', 'cloud_warehouse')), { maxLength: 8 }), fc.array(fc.tuple(path, fc.boolean()), { maxLength: 8 }), (locs, prefixes) => {
        const integrations = locs.map(([location, type], i) => {
          const l = liveOf(raw, String(i + 1), 'enabled');
          return { ...l, type: type as typeof l.type, config: { ...l.config, cloudLocationPath: location } };
        });
        const live = prefixes.map(([prefix, known], i) => ({ id: String(100 + i), integrationId: known ? '9' : '', dataSourceName: `d${i}`, prefix }));
        expect(attributeDataSources(live, integrations)).toEqual(byScan(live, integrations));
      }),
      { numRuns: 3000 },
    );
  });
});
