/**
 * A service whose data-source records name no integration, and a location nested in another's: the records are
 * attributed by location (docs/decisions.md, "Reading bodies").
 */
import { describe, expect, it } from 'vitest';
import type { DataSourceManifest } from '../../src/manifests/types.js';
import { toDesired } from '../../src/plan/desired.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredDataSource, PlanChange } from '../../src/plan/types.js';
import { HASH, KEY, SHAPES, integration, liveOf, owned } from './fixtures.js';

const storeConfig = (name: string, location: string) => ({ name, cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: location, authenticationType: 'auto' });
const raw = integration('raw', 'object_store', storeConfig('raw', 's3://raw/'), { autoBootstrap: false });
const team = integration('team', 'object_store', storeConfig('team', 's3://raw/team'), { autoBootstrap: false });
const m: DataSourceManifest = { apiVersion: 'govops/v1', kind: 'DataSource', metadata: { name: 'a' }, spec: { integration: 'raw', dataSourceName: 'a', prefix: 's3://raw/team/x' } };
const a = toDesired(m, { file: 'ds.yaml', line: 1, column: 1 }, [], HASH) as DesiredDataSource;
const summary = (changes: readonly PlanChange[]) => changes.map((c) => `${c.action} ${c.resourceKind}/${c.name}${c.blocked ? ' !' : ''}`);

describe('nested locations, records naming no integration', () => {
  it("govops' own data source under the outer integration, at a prefix the inner location holds, is in sync", () => {
    const p = planChanges({
      desired: [raw, a],
      live: { integrations: [liveOf(raw, '7'), liveOf(team, '9')], webhooks: [], dataSources: [
          // another team's, under its own integration at the same prefix (listed first): never govops'
          { id: '2', integrationId: '', dataSourceName: 'theirs', prefix: 's3://raw/team/x' },
          { id: '1', integrationId: '', dataSourceName: 'a', prefix: 's3://raw/team/x' },
        ],
      },
      state: {
        version: 1,
        fingerprintKey: KEY,
        resources: [owned(raw, '7'), { kind: 'DataSource', name: 'a', id: '1', origin: 'created', specHash: a.specHash, secretFingerprints: {}, updatedAt: '2026-01-01T00:00:00.000Z', identity: '7|s3://raw/team/x' }],
      },
      options: { prune: true, allowReplace: false },
      shapes: SHAPES,
    });
    expect(summary(p.changes)).toEqual(['noop Integration/raw', 'noop DataSource/a']);
    expect(p.changes.find((c) => c.name === 'a')).toMatchObject({ liveId: '1', integration: { liveId: '7' } });
    expect(p.warnings.map((w) => w.message).join('\n')).not.toMatch(/stale|forgot/i);
  });

  it("a create under the inner integration is not blocked by a name govops' own data source holds under the outer one", () => {
    // names are unique per integration: data source 1 is raw's (the state records it), though team's location holds its prefix
    const bm: DataSourceManifest = { apiVersion: 'govops/v1', kind: 'DataSource', metadata: { name: 'b' }, spec: { integration: 'team', dataSourceName: 'a', prefix: 's3://raw/team/y' } };
    const b = toDesired(bm, { file: 'ds.yaml', line: 9, column: 1 }, [], HASH) as DesiredDataSource;
    const p = planChanges({
      desired: [raw, team, a, b],
      live: { integrations: [liveOf(raw, '7'), liveOf(team, '9')], webhooks: [], dataSources: [{ id: '1', integrationId: '', dataSourceName: 'a', prefix: 's3://raw/team/x' }] },
      state: {
        version: 1,
        fingerprintKey: KEY,
        resources: [owned(raw, '7'), owned(team, '9'), { kind: 'DataSource', name: 'a', id: '1', origin: 'created', specHash: a.specHash, secretFingerprints: {}, updatedAt: '2026-01-01T00:00:00.000Z', identity: '7|s3://raw/team/x' }],
      },
      options: { prune: true, allowReplace: false },
      shapes: SHAPES,
    });
    expect(summary(p.changes)).toEqual(['noop Integration/raw', 'noop Integration/team', 'noop DataSource/a', 'create DataSource/b']);
  });
});
