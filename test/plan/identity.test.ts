/** Identity per kind: a live resource not in state is matched (adopted) by the kind's natural key, and only by it. */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredIntegration } from '../../src/plan/types.js';
import type { IntegrationType } from '../../src/kinds/registry.js';
import { integration, liveOf, liveWebhookOf, stateWith, webhook, SHAPES } from './fixtures.js';

const plan = (d: DesiredIntegration, live: ReturnType<typeof liveOf>[]) =>
  planChanges({ shapes: SHAPES, desired: [d], live: { integrations: live, webhooks: [] }, state: stateWith(), options: { prune: false, allowReplace: false } });

/** [type, desired config, same identity (other fields differ), different identity] */
const CASES: Array<[IntegrationType, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]> = [
  ['sql_analytics', { host: 'db.example.com', database: 'a' }, { host: 'DB.example.com', database: 'b' }, { host: 'db2.example.com', database: 'a' }],
  ['columnar_warehouse', { host: 'col.example.com', database: 'a' }, { host: 'col.example.com', database: 'b' }, { host: 'col2.example.com', database: 'a' }],
  ['cloud_warehouse', { host: 'wh.example.com', warehouse: 'A' }, { host: 'wh.example.com', warehouse: 'B' }, { host: 'wh2.example.com', warehouse: 'A' }],
  ['lakehouse', { workspaceUrl: 'https://lake.example.com', httpPath: '/a' }, { workspaceUrl: 'https://lake.example.com/', httpPath: '/b' }, { workspaceUrl: 'https://lake2.example.com', httpPath: '/a' }],
  ['object_store', { name: 'bucket-a', cloudRegion: 'eu' }, { name: 'bucket-a', cloudRegion: 'us' }, { name: 'bucket-b', cloudRegion: 'eu' }],
  ['dataset_warehouse', { dataset: 'gov', role: 'r@x', location: 'US' }, { dataset: 'gov', role: 'r@x', location: 'EU' }, { dataset: 'gov', role: 'other@x', location: 'US' }],
];

describe('identity by natural key, per kind', () => {
  for (const [type, desired, same, different] of CASES) {
    it(`${type}: matched by its key (adopted), a different key is a create`, () => {
      const d = integration('x', type, desired);
      const hit = plan(d, [liveOf(d, '5', 'enabled', same)]);
      expect(hit.changes[0]).toMatchObject({ adopt: true, liveId: '5' });
      const miss = plan(d, [liveOf(d, '5', 'enabled', different)]);
      expect(miss.changes[0]).toMatchObject({ action: 'create', adopt: false });
    });
  }

  it('the same host under another type is not a match (the type is part of the key)', () => {
    const d = integration('x', 'sql_analytics', { host: 'db.example.com', database: 'a' });
    const other = { ...liveOf(d, '5'), type: 'columnar_warehouse' as const };
    expect(plan(d, [other]).changes[0]).toMatchObject({ action: 'create' });
  });

  it('distributed_sql: one per service, matched by type alone', () => {
    const d = integration('trino', 'distributed_sql', {});
    expect(plan(d, [liveOf(d, '8')]).changes[0]).toMatchObject({ adopt: true, liveId: '8' });
  });

  it('webhooks by name', () => {
    const w = webhook('hook');
    const live = liveWebhookOf(webhook('hook', { url: 'https://elsewhere.example.com/x' }), '4');
    const p = planChanges({ shapes: SHAPES, desired: [w], live: { integrations: [], webhooks: [live] }, state: stateWith(), options: { prune: false, allowReplace: true } });
    expect(p.changes[0]).toMatchObject({ adopt: true, liveId: '4' });
    const none = planChanges({ shapes: SHAPES, desired: [w], live: { integrations: [], webhooks: [{ ...live, name: 'other' }] }, state: stateWith(), options: { prune: false, allowReplace: true } });
    expect(none.changes[0]).toMatchObject({ action: 'create', adopt: false });
  });
});
