/**
 * Safety rules of the planner at the edges no other test reached (each found by a mutation of src/plan that the
 * suite let through): what govops does not own is never deleted (an operator's recorded adoption, a resource
 * adopted by natural key after its recorded id went away), how the mass-deletion guard counts, two manifests
 * claiming one live resource, which fields force a replace, data sources and their integration, suspension, and
 * the in-sync rules (a no-op whatever the service echoes).
 */
import { describe, expect, it } from 'vitest';
import type { LiveDataSource } from '../../src/api/types.js';
import type { DataSourceManifest } from '../../src/manifests/types.js';
import { toDesired } from '../../src/plan/desired.js';
import { deepEqual, sameValue, type DiffContext } from '../../src/plan/diff.js';
import { compareFacts, comparePlans, planFacts, type PlanFacts } from '../../src/plan/facts.js';
import { parseAcknowledgments } from '../../src/plan/acknowledgment.js';
import { preserveIgnoredFields } from '../../src/plan/ignore.js';
import { secretContext } from '../../src/plan/integrations.js';
import { planChanges } from '../../src/plan/planner.js';
import { comparable, comparableMemo, fromWire } from '../../src/plan/shape.js';
import type { DesiredDataSource, DesiredResource, Plan, PlanChange, PlanOptions } from '../../src/plan/types.js';
import type { ManagedResource } from '../../src/state/types.js';
import { hasChanges } from '../../src/reconcile/plan-stage.js';
import { taskDependencies } from '../../src/apply/dependencies.js';
import { HASH, KEY, SHAPES, integration, liveOf, liveWebhookOf, owned, planner, sqlConfig, stateWith, webhook } from './fixtures.js';

const plan = planner({ prune: true, allowReplace: false });
const line = (c: PlanChange) => `${c.action}${c.adopt ? '+adopt' : ''} ${c.resourceKind}/${c.name}${c.blocked ? ` ! ${c.blocked.code}` : ''}`;
const lines = (p: Plan) => p.changes.map(line);
const messages = (p: Plan) => p.warnings.map((w) => w.message).join('\n');
/** What the operator records with `govops state adopt KIND/NAME --id ID`. */
const recordedAdoption = (r: ManagedResource): ManagedResource => ({ ...r, origin: 'adopted', explicitAdopt: true, specHash: '' });
const DELETE = { 'govops/delete': 'true' };

describe('what govops does not own is never deleted', () => {
  it('an adoption the operator recorded whose manifest is gone is never pruned (integration, webhook)', () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig());
    const hook = webhook('hook');
    const st = stateWith(recordedAdoption(owned(sql, '1')), recordedAdoption(owned(hook, '5')));
    const p = plan([], { integrations: [liveOf(sql, '1')], webhooks: [liveWebhookOf(hook, '5')] }, st, { allowEmpty: true, maxDeletes: 10 });
    expect(p.changes).toEqual([]);
    expect(messages(p)).toMatch(/Integration\/sql was recorded by govops state adopt but has no manifest: never pruned/);
    expect(messages(p)).toMatch(/Webhook\/hook was recorded by govops state adopt but has no manifest: never pruned/);
  });

  it('govops/delete on a manifest whose recorded id is gone does not delete the live resource found by its natural key', () => {
    // govops made id 1; it went away and someone made id 2 with the same identity: govops does not own id 2
    const sql = integration('sql', 'sql_analytics', sqlConfig(), { annotations: DELETE });
    const hook = webhook('hook', {}, DELETE);
    const p = plan([sql, hook], { integrations: [liveOf(sql, '2')], webhooks: [liveWebhookOf(hook, '6')] }, stateWith(owned(sql, '1'), owned(hook, '5')));
    expect(lines(p)).toEqual(['noop Integration/sql', 'noop Webhook/hook']);
    for (const c of p.changes) expect(c.reasons.map((r) => r.code)).toContain('not-owned');
    expect(p.summary.delete).toBe(0);
  });

  it('nor does an operator-recorded adoption that has not been applied yet', () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig(), { annotations: DELETE });
    const hook = webhook('hook', {}, DELETE);
    const st = stateWith(recordedAdoption(owned(sql, '1')), recordedAdoption(owned(hook, '5')));
    const p = plan([sql, hook], { integrations: [liveOf(sql, '1')], webhooks: [liveWebhookOf(hook, '5')] }, st);
    expect(lines(p)).toEqual(['noop Integration/sql', 'noop Webhook/hook']);
    expect(p.summary.delete).toBe(0);
  });
});

