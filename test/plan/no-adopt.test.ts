/**
 * `--no-adopt` (src/plan/adoption.ts): a manifest matching, by natural key, a live resource govops does not own is
 * blocked (`adopt-not-allowed`) instead of adopting it, for every kind; an adoption the operator recorded (`state
 * adopt`, `export --state`) still goes ahead; what govops owns is planned as always; without the flag, as before.
 */
import { describe, expect, it } from 'vitest';
import type { LiveDataSource } from '../../src/api/types.js';
import type { DataSourceManifest } from '../../src/manifests/types.js';
import { toDesired } from '../../src/plan/desired.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredDataSource, DesiredResource, Plan, PlanChange, PlanOptions } from '../../src/plan/types.js';
import type { ManagedResource } from '../../src/state/types.js';
import { HASH, KEY, SHAPES, integration, liveOf, liveWebhookOf, owned, planner, sqlConfig, stateWith, webhook } from './fixtures.js';

const plan = planner({ prune: true, allowReplace: false });
const NO_ADOPT = { noAdopt: true };
const line = (c: PlanChange) => `${c.action}${c.adopt ? '+adopt' : ''} ${c.resourceKind}/${c.name}${c.blocked ? ` ! ${c.blocked.code}` : ''}`;
const lines = (p: Plan) => p.changes.map(line);
/** What the operator records with `govops state adopt KIND/NAME --id ID`. */
const recordedAdoption = (r: ManagedResource): ManagedResource => ({ ...r, origin: 'adopted', explicitAdopt: true, specHash: '' });

describe('--no-adopt: integrations', () => {
  const sql = integration('sql', 'sql_analytics', sqlConfig('db.example.com'));
  const theirs = liveOf(sql, '7');

  it('default: a live integration govops does not own is adopted, as before', () => {
    const p = plan([sql], { integrations: [theirs] }, stateWith());
    expect(lines(p)).toEqual(['adopt+adopt Integration/sql']);
    expect(plan([sql], { integrations: [theirs] }, stateWith(), { noAdopt: false })).toEqual(p);
  });

  it('blocked, naming what the operator can do; an adoption that also updates is blocked the same way', () => {
    const p = plan([sql], { integrations: [theirs] }, stateWith(), NO_ADOPT);
    expect(lines(p)).toEqual(['adopt+adopt Integration/sql ! adopt-not-allowed']);
    expect(p.changes[0]!.blocked!.message).toBe(
      'not adopted (--no-adopt): live integration 7 matches this manifest and govops does not own it. To manage it, ' +
        'the operator runs govops state adopt Integration/sql --id 7 and applies, or applies once without --no-adopt',
    );
    const edited = integration('sql', 'sql_analytics', { ...sqlConfig('db.example.com'), port: 1500 });
    expect(lines(plan([edited], { integrations: [theirs] }, stateWith(), NO_ADOPT))).toEqual(['update+adopt Integration/sql ! adopt-not-allowed']);
  });

  it('a manual-flow integration: blocked as an adoption, not gated on a script (apply skips it, never "awaiting a manual step")', () => {
    const lake = (httpPath: string) => integration('lake', 'lakehouse', { workspaceUrl: 'https://lake.example.com', httpPath, token: 't' }, { autoBootstrap: false });
    const live = liveOf(lake('/sql/1'), '7');
    expect(plan([lake('/sql/2')], { integrations: [live] }, stateWith()).changes[0]!.manualStep?.status).toBe('awaiting');
    const p = plan([lake('/sql/2')], { integrations: [live] }, stateWith(), NO_ADOPT);
    expect(lines(p)).toEqual(['update+adopt Integration/lake ! adopt-not-allowed']);
    expect(p.changes[0]!.manualStep).toBeUndefined();
  });

  it('an adoption that means a replace is blocked as an adoption, --allow-replace or not', () => {
    const moved = integration('sql', 'sql_analytics', { ...sqlConfig('db.example.com'), database: 'other' });
    for (const allowReplace of [false, true]) {
      const p = plan([moved], { integrations: [liveOf(sql, '7')] }, stateWith(), { ...NO_ADOPT, allowReplace });
      // (the database is not editable: found by host, it would be replaced)
      expect(p.changes[0]!.blocked?.code).toBe('adopt-not-allowed');
    }
  });

  it('an owned entry whose recorded id is gone does not take over another live integration of its key', () => {
    const p = plan([sql], { integrations: [theirs] }, stateWith(owned(sql, '3')), NO_ADOPT);
    expect(lines(p)).toEqual(['adopt+adopt Integration/sql ! adopt-not-allowed']);
  });

  it('an adoption the operator recorded (state adopt, export --state) still goes ahead', () => {
    const p = plan([sql], { integrations: [theirs] }, stateWith(recordedAdoption(owned(sql, '7'))), NO_ADOPT);
    expect(lines(p)).toEqual(['adopt+adopt Integration/sql']);
    expect(p.changes[0]!.reasons[0]!.message).toBe('adopted explicitly (govops state adopt --id 7)');
  });

  it('what govops owns is unaffected: no-op, update, replace and prune as without the flag', () => {
    const edited = integration('sql', 'sql_analytics', { ...sqlConfig('db.example.com'), port: 1500 });
    const other = integration('old', 'sql_analytics', sqlConfig('old.example.com'));
    const state = stateWith(owned(sql, '7'), owned(other, '8'));
    const live = { integrations: [theirs, liveOf(other, '8')] };
    for (const desired of [[sql], [edited]]) {
      const opts = { maxDeletes: 5, allowReplace: true };
      expect(plan(desired, live, state, { ...opts, ...NO_ADOPT })).toEqual(plan(desired, live, state, opts));
    }
    expect(lines(plan([edited], live, state, { ...NO_ADOPT, maxDeletes: 5 }))).toEqual([
      'delete Integration/old ! needs-delete-credentials',
      'update Integration/sql',
    ]);
  });
});

