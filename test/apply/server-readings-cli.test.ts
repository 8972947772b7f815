/**
 * Issue 22 (apply side) through the built CLI against the sandbox under the server behaviours where the
 * interface is silent: a create answered 503 after it was carried out (every create endpoint), statuses the
 * interface does not list, a status endpoint that lags right after a create, a dry run answering 200 with only
 * the overall status failed; and issue 23's one owner per retry (a service answering 503 to everything). After
 * each drill a plan is a no-op and the service holds exactly one resource per manifest, all recorded.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANSWER_LOST, ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { sendDryRun } from '../../src/preview/dry-run.js';
import { dataSourceManifest, objectStoreManifest } from '../helpers/manifests.js';
import { harness, requestLines, type Harness } from './harness.js';
import { sqlManifest, webhookManifest } from './inproc.js';

const SECRETS = { GOVOPS_SECRET_SQL_PASSWORD: 'pw-readings-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-readings-2', GOVOPS_SECRET_HOOK_SECRET: 'hook-readings-3' };
const HOOKS = ['wx-wh-0', 'wx-wh-1', 'wx-wh-2', 'wx-wh-3', 'wx-wh-4'];

let h: Harness;
const run = (args: string[]) => h.govops(args, SECRETS);
const writes = (): string[] => requestLines(h.sandbox).filter((l) => !l.startsWith('GET') && !l.includes('dryRun'));

async function start(transitionMs = 50): Promise<void> {
  h = await harness({ transitionMs });
  await mkdir(path.join(h.dir, 'manifests'));
}

/** Two integrations, two data sources, five webhooks. */
async function writeAll(): Promise<void> {
  await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com'));
  await h.writeManifest('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
  await h.writeManifest('events.yaml', dataSourceManifest('events', 'raw', 's3://raw.example.com/base/events'));
  await h.writeManifest('logs.yaml', dataSourceManifest('logs', 'raw', 's3://raw.example.com/base/logs'));
  for (const n of HOOKS) await h.writeManifest(`${n}.yaml`, webhookManifest(n));
}

/** Exactly one live resource per manifest, each recorded by id (nothing pending), and a plan that is a no-op. */
async function expectConverged(expected: { integrations: number; webhooks: string[]; dataSources: number }): Promise<void> {
  const c = new ServiceClient({ baseUrl: h.sandbox.url, token: h.sandbox.adminToken, logger: silentLogger() });
  try {
    const [ints, hooks, sources] = await Promise.all([c.listIntegrations(), c.listWebhooks(), c.listDataSources()]);
    expect(ints).toHaveLength(expected.integrations);
    expect(ints.every((i) => i.status === 'enabled')).toBe(true);
    expect(hooks.map((w) => w.name).sort()).toEqual([...expected.webhooks].sort());
    expect(sources).toHaveLength(expected.dataSources);
    const state = (await h.state()) as { resources: Array<{ kind: string; id: string; pending?: string }> };
    expect(state.resources.filter((r) => r.pending !== undefined)).toEqual([]);
    const recorded = (kind: string) => state.resources.filter((r) => r.kind === kind).map((r) => r.id).sort();
    expect(recorded('Integration')).toEqual(ints.map((i) => i.id).sort());
    expect(recorded('Webhook')).toEqual(hooks.map((w) => w.id).sort());
    expect(recorded('DataSource')).toEqual(sources.map((d) => d.id).sort());
  } finally {
    await c.close();
  }
  const plan = await run(['plan', 'manifests', '--detailed-exitcode']);
  expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  expect(plan.stdout).toContain('No changes');
}

afterEach(async () => {
  await h.close();
});

describe('a create answered 503 after it was carried out (behaviour 503-after-success, every create endpoint)', () => {
  beforeEach(() => start());

  it('apply resolves every lost answer by natural key: each create sent once, no duplicate, nothing unrecorded, said to be its own', async () => {
    await writeAll();
    h.sandbox.setBehaviours(['503-after-success']);
    // at the default level of a one-shot command (warn), the lost answers are said to be govops' own creates
    const r = await h.govops(['apply', 'manifests', '--webhook-batch-size', '2'], { ...SECRETS, GOVOPS_LOG_LEVEL: 'warn' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // one POST per create request (three webhook batches): each 503 was looked up, found, and never re-sent
    expect(writes().sort()).toEqual(['POST /integrations', 'POST /integrations', 'POST /native-s3/handler', 'POST /webhooks', 'POST /webhooks', 'POST /webhooks'].sort());
    expect(r.stderr).toContain(ANSWER_LOST);
    expect(r.stdout + r.stderr).not.toContain('created outside this apply');
    await expectConverged({ integrations: 2, webhooks: HOOKS, dataSources: 2 });
    // The data sources are govops' own: removing a manifest prunes it (no orphan that "No changes" hides).
    await rm(path.join(h.dir, 'manifests', 'logs.yaml'));
    const prune = await run(['apply', 'manifests', '--prune']);
    expect(prune.code, prune.stdout + prune.stderr).toBe(0);
    expect(writes()).toContain('DELETE /dataSource/2');
    await expectConverged({ integrations: 2, webhooks: HOOKS, dataSources: 1 });
  });
});

describe('every write answered 503 after it was carried out (behaviour 503-after-success-all: updates and deletes too)', () => {
  // transitions long enough that a re-sent PUT or integration DELETE finds it editing / deleting (409, the task's)
  beforeEach(() => start(400));

  it('an update re-sent after a lost answer converges; a delete whose retry finds 404 is deleted; the plan after is a no-op', async () => {
    await writeAll();
    const first = await run(['apply', 'manifests']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    h.sandbox.setBehaviours(['503-after-success-all']);
    h.sandbox.clearRequests();
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com', { port: 1500 }));
    await rm(path.join(h.dir, 'manifests', 'wx-wh-4.yaml'));
    await rm(path.join(h.dir, 'manifests', 'logs.yaml'));
    const r = await run(['apply', 'manifests', '--prune']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // the PUT whose answer was lost is sent again (idempotent), the re-sent webhook DELETE finds 404: deleted
    expect(writes().filter((l) => /^PUT \/integrations\//.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(writes().filter((l) => /^DELETE \/webhooks\//.test(l))).toHaveLength(2);
    await expectConverged({ integrations: 2, webhooks: HOOKS.slice(0, 4), dataSources: 1 });
    // the integration delete (and its last data source's) under lost answers too
    await rm(path.join(h.dir, 'manifests', 'raw.yaml'));
    await rm(path.join(h.dir, 'manifests', 'events.yaml'));
    const gone = await run(['apply', 'manifests', '--prune', '--max-deletes', '2']);
    expect(gone.code, gone.stdout + gone.stderr).toBe(0);
    await expectConverged({ integrations: 1, webhooks: HOOKS.slice(0, 4), dataSources: 0 });
  });
});

describe('statuses the interface does not list (behaviour unknown-statuses)', () => {
  beforeEach(() => start(400));

  it('pending / updating are not settled: apply waits for enabled (the data sources need it), then a plan is a no-op', async () => {
    await writeAll();
    h.sandbox.setBehaviours(['unknown-statuses']);
    const r = await run(['apply', 'manifests']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(requestLines(h.sandbox).some((l) => /^GET \/integrations\/\d+\/status$/.test(l))).toBe(true);
    await expectConverged({ integrations: 2, webhooks: HOOKS, dataSources: 2 });
    // an update goes through `updating` the same way
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com', { port: 1500 }));
    const update = await run(['apply', 'manifests']);
    expect(update.code, update.stdout + update.stderr).toBe(0);
    await expectConverged({ integrations: 2, webhooks: HOOKS, dataSources: 2 });
  });

  it('a status that never settles keeps polling until --timeout, then fails naming it; once it settles the next apply converges', async () => {
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com'));
    h.sandbox.setBehaviours(['unknown-statuses']);
    h.sandbox.setStuckTransitions(['creating']);
    const r = await run(['apply', 'manifests', '--timeout', '1500ms']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('last status: "pending", which the interface does not list');
    h.sandbox.setStuckTransitions(false);
    const again = await run(['apply', 'manifests']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(writes().filter((l) => l === 'POST /integrations')).toHaveLength(1);
    await expectConverged({ integrations: 1, webhooks: [], dataSources: 0 });
  });
});

describe('a status endpoint that lags right after a create (behaviour status-404-lag)', () => {
  beforeEach(() => start());

  it('a 404 from the status endpoint is confirmed with GET /integrations/{id}: not "disappeared", applied once', async () => {
    await writeAll();
    h.sandbox.setBehaviours(['status-404-lag']);
    const r = await run(['apply', 'manifests']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('disappeared');
    const lines = requestLines(h.sandbox);
    expect(lines.filter((l) => /^GET \/integrations\/\d+$/.test(l)).length).toBeGreaterThan(0);
    await expectConverged({ integrations: 2, webhooks: HOOKS, dataSources: 2 });
  });
});

describe('a dry run answering 200 with only the overall validation status failed (behaviour dry-run-200-failed)', () => {
  beforeEach(() => start());

  it('stops the real write; apply and preview read the result with the same rule', async () => {
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.invalid'));
    h.sandbox.setBehaviours(['dry-run-200-failed']);
    const r = await run(['apply', 'manifests']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('overall validation status failed');
    expect(requestLines(h.sandbox)).toContain('POST /integrations?dryRun=true');
    expect(writes()).toEqual([]);
    // preview: the same answer is a failed dry run (the rule is one function, apply/validation.ts)
    const c = h.client();
    const body = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'db.invalid', database: 'd', schema: 's', username: 'u', password: 'p' } };
    const dry = await sendDryRun(c, { method: 'POST', path: '/integrations?dryRun=true', body }, (s) => s);
    expect(dry.status).toBe('failed');
    expect(dry.reason).toContain('overall validation status failed');
    // fixed manifest: applied once
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com'));
    const fixed = await run(['apply', 'manifests']);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    await expectConverged({ integrations: 1, webhooks: [], dataSources: 0 });
  });
});

describe('one owner per retry: a service answering 503 to everything', () => {
  beforeEach(() => start());

  it('one request is sent at most --retries + 1 times (no layer above the client repeats it), within the documented time', async () => {
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com'));
    // the lists answer; every POST (the dry run first) answers 503
    h.sandbox.faults.add({ type: 'error', method: 'POST', path: '/integrations', status: 503 });
    const started = Date.now();
    const r = await run(['apply', 'manifests', '--retries', '3']);
    const elapsed = Date.now() - started;
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('GOVOPS_API_UNAVAILABLE');
    // 4 attempts of the dry run, then nothing: the apply phase does not repeat the client's retries
    expect(requestLines(h.sandbox).filter((l) => l.startsWith('POST'))).toEqual(Array(4).fill('POST /integrations?dryRun=true'));
    // backoff ceilings 200 + 400 + 800 ms (docs/decisions.md): far below 10 s even with process start-up
    expect(elapsed).toBeLessThan(10_000);
    // everything answering 503: the plan's first list, 4 times, then exit 1
    h.sandbox.clearRequests();
    h.sandbox.faults.add({ type: 'error', method: 'GET', path: '*', status: 503 });
    const plan = await run(['plan', 'manifests', '--retries', '3']);
    expect(plan.code).toBe(1);
    const lines = requestLines(h.sandbox);
    for (const l of new Set(lines)) expect(lines.filter((x) => x === l).length).toBeLessThanOrEqual(4);
  });

  it('a create answered 503 every time: at most retries + 1 POSTs, each looked up first; the outcome is unknown, the intent kept', async () => {
    const c = new ServiceClient({ baseUrl: h.sandbox.url, token: h.sandbox.adminToken, logger: silentLogger(), retries: 2, retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 } });
    try {
      h.sandbox.faults.add({ type: 'error', method: 'POST', path: '/integrations', status: 503 });
      const body = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'db.example.com', database: 'd', schema: 's', username: 'u', password: 'p' } };
      await expect(c.createIntegration(body)).rejects.toMatchObject({ code: 'GOVOPS_CREATE_UNSETTLED' });
      const lines = requestLines(h.sandbox);
      expect(lines.filter((l) => l === 'POST /integrations')).toHaveLength(3);
      expect(lines.filter((l) => l === 'GET /integrations')).toHaveLength(3);
    } finally {
      await c.close();
    }
  });
});