describe('the mass-deletion guard counts', () => {
  const hooks = (n: number) => {
    const desired = Array.from({ length: n }, (_, i) => webhook(`h${i}`));
    return { desired, live: desired.map((d, i) => liveWebhookOf(d, String(i + 1))), state: stateWith(...desired.map((d, i) => owned(d, String(i + 1)))) };
  };

  it('the default share rounds down: 2 deletes of 5 managed resources are over 25%', () => {
    const h = hooks(5);
    const p = plan(h.desired.slice(2), { webhooks: h.live }, h.state);
    expect(p.deletionRefusal).toMatchObject({ rule: 'share', refused: 2, managed: 5, limit: 1 });
  });

  it("deleting govops' own duplicate copies is not pruning: it does not count towards the share", () => {
    const d = webhook('hook');
    const st = stateWith({ ...owned(d, '5'), copies: ['9', '10'] });
    const p = plan([d], { webhooks: [liveWebhookOf(d, '5'), liveWebhookOf(d, '9'), liveWebhookOf(d, '10')] }, st);
    expect(p.deletionRefusal).toBeUndefined();
    expect(lines(p)).toEqual(['noop Webhook/hook', 'delete Webhook/hook', 'delete Webhook/hook']);
  });

  it('--max-deletes counts replaces as well as deletes', () => {
    const hook = webhook('hook');
    const live = { ...liveWebhookOf(hook, '5'), notificationType: ['modelDeleted'] };
    const st = stateWith(owned(hook, '5'));
    const p = plan([hook], { webhooks: [live] }, st, { maxDeletes: 0 });
    expect(p.deletionRefusal).toMatchObject({ rule: 'max-deletes', refused: 1, limit: 0 });
    expect(lines(p)).toEqual(['replace Webhook/hook ! deletion-guard']);
    expect(lines(plan([hook], { webhooks: [live] }, st, { maxDeletes: 1 }))).toEqual(['replace Webhook/hook']);
  });
});

describe('matching', () => {
  it('two manifests with the natural key of one live integration: an error, and neither adopts it', () => {
    const a = integration('a', 'sql_analytics', sqlConfig());
    const b = integration('b', 'sql_analytics', sqlConfig());
    const p = plan([a, b], { integrations: [liveOf(a, '1')] }, stateWith());
    expect(p.errors.join('\n')).toMatch(/Integration\/b and Integration\/a both match live id 1/);
    expect(p.changes.filter((c) => c.adopt && c.liveId === '1')).toHaveLength(1);
  });
});

describe('secrets of a resource govops does not own', () => {
  it("adopted by natural key after its recorded id went away: its secrets are not compared with the old entry's fingerprints", () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([sql], { integrations: [liveOf(sql, '2')] }, stateWith(owned(sql, '1')));
    expect(lines(p)).toEqual(['adopt+adopt Integration/sql']);
    expect(p.changes[0]!.notComparable).toMatchObject({ handling: 'record' });
    expect(p.changes[0]!.notComparable!.paths).toContain('config.password');
  });

  it('recorded by state adopt: its secrets cannot be compared (recorded, not sent)', () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([sql], { integrations: [liveOf(sql, '1')] }, stateWith(recordedAdoption({ ...owned(sql, '1'), secretFingerprints: {} })));
    expect(lines(p)).toEqual(['adopt+adopt Integration/sql']);
    expect(p.changes[0]!.notComparable).toMatchObject({ handling: 'record' });
  });

  it('with --resend-secrets and a visible change, an unknown secret is sent with that update (not a resend of its own)', () => {
    const sql = integration('sql', 'sql_analytics', { ...sqlConfig(), port: 1500 });
    const p = plan([sql], { integrations: [liveOf(integration('sql', 'sql_analytics', sqlConfig()), '1')] }, stateWith(), { resendSecrets: true });
    expect(lines(p)).toEqual(['update+adopt Integration/sql']);
    expect(p.changes[0]!.notComparable).toMatchObject({ handling: 'send' });
    expect(p.changes[0]!.reasons.map((r) => r.code)).not.toContain('resend-secrets');
  });

  it('a sensitive path govops never sent and the manifest has no fingerprint of is a change, not the same', () => {
    const st = owned(integration('sql', 'sql_analytics', sqlConfig()), '1');
    const ctx = secretContext('sql_analytics', [], {}, { ...st, secretFingerprints: {} });
    expect(ctx.compareSecret('config.password', '****', 'x')).toBe('changed');
  });
});