describe('--no-adopt: webhooks', () => {
  const hook = webhook('hook');
  const theirs = { ...liveWebhookOf(hook, '11'), createdBy: 2 };

  it('default adopts; --no-adopt blocks; a recorded adoption goes ahead; an owned one is unaffected', () => {
    expect(lines(plan([hook], { webhooks: [theirs] }, stateWith()))).toEqual(['adopt+adopt Webhook/hook']);
    const p = plan([hook], { webhooks: [theirs] }, stateWith(), NO_ADOPT);
    expect(lines(p)).toEqual(['adopt+adopt Webhook/hook ! adopt-not-allowed']);
    expect(p.changes[0]!.blocked!.message).toMatch(/govops state adopt Webhook\/hook --id 11 and applies, or applies once without --no-adopt$/);
    expect(lines(plan([hook], { webhooks: [theirs] }, stateWith(recordedAdoption(owned(hook, '11'))), NO_ADOPT))).toEqual(['adopt+adopt Webhook/hook']);
    const moved = webhook('hook', { url: 'https://hooks.example.com/moved' });
    const mine = stateWith(owned(hook, '11'));
    expect(plan([moved], { webhooks: [theirs] }, mine, NO_ADOPT)).toEqual(plan([moved], { webhooks: [theirs] }, mine));
    expect(lines(plan([moved], { webhooks: [theirs] }, mine, NO_ADOPT))).toEqual(['replace Webhook/hook']);
  });

  it('an adoption that means a replace says adopt-not-allowed (not replace-not-allowed): --allow-replace would not let it through', () => {
    const moved = webhook('hook', { url: 'https://hooks.example.com/moved' });
    expect(lines(plan([moved], { webhooks: [theirs] }, stateWith()))).toEqual(['replace+adopt Webhook/hook ! replace-not-allowed']);
    expect(lines(plan([moved], { webhooks: [theirs] }, stateWith(), { ...NO_ADOPT, allowReplace: true }))).toEqual(['replace+adopt Webhook/hook ! adopt-not-allowed']);
  });

  it('a manifest marked govops/delete never deletes it, with or without the flag', () => {
    const marked = webhook('hook', {}, { 'govops/delete': 'true' });
    expect(lines(plan([marked], { webhooks: [theirs] }, stateWith(), NO_ADOPT))).toEqual(['noop Webhook/hook']);
  });
});

