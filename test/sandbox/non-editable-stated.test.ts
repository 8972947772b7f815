/**
 * The attributes the interface itself says cannot change (the full list is "not shown"): dataset_warehouse
 * `location` ("cannot be changed after the dataset is created", 2.6) and `autoBootstrap` ("Chosen at creation",
 * 2.2). The sandbox takes its non-editable list from govops' registry (NON_EDITABLE), which the planner also reads
 * to plan a replace instead of an update: a stated attribute dropped from it was shared by both, govops planning an
 * update the service refuses and the sandbox taking it. Written from the interface, this test fails then.
 */
import { describe, expect, it } from 'vitest';
import { bodyFor, call, sandboxPerFile, settle } from './harness.js';

const box = sandboxPerFile();

async function created(kind: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const c = await call(box.sb, 'POST', '/integrations', { body: bodyFor(kind, 1, overrides) });
  expect(c.status, c.text).toBe(200);
  expect(await settle(box.sb, c.body.id)).toBe('enabled');
  return c.body.id as string;
}

describe('attributes the interface states cannot change: PUT is 400 naming them, dry run or not', () => {
  it('dataset_warehouse location (2.6)', async () => {
    const id = await created('dataset_warehouse');
    const body = bodyFor('dataset_warehouse');
    (body.config as Record<string, unknown>).location = 'US';
    for (const q of ['?dryRun=true', '']) {
      const r = await call(box.sb, 'PUT', `/integrations/${id}${q}`, { body });
      expect(r.status, r.text).toBe(400);
      expect(r.body.message).toContain('config.location');
    }
    // the other fields of the kind stay editable
    const ok = bodyFor('dataset_warehouse');
    (ok.config as Record<string, unknown>).datasetSuffix = '_other';
    expect((await call(box.sb, 'PUT', `/integrations/${id}`, { body: ok })).status).toBe(200);
  });

  it.each(['sql_analytics', 'columnar_warehouse', 'cloud_warehouse', 'lakehouse'])('%s autoBootstrap (2.2: chosen at creation)', async (kind) => {
    const auto = await created(kind);
    const r = await call(box.sb, 'PUT', `/integrations/${auto}?dryRun=true`, { body: bodyFor(kind, 1, { autoBootstrap: false }) });
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toContain('autoBootstrap');
  });
});