describe('which fields force a replace', () => {
  it('a field whose name starts with a non-editable field is edited in place (datasetSuffix is not dataset)', () => {
    const config = { dataset: 'sales', location: 'EU', credential: 'c', datasetSuffix: '_a' };
    const d = integration('bq', 'dataset_warehouse', config);
    const live = liveOf(integration('bq', 'dataset_warehouse', { ...config, datasetSuffix: '_b' }), '1');
    const p = plan([d], { integrations: [live] }, stateWith(owned(d, '1')));
    expect(lines(p)).toEqual(['update Integration/bq']);
    expect(p.changes[0]!.changes).toEqual([{ path: 'config.datasetSuffix', before: '_b', after: '_a', sensitive: false, forcesReplace: false }]);
  });
});

describe('data sources', () => {
  const storeConfig = { name: 'raw', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: 's3://raw/', authenticationType: 'auto' };
  const ds = (name: string, prefix: string, dataSourceName = name, annotations?: Record<string, string>): DesiredDataSource => {
    const m: DataSourceManifest = {
      apiVersion: 'govops/v1',
      kind: 'DataSource',
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { integration: 'raw', dataSourceName, prefix },
    };
    return toDesired(m, { file: 'ds.yaml', line: 1, column: 1 }, [], HASH) as DesiredDataSource;
  };
  const mine = (d: DesiredDataSource, id: string): ManagedResource => ({
    kind: 'DataSource', name: d.name, id, origin: 'created', specHash: d.specHash, secretFingerprints: {}, updatedAt: '2026-01-01T00:00:00.000Z',
  });
  const dsPlan = (desired: DesiredResource[], raw: ReturnType<typeof integration>, dataSources: LiveDataSource[], resources: ManagedResource[], options: Partial<PlanOptions> = {}) =>
    planChanges({
      desired,
      live: { integrations: [liveOf(raw, '7')], webhooks: [], dataSources },
      state: { version: 1, fingerprintKey: KEY, resources: [owned(raw, '7'), ...resources] },
      options: { prune: true, allowReplace: false, ...options },
      shapes: SHAPES,
    });

  it('govops/delete on a data source found by natural key after its recorded id went away: not deleted', () => {
    const raw = integration('raw', 'object_store', storeConfig, { autoBootstrap: false });
    const a = ds('a', 's3://raw/a', 'a', DELETE);
    const p = dsPlan([raw, a], raw, [{ id: '2', integrationId: '7', dataSourceName: 'a', prefix: 's3://raw/a' }], [mine(a, '1')]);
    expect(lines(p)).toEqual(['noop Integration/raw', 'noop DataSource/a']);
    expect(p.changes[1]!.reasons.map((r) => r.code)).toContain('not-owned');
  });

  it('a data source kept while this plan deletes its integration is a plan error', () => {
    const raw = integration('raw', 'object_store', storeConfig, { autoBootstrap: false, annotations: DELETE });
    const a = ds('a', 's3://raw/a');
    const p = dsPlan([raw, a], raw, [{ id: '1', integrationId: '7', dataSourceName: 'a', prefix: 's3://raw/a' }], [mine(a, '1')]);
    expect(p.errors.join('\n')).toMatch(/DataSource\/a is registered under Integration\/raw, which this plan deletes/);
  });

  it("an operator-recorded adoption without a manifest is never pruned, so its name stays taken for a new data source", () => {
    const raw = integration('raw', 'object_store', storeConfig, { autoBootstrap: false });
    const old = ds('old', 's3://raw/old', 'shared');
    const fresh = ds('new', 's3://raw/new', 'shared');
    const p = dsPlan([raw, fresh], raw, [{ id: '1', integrationId: '7', dataSourceName: 'shared', prefix: 's3://raw/old' }], [recordedAdoption(mine(old, '1'))]);
    expect(lines(p)).toEqual(['noop Integration/raw', 'create DataSource/new ! name-taken']);
  });
  it('a name held by a data source the final plan keeps (suspended, left out by --only, refused by the guard) blocks the create', () => {
    const raw = integration('raw', 'object_store', storeConfig, { autoBootstrap: false });
    const old = ds('old', 's3://raw/old', 'shared');
    const fresh = ds('new', 's3://raw/new', 'shared');
    const held = [{ id: '1', integrationId: '7', dataSourceName: 'shared', prefix: 's3://raw/old' }];
    const suspended = dsPlan([raw, fresh], raw, held, [{ ...mine(old, '1'), suspended: true }]);
    expect(lines(suspended)).toEqual(['noop Integration/raw', 'create DataSource/new ! name-taken', 'noop DataSource/old']);
    expect(suspended.changes[1]!.blocked!.message).toMatch(/the name shared is taken by data source 1 \(s3:\/\/raw\/old\) of Integration\/raw, which this plan does not delete/);
    expect(lines(dsPlan([raw, fresh], raw, held, [mine(old, '1')], { only: ['DataSource/new'] }))).toEqual(['create DataSource/new ! name-taken']);
    expect(lines(dsPlan([raw, fresh], raw, held, [mine(old, '1')], { maxDeletes: 0 }))).toEqual([
      'noop Integration/raw',
      'create DataSource/new ! name-taken',
      'delete DataSource/old ! deletion-guard',
    ]);
    // pruned in this plan: the name is free by the time the create runs (it waits for the delete)
    expect(lines(dsPlan([raw, fresh], raw, held, [mine(old, '1')]))).toEqual(['noop Integration/raw', 'create DataSource/new', 'delete DataSource/old']);
  });
});