describe('--no-adopt: data sources', () => {
  const storeConfig = { name: 'raw', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: 's3://raw/', authenticationType: 'auto' };
  const raw = integration('raw', 'object_store', storeConfig, { autoBootstrap: false });
  const ds = (name: string, prefix: string): DesiredDataSource => {
    const m: DataSourceManifest = { apiVersion: 'govops/v1', kind: 'DataSource', metadata: { name }, spec: { integration: 'raw', dataSourceName: name, prefix } };
    return toDesired(m, { file: 'ds.yaml', line: 1, column: 1 }, [], HASH) as DesiredDataSource;
  };
  const liveDs = (id: string, prefix: string, name: string): LiveDataSource => ({ id, integrationId: '7', dataSourceName: name, prefix });
  const mine = (d: DesiredDataSource, id: string): ManagedResource => ({ kind: 'DataSource', name: d.name, id, origin: 'created', specHash: d.specHash, secretFingerprints: {}, updatedAt: '2026-01-01T00:00:00.000Z' });
  const dsPlan = (desired: DesiredResource[], dataSources: LiveDataSource[], resources: ManagedResource[], options: Partial<PlanOptions> = {}) =>
    planChanges({
      desired,
      live: { integrations: [liveOf(raw, '7')], webhooks: [], dataSources },
      state: { version: 1, fingerprintKey: KEY, resources },
      options: { prune: false, allowReplace: false, ...options },
      shapes: SHAPES,
    });
  const a = ds('a', 's3://raw/a');
  const theirs = liveDs('1', 's3://raw/a', 'a');

  it('default adopts; --no-adopt blocks; a recorded adoption goes ahead; an owned one is unaffected', () => {
    expect(lines(dsPlan([raw, a], [theirs], [owned(raw, '7')]))).toEqual(['noop Integration/raw', 'adopt+adopt DataSource/a']);
    const p = dsPlan([raw, a], [theirs], [owned(raw, '7')], NO_ADOPT);
    expect(lines(p)).toEqual(['noop Integration/raw', 'adopt+adopt DataSource/a ! adopt-not-allowed']);
    expect(p.changes[1]!.blocked!.message).toMatch(/^not adopted \(--no-adopt\): live data source 1 matches .* govops state adopt DataSource\/a --id 1 /);
    expect(lines(dsPlan([raw, a], [theirs], [owned(raw, '7'), recordedAdoption(mine(a, '1'))], NO_ADOPT))).toEqual(['noop Integration/raw', 'adopt+adopt DataSource/a']);
    const renamed = ds('a', 's3://raw/a');
    renamed.body.dataSourceName = 'alpha';
    const state = [owned(raw, '7'), mine(a, '1')];
    expect(dsPlan([raw, renamed], [theirs], state, NO_ADOPT)).toEqual(dsPlan([raw, renamed], [theirs], state));
    expect(lines(dsPlan([raw, renamed], [theirs], state, NO_ADOPT))).toEqual(['noop Integration/raw', 'replace DataSource/a']);
  });

  it('an adoption that means a replace (its name differs) is blocked as an adoption', () => {
    const renamed = ds('a', 's3://raw/a');
    renamed.body.dataSourceName = 'alpha';
    expect(lines(dsPlan([raw, renamed], [theirs], [owned(raw, '7')], { ...NO_ADOPT, allowReplace: true }))).toEqual([
      'noop Integration/raw',
      'replace+adopt DataSource/a ! adopt-not-allowed',
    ]);
  });

  it('nothing is registered under an integration govops does not own: its adoption blocked, or suspended before it was adopted', () => {
    const b = ds('b', 's3://raw/b');
    // default: the integration is adopted and the data source registered under it
    expect(lines(dsPlan([raw, b], [], []))).toEqual(['adopt+adopt Integration/raw', 'create DataSource/b']);
    const p = dsPlan([raw, b], [], [], NO_ADOPT);
    expect(lines(p)).toEqual(['adopt+adopt Integration/raw ! adopt-not-allowed', 'create DataSource/b ! waits-for-integration']);
    expect(p.changes[1]!.blocked!.message).toBe(
      'Integration/raw (id 7) is not owned by govops and --no-adopt leaves it so: nothing is registered under it ' +
        '(the operator adopts it with govops state adopt Integration/raw --id 7)',
    );
    const suspended = integration('raw', 'object_store', storeConfig, { autoBootstrap: false, annotations: { 'govops/suspend': 'true' } });
    expect(lines(dsPlan([suspended, b], [], [], NO_ADOPT))).toEqual(['noop Integration/raw', 'create DataSource/b ! waits-for-integration']);
    // recorded by the operator: registered
    expect(lines(dsPlan([raw, b], [], [recordedAdoption(owned(raw, '7'))], NO_ADOPT))).toEqual(['adopt+adopt Integration/raw', 'create DataSource/b']);
  });
});
