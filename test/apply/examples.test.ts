import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EXAMPLES, harness, requestLines, type Harness } from './harness.js';

/** How many manifests of a kind the examples hold (so the test follows the examples as they grow). */
function countKind(kind: string): number {
  return readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .reduce((n, f) => n + [...readFileSync(path.join(EXAMPLES, f), 'utf8').matchAll(new RegExp(`^kind: ${kind}$`, 'gm'))].length, 0);
}
const INTEGRATIONS = countKind('Integration');
const WEBHOOKS = countKind('Webhook');
const DATA_SOURCES = countKind('DataSource');
const TOTAL = INTEGRATIONS + WEBHOOKS + DATA_SOURCES;
/** The reads of a plan: the integration and webhook lists, and the data-source list (the examples have data sources). */
const LISTS = ['GET /integrations', 'GET /native-s3/handler', 'GET /webhooks'];

describe('govops apply examples against the sandbox', () => {
  let h: Harness;
  const outputs: string[] = [];
  beforeAll(async () => {
    h = await harness({ examples: true });
  });
  afterAll(async () => {
    await h.close();
  });

  it('plan shows every example as a create, with secrets only as (sensitive)', async () => {
    const r = await h.govops(['plan', 'manifests', '--detailed-exitcode']);
    outputs.push(r.stdout, r.stderr);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/\+ Integration\/analytics-sql \(sql_analytics\)/);
    expect(r.stdout).toMatch(/config\.password = \(sensitive\)/);
    expect(INTEGRATIONS).toBeGreaterThanOrEqual(7);
    expect(r.stdout).toContain(`Plan: ${TOTAL} to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt.`);
    // plan is read-only: exactly the list calls
    expect(DATA_SOURCES).toBeGreaterThanOrEqual(2);
    expect(requestLines(h.sandbox).sort()).toEqual(LISTS);
  });

  it('apply creates everything; all integrations end enabled; dry run precedes each write; status is polled', async () => {
    h.sandbox.clearRequests();
    const r = await h.govops(['apply', 'manifests']);
    outputs.push(r.stdout, r.stderr);
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Apply complete: ${TOTAL} ok, 0 failed, 0 skipped.`);
    expect(r.stdout).toMatch(/RESOURCE\s+ACTION\s+RESULT\s+DURATION/);
    const live = await h.client().listIntegrations();
    expect(live).toHaveLength(INTEGRATIONS);
    expect(live.map((l) => l.status)).toEqual(live.map(() => 'enabled'));
    expect(await h.client().listWebhooks()).toHaveLength(WEBHOOKS);

    const lines = requestLines(h.sandbox);
    const creates = lines.filter((l) => l === 'POST /integrations');
    const dryRuns = lines.filter((l) => l === 'POST /integrations?dryRun=true');
    expect(creates).toHaveLength(INTEGRATIONS);
    expect(dryRuns).toHaveLength(INTEGRATIONS);
    // per integration: its dry run comes before its real create (count prefix: #dry >= #real at every point)
    let dry = 0;
    let real = 0;
    for (const l of lines) {
      if (l === 'POST /integrations?dryRun=true') dry++;
      if (l === 'POST /integrations') {
        real++;
        expect(dry).toBeGreaterThanOrEqual(real);
      }
    }
    // each integration was seen settled: by its status endpoint, or by a list after its create (one list
    // answers for every integration waiting when several polls are due at once)
    const lastCreate = lines.lastIndexOf('POST /integrations');
    const listAfter = lines.slice(lastCreate + 1).includes('GET /integrations');
    for (const l of live) if (!listAfter) expect(lines).toContain(`GET /integrations/${l.id}/status`);
    expect(lines.some((l) => /^GET \/integrations\/\d+\/status$/.test(l)) || listAfter).toBe(true);
    expect(lines.filter((l) => l === 'POST /webhooks')).toHaveLength(1); // one batch
    // data sources: one request per object_store integration, each after that integration's last status poll
    const stores = live.filter((l) => l.type === 'object_store');
    expect(lines.filter((l) => l === 'POST /native-s3/handler')).toHaveLength(stores.length);
    const firstDataSourcePost = lines.indexOf('POST /native-s3/handler');
    expect(firstDataSourcePost).toBeGreaterThan(Math.min(...stores.map((s) => lines.indexOf(`GET /integrations/${s.id}/status`))));
    expect(await h.client().listDataSources()).toHaveLength(DATA_SOURCES);
  });

  it('a second plan shows no changes and makes exactly the list requests', async () => {
    h.sandbox.clearRequests();
    const r = await h.govops(['plan', 'manifests', '--detailed-exitcode']);
    outputs.push(r.stdout, r.stderr);
    expect(r.stdout).toMatch(/No changes/);
    expect(r.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt\./);
    expect(r.code).toBe(0);
    expect(requestLines(h.sandbox).sort()).toEqual(LISTS);
  });

  it('json and markdown outputs of the same plan', async () => {
    const j = await h.govops(['plan', 'manifests', '--output', 'json']);
    outputs.push(j.stdout, j.stderr);
    const plan = JSON.parse(j.stdout);
    expect(plan.formatVersion).toBe(2);
    expect(plan.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: TOTAL });
    const m = await h.govops(['plan', 'manifests', '--output', 'markdown']);
    outputs.push(m.stdout, m.stderr);
    expect(m.stdout).toMatch(/^### govops plan/);
  });

  it('no secret value appears in any output, log line or the state file', async () => {
    const state = await readFile(h.statePath, 'utf8');
    const all = [...outputs, state].join('\n');
    const values = Object.entries(h.env).filter(([k]) => k.startsWith('GOVOPS_SECRET_EXAMPLE_')).map(([, v]) => v);
    expect(values.length).toBeGreaterThan(5);
    for (const v of values) expect(all).not.toContain(v);
    expect(JSON.parse(state).resources).toHaveLength(TOTAL);
  });
});