describe('suspension', () => {
  it('a manifest marked govops/delete whose entry was recorded suspended (the mark since removed) is deleted', () => {
    const hook = webhook('hook', {}, DELETE);
    const p = plan([hook], { webhooks: [liveWebhookOf(hook, '5')] }, stateWith({ ...owned(hook, '5'), suspended: true }));
    expect(lines(p)).toEqual(['delete Webhook/hook']);
  });

  it("a suspended webhook's own extra copies are left alone: one suspended no-op, no second change", () => {
    const hook = webhook('hook', {}, { 'govops/suspend': 'true' });
    const p = plan([hook], { webhooks: [liveWebhookOf(hook, '5'), liveWebhookOf(hook, '9')] }, stateWith({ ...owned(hook, '5'), copies: ['9'] }));
    expect(lines(p)).toEqual(['noop Webhook/hook']);
    expect(p.changes[0]!.suspended).toBe(true);
  });
});

describe('a no-op whatever the service echoes', () => {
  it('an integration in an error status with nothing differing is fixed by a PUT (deleteError too: its manifest keeps it); enabled is a no-op', () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig());
    for (const status of ['createError', 'editError', 'deleteError']) {
      const p = plan([sql], { integrations: [liveOf(sql, '1', status)] }, stateWith(owned(sql, '1')));
      expect(lines(p), status).toEqual(['update Integration/sql']);
      expect(p.changes[0]!.reasons.map((r) => r.code)).toContain('fix-status');
    }
    expect(lines(plan([sql], { integrations: [liveOf(sql, '1', 'enabled')] }, stateWith(owned(sql, '1'))))).toEqual(['noop Integration/sql']);
  });

  it('an optional webhook field the service leaves out (null) is not a difference', () => {
    const hook = webhook('hook');
    const p = plan([hook], { webhooks: [{ ...liveWebhookOf(hook, '5'), actionType: null } as never] }, stateWith(owned(hook, '5')));
    expect(lines(p)).toEqual(['noop Webhook/hook']);
  });

  it('a live webhook of the same name that another state entry owns is no duplicate of this one', () => {
    const hook = webhook('hook');
    const old = webhook('old');
    const p = plan([hook], { webhooks: [liveWebhookOf(hook, '5'), { ...liveWebhookOf(old, '7'), name: 'hook' }] }, stateWith(owned(hook, '5'), owned(old, '7')), { prune: false });
    expect(messages(p)).not.toMatch(/duplicate|other live webhook/);
    expect(p.warnings.map((w) => w.code)).not.toContain('duplicate');
  });

  it('normalisation: an empty string is no number, a list of two strings is no string, each kind normalised as itself', () => {
    expect(fromWire({ type: 'number' }, '')).toBe('');
    expect(fromWire({ type: 'string' }, ['a', 'b'])).toEqual(['a', 'b']);
    expect(fromWire({ type: 'string' }, ['a'])).toBe('a');
    const memo = comparableMemo(SHAPES);
    const config = { ...sqlConfig(), dataset: 'd', location: 'EU' };
    expect(memo('sql_analytics', config)).toEqual(comparable(SHAPES, 'sql_analytics', config));
    expect(memo('dataset_warehouse', config)).toEqual(comparable(SHAPES, 'dataset_warehouse', config));
  });

  it("normalisation: an object field echoed as [] (PHP's json_encode of an empty array) is that object absent; a list that holds something is not", () => {
    const written = { host: 'acct.example.com', database: 'db' };
    const echoed = { ...written, impersonation: [], audit: [], userRolePattern: [] };
    expect(comparable(SHAPES, 'cloud_warehouse', echoed)).toEqual(comparable(SHAPES, 'cloud_warehouse', written));
    expect(comparable(SHAPES, 'cloud_warehouse', { ...written, impersonation: ['x'] }).impersonation).toEqual(['x']);
  });

  it('deepEqual: a property holding undefined counts as absent, at any depth', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual([{ a: 1, b: undefined }], [{ a: 1 }])).toBe(true);
  });

  it('sameValue: a masked live value at a key not sensitive by name is compared as a secret', () => {
    const asked: string[] = [];
    const ctx: DiffContext = {
      isSensitive: () => false,
      compareSecret: (path) => (asked.push(path), 'same'),
      forcesReplace: () => false,
    };
    expect(sameValue('config', 'note', 'plain', '****', ctx, false)).toBe(true);
    expect(asked).toEqual(['config.note']);
  });
});

describe('more edges (a second mutation round)', () => {
  it('a live integration of a type govops does not know at a recorded id is kept (a blocked type change), not forgotten and created beside', () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig());
    const alien = { ...liveOf(sql, '1'), type: 'future_kind' } as never;
    const p = plan([sql], { integrations: [alien] }, stateWith(owned(sql, '1')));
    expect(lines(p)).toEqual(['replace Integration/sql ! unknown-type']);
    expect(p.warnings.map((w) => w.code)).not.toContain('stale-record');
  });

  it('plan order: integrations, then data sources, then webhooks', () => {
    const raw = integration('raw', 'object_store', { name: 'raw', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'x', cloudLocationPath: 's3://raw/', authenticationType: 'auto' }, { autoBootstrap: false });
    const m: DataSourceManifest = { apiVersion: 'govops/v1', kind: 'DataSource', metadata: { name: 'a' }, spec: { integration: 'raw', dataSourceName: 'a', prefix: 's3://raw/a' } };
    const a = toDesired(m, { file: 'ds.yaml', line: 1, column: 1 }, [], HASH) as DesiredDataSource;
    const p = planChanges({
      desired: [webhook('b-hook'), a, raw],
      live: { integrations: [liveOf(raw, '7')], webhooks: [], dataSources: [] },
      state: stateWith(owned(raw, '7')),
      options: { prune: false, allowReplace: false },
      shapes: SHAPES,
    });
    expect(p.changes.map((c) => c.resourceKind)).toEqual(['Integration', 'DataSource', 'Webhook']);
  });

  it('a plan whose only change awaits a manual step has no changes to make now', () => {
    const lake = integration('lake', 'lakehouse', { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 't' }, { autoBootstrap: false });
    const p = plan([lake], {}, stateWith());
    expect(p.changes[0]!.manualStep?.status).toBe('awaiting');
    expect(hasChanges(p)).toBe(false);
    expect(hasChanges(plan([integration('sql', 'sql_analytics', sqlConfig())], {}, stateWith()))).toBe(true);
  });

  it('a webhook event type the service repeats is no difference (a set)', () => {
    const hook = webhook('hook', { notificationType: ['modelCreated', 'modelDeleted'] });
    const live = { ...liveWebhookOf(hook, '5'), notificationType: ['modelDeleted', 'modelCreated', 'modelDeleted'] };
    expect(lines(plan([hook], { webhooks: [live] }, stateWith(owned(hook, '5'))))).toEqual(['noop Webhook/hook']);
  });

  it('an ignored field the service shows masked is sent as the manifest has it, never as the mask', () => {
    const ig = { 'govops/ignore-fields': 'config.schema' };
    const d = integration('a', 'sql_analytics', { ...sqlConfig(), username: 'other' }, { annotations: ig });
    const live = liveOf(integration('a', 'sql_analytics', sqlConfig()), '1', 'enabled', { schema: '****' });
    const p = plan([d], { integrations: [live] }, stateWith(owned(integration('a', 'sql_analytics', sqlConfig(), { annotations: ig }), '1')));
    expect(p.changes[0]!.action).toBe('update');
    const [sent] = preserveIgnoredFields([d], p, { integrations: [live], webhooks: [] }, SHAPES);
    expect(sent!.kind === 'Integration' && sent!.body.config?.schema).toBe('views');
  });

  it("an integration replace creates a new one: it sends the manifest's values of ignored fields, not the old one's", () => {
    const ig = { 'govops/ignore-fields': 'config.schema' };
    const was = integration('a', 'sql_analytics', sqlConfig(), { annotations: ig });
    const d = integration('a', 'sql_analytics', { ...sqlConfig(), database: 'other' }, { annotations: ig });
    const live = liveOf(was, '1', 'enabled', { schema: 'theirs' });
    const p = plan([d], { integrations: [live] }, stateWith(owned(was, '1')), { allowReplace: true });
    expect(p.changes[0]!.action).toBe('replace');
    expect(preserveIgnoredFields([d], p, { integrations: [live], webhooks: [] }, SHAPES)[0]).toBe(d);
  });
});

describe('manual steps (a third mutation round)', () => {
  it('a change blocked for another reason keeps that reason when it also awaits a manual step', () => {
    const config = { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 't', catalog: 'one' };
    const was = integration('lake', 'lakehouse', config, { autoBootstrap: false });
    const d = integration('lake', 'lakehouse', { ...config, catalog: 'two' }, { autoBootstrap: false });
    const p = plan([d], { integrations: [liveOf(was, '1')] }, stateWith(owned(was, '1')));
    expect(p.changes[0]).toMatchObject({ action: 'replace', blocked: { code: 'replace-not-allowed' }, manualStep: { status: 'awaiting' } });
  });

  it('an acknowledgment entry is a whole word: a longer token or a prefixed phase is none', () => {
    expect(parseAcknowledgments('create:0123abcd')).toEqual([{ phase: 'create', token: '0123abcd' }]);
    expect(parseAcknowledgments('create:0123abcdef')).toEqual([]);
    expect(parseAcknowledgments('recreate:0123abcd')).toEqual([]);
  });
});

describe('saved plans: what makes one stale (a third mutation round)', () => {
  const facts = (o: Partial<PlanFacts> = {}): PlanFacts => ({ keyId: 'k', manifests: {}, secrets: {}, state: {}, live: {}, ...o });
  const sqlManifest = (name: string) => ({ apiVersion: 'govops/v1', kind: 'Integration', metadata: { name }, spec: { type: 'sql_analytics', config: sqlConfig() } }) as never;

  it('a manifest added or removed, a live id that changed', () => {
    expect(compareFacts(facts({ manifests: { 'Integration/a': 'x' } }), facts({ manifests: { 'Integration/b': 'y' } }))).toEqual([
      'manifest Integration/b was added',
      'manifest Integration/a was removed',
    ]);
    expect(compareFacts(facts({ live: { 'Integration/a': { id: '1', fields: {} } } }), facts({ live: { 'Integration/a': { id: '2', fields: {} } } }))).toEqual([
      'Integration/a is now live id 2, the plan was made against id 1',
    ]);
  });

  it('the plan computed now: a new change, or one now blocked, with other secrets handling or delete credentials, differs', () => {
    const sql = integration('sql', 'sql_analytics', sqlConfig());
    const saved = plan([sql], {}, stateWith());
    expect(comparePlans(plan([], {}, stateWith()), saved)).toEqual(['Integration/sql: a change now that the saved plan does not have (create)']);
    // a new change that is blocked: which one, its action and why (the old code said only "a change now that the saved plan does not have")
    const newBlocked = structuredClone(saved);
    newBlocked.changes[0]!.blocked = { code: 'value-taken', message: 'config.host `db.example` is used by integration 9' };
    expect(comparePlans(plan([], {}, stateWith()), newBlocked)).toEqual([
      'Integration/sql: a change now that the saved plan does not have (create), blocked (value-taken): config.host `db.example` is used by integration 9',
    ]);
    const differs = ['Integration/sql: the change computed now differs from the saved one'];
    const edited = (f: (c: PlanChange) => void): Plan => {
      const p = structuredClone(saved);
      f(p.changes[0]!);
      return p;
    };
    // blocked since: which change and why (the old code said only "the change computed now differs from the saved one")
    expect(comparePlans(saved, edited((c) => (c.blocked = { code: 'deletion-guard', message: 'x' })))).toEqual(['Integration/sql: blocked now (deletion-guard): x']);
    expect(comparePlans(saved, edited((c) => (c.blocked = { code: 'awaiting-manual-step', message: 'run the create script first' })))).toEqual([
      'Integration/sql: blocked now (awaiting-manual-step): run the create script first',
    ]);
    expect(comparePlans(saved, edited((c) => (c.action = 'adopt')))).toEqual(['Integration/sql: the change computed now is adopt, the saved one create']);
    expect(comparePlans(saved, edited((c) => (c.notComparable = { paths: ['config.password'], handling: 'send' })))).toEqual(differs);
    expect(comparePlans(saved, edited((c) => (c.deleteNeedsCredentials = true)))).toEqual(differs);
  });

  it('planFacts: delete credentials are secrets; a rename fixes both state entries; the live status counts; ids() names the live item', () => {
    const withCreds = (pw: string) => integration('sql', 'sql_analytics', sqlConfig(), { deleteCredentials: { username: 'admin', password: pw } });
    const d = withCreds('one');
    const live = liveOf(d, '1');
    const st = stateWith(owned(d, '1'));
    const p = plan([d], { integrations: [live] }, st, { resendSecrets: true });
    const input = { manifests: [sqlManifest('sql')], desired: [d], state: st, live: { integrations: [live], webhooks: [] }, shapes: SHAPES, hashing: HASH };
    const f = planFacts(p, input);
    expect(compareFacts(f, planFacts(p, { ...input, desired: [withCreds('two')] }))).toEqual([
      'secret deleteCredentials.password of Integration/sql changed (its fingerprint differs)',
    ]);
    // an update (here: a fix of createError) is judged against the live status too
    const broken = liveOf(d, '1', 'createError');
    const fix = plan([d], { integrations: [broken] }, st);
    expect(fix.changes[0]!.action).toBe('update');
    const fixInput = { ...input, live: { integrations: [broken], webhooks: [] } };
    expect(compareFacts(planFacts(fix, fixInput), planFacts(fix, { ...fixInput, live: { integrations: [live], webhooks: [] } }))).toEqual([
      'Integration/sql (id 1) changed in the service since the plan: status',
    ]);
    // a rename: the old name's entry is a fact too
    const renamed = integration('new', 'sql_analytics', sqlConfig());
    const rp = plan([renamed], { integrations: [live] }, st);
    expect(rp.changes[0]!.renamedFrom).toBe('sql');
    expect(Object.keys(planFacts(rp, { ...input, desired: [renamed], manifests: [sqlManifest('new')] }).state)).toEqual(['Integration/new', 'Integration/sql']);
    // the ids of the live items to look at (apply FILE: a create's id once it exists)
    const created = plan([d], {}, stateWith());
    expect(planFacts(created, { ...input, state: stateWith() }, () => '1').live['Integration/sql']).toMatchObject({ id: '1' });
  });
});

describe('a unique config value held by a live integration (object_store cloudLocationPath)', () => {
  const store = (name: string, path: string) =>
    integration(name, 'object_store', { name, cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: path, authenticationType: 'auto' }, { autoBootstrap: false });

  it("another team's integration holding it blocks the create, naming the holder; another path plans the create", () => {
    const theirs = liveOf(store('theirs', 's3://shared/'), '9');
    const p = plan([store('mine', 's3://shared/')], { integrations: [theirs] }, stateWith());
    expect(lines(p)).toEqual(['create Integration/mine ! value-taken']);
    expect(p.changes[0]!.blocked!.message).toMatch(/config\.cloudLocationPath `s3:\/\/shared\/` is used by integration 9 \(status enabled\), which this plan does not delete/);
    expect(lines(plan([store('mine', 's3://mine/')], { integrations: [theirs] }, stateWith()))).toEqual(['create Integration/mine']);
  });

  it("govops' own holder: free when this plan prunes it, blocked when the plan keeps it (no --prune)", () => {
    const old = store('old', 's3://shared/');
    const live = liveOf(old, '9');
    const pruned = plan([store('new', 's3://shared/')], { integrations: [live] }, stateWith(owned(old, '9')));
    expect(lines(pruned)).toEqual(expect.arrayContaining(['delete Integration/old', 'create Integration/new']));
    const create = pruned.changes.find((c) => c.name === 'new')!;
    expect(create.freedBy).toEqual(['Integration/old']);
    expect(taskDependencies(pruned.changes)).toEqual(new Map([['Integration/new', ['Integration/old']]]));
    // a targeted apply without the delete: the create does not wait for a task that is not there
    expect(taskDependencies(pruned.changes.filter((c) => c.name === 'new'))).toEqual(new Map());
    const kept = planner({ prune: false, allowReplace: false })([store('new', 's3://shared/')], { integrations: [live] }, stateWith(owned(old, '9')));
    expect(lines(kept)).toContain('create Integration/new ! value-taken');
  });

  it('a path that differs only by trailing slashes is compared as written (the interface states no such rule): not blocked; a removal of it is waited for', () => {
    const theirs = liveOf(store('theirs', 's3://shared/'), '9');
    expect(lines(plan([store('mine', 's3://shared')], { integrations: [theirs] }, stateWith()))).toEqual(['create Integration/mine']);
    const slashes = liveOf(store('theirs', 's3://shared'), '9');
    expect(lines(plan([store('mine', 's3://shared//')], { integrations: [slashes] }, stateWith()))).toEqual(['create Integration/mine']);
    // govops' own holder of the path with a trailing slash, pruned: the create waits for its delete (ordering costs
    // nothing, and a service that holds the two to be one would refuse the create while the old one is there)
    const old = store('old', 's3://shared/');
    const pruned = plan([store('new', 's3://shared')], { integrations: [liveOf(old, '9')] }, stateWith(owned(old, '9')));
    expect(pruned.changes.find((c) => c.name === 'new')!.freedBy).toEqual(['Integration/old']);
    // another case, or a path under it, is another location: no wait
    const other = plan([store('new', 's3://Shared')], { integrations: [liveOf(old, '9')] }, stateWith(owned(old, '9')));
    expect(other.changes.find((c) => c.name === 'new')!.freedBy).toBeUndefined();
  });

  it('two creates of this plan on one location (secret references validate cannot compare): the second is blocked, naming the first', () => {
    // the desired bodies hold resolved values: here both manifests' `cloudLocationPath: { fromEnv: ... }` resolved alike
    const p = plan([store('a', 's3://shared/'), store('b', 's3://shared/')], {}, stateWith());
    expect(lines(p)).toEqual(['create Integration/a', 'create Integration/b ! value-taken']);
    expect(p.changes[1]!.blocked!.message).toMatch(/config\.cloudLocationPath `s3:\/\/shared\/` is also taken by Integration\/a, which this plan creates/);
    // once the first is blocked (its path held live), the second is not blocked by it
    const theirs = liveOf(store('theirs', 's3://other/'), '9');
    const q = plan([store('a', 's3://other/'), store('b', 's3://other/')], { integrations: [theirs] }, stateWith());
    expect(lines(q)).toEqual(['create Integration/a ! value-taken', 'create Integration/b ! value-taken']);
    expect(q.changes[1]!.blocked!.message).toMatch(/is used by integration 9/);
  });

  it("govops' own holder marked govops/delete: the create on its path waits for the delete (with --prune), blocked without", () => {
    const old = store('old', 's3://shared/');
    const marked = integration('old', 'object_store', old.body.config!, { autoBootstrap: false, annotations: { 'govops/delete': 'true' } });
    const live = liveOf(old, '9');
    const p = plan([marked, store('new', 's3://shared/')], { integrations: [live] }, stateWith(owned(old, '9')));
    expect(lines(p)).toEqual(expect.arrayContaining(['delete Integration/old', 'create Integration/new']));
    expect(p.changes.find((c) => c.name === 'new')!.freedBy).toEqual(['Integration/old']);
    const kept = planner({ prune: false, allowReplace: false })([marked, store('new', 's3://shared/')], { integrations: [live] }, stateWith(owned(old, '9')));
    expect(lines(kept)).toContain('create Integration/new ! value-taken');
  });

  it('a replace of its own integration that keeps the path is not blocked by itself', () => {
    const before = store('lake', 's3://shared/');
    const after = integration('lake', 'object_store', { ...before.body.config, cloudAccountId: '2' }, { autoBootstrap: false });
    const p = planner({ prune: true, allowReplace: true })([after], { integrations: [liveOf(before, '9')] }, stateWith(owned(before, '9')));
    expect(lines(p)).toEqual(['replace Integration/lake']);
  });
});
