// The flaky-service drill (issue #10), shared by the test suite (test/drills/flaky.test.ts, on src/) and
// the bench (bench/flaky.bench.mjs, on dist/): one `apply` of 100 integrations and 20 webhooks against a
// sandbox that answers 20% of requests with 503, drops 5% of connections, answers 5% with 409, adds
// 400 ms to 5% of them, and lands the webhook batch after the client's request timeout. Everything must
// converge in that one apply: exactly one live resource per manifest, a valid state, an empty next plan.
// The parts of govops are passed in, so the same scenario runs on the sources and on the build.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small seeded PRNG (mulberry32): the sandbox's fault decisions are reproducible from the seed. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function objectStore(name) {
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: ${name}
    cloudAccountId: "123456789012"
    cloudRegion: eu-west-1
    cloudLocationRole: arn:aws:iam::123456789012:role/${name}
    cloudLocationPath: s3://${name}/data
    authenticationType: auto
`;
}

export function hook(name) {
  return `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: http://127.0.0.1:9/${name}
  global: false
  notificationType: [healthCheckFailed]
  actionType: triggered
`;
}

/**
 * @param {object} govops  { startSandbox, ServiceClient, reconcile, parseState, silentLogger }
 * @param {object} [opts]  { integrations = 100, webhooks = 20, seed = 1, timeoutMs = 1000, lateMs = 2500, baseDelayMs = 50, retries = 8,
 *                          faults = true (false: the same apply on a healthy service, the baseline) }
 */
export async function flakyDrill(govops, opts = {}) {
  const { startSandbox, ServiceClient, reconcile, parseState, silentLogger } = govops;
  const nInt = opts.integrations ?? 100;
  const nHook = opts.webhooks ?? 20;
  const timeoutMs = opts.timeoutMs ?? 1000;
  const sandbox = await startSandbox({ port: 0, transitionMs: opts.transitionMs ?? 30, random: seeded(opts.seed ?? 1) });
  const dir = await mkdtemp(join(tmpdir(), 'govops-flaky-'));
  const stats = { requests: 0, retries: 0, byStatus: {}, wallMs: 0 };
  const api = new ServiceClient({
    baseUrl: sandbox.url,
    token: sandbox.adminToken,
    logger: silentLogger(),
    timeoutMs,
    // The client is the only layer that repeats a failed request (issue 23). With about 25% of requests failing
    // (503 or dropped), 5 attempts (the default 4 retries) all fail for ~1 request in 1,000: about one of the
    // drill's requests. An operator facing such a service raises --retries, as the drill does: 9 attempts all
    // fail for ~4 in a million.
    retries: opts.retries ?? 8,
    retryPolicy: { baseDelayMs: opts.baseDelayMs ?? 50, maxDelayMs: 1000 },
    onRequest: (e) => {
      stats.requests++;
      if (e.attempt > 0) stats.retries++;
      const k = e.status === 0 ? (e.error ?? 'none') : String(e.status);
      stats.byStatus[k] = (stats.byStatus[k] ?? 0) + 1;
    },
  });
  const statePath = join(dir, 'state.json');
  const run = (apply) =>
    reconcile(api, {
      source: { root: dir, paths: ['m'] }, plan: { prune: false, allowReplace: false }, apply, logger: silentLogger(), statePath, env: {},
      tuning: { concurrency: 8, timeoutMs: 300_000, pollIntervalMs: 20, pollMaxIntervalMs: 200 },
    });
  try {
    await mkdir(join(dir, 'm'));
    for (let i = 0; i < nInt; i++) await writeFile(join(dir, 'm', `store-${i}.yaml`), objectStore(`store-${i}`));
    for (let i = 0; i < nHook; i++) await writeFile(join(dir, 'm', `hook-${i}.yaml`), hook(`hook-${i}`));
    if (opts.faults !== false) {
      // The batch of webhooks lands after the client's request timeout (the service still performs it).
      sandbox.faults.add({ type: 'latency', method: 'POST', path: '/webhooks', count: 1, latencyMs: opts.lateMs ?? 2500, exclusive: true });
      sandbox.faults.add({ type: 'error', status: 503, rate: 0.2 });
      sandbox.faults.add({ type: 'drop', rate: 0.05 });
      sandbox.faults.add({ type: 'conflict', rate: 0.05 });
      sandbox.faults.add({ type: 'latency', latencyMs: 400, rate: 0.05 });
    }
    const started = performance.now();
    const applied = await run(true);
    stats.wallMs = performance.now() - started;
    sandbox.faults.clear();
    const afterApply = { requests: stats.requests, retries: stats.retries };
    const integrations = await api.listIntegrations();
    const webhooks = await api.listWebhooks();
    const state = parseState(await readFile(statePath, 'utf8'), statePath);
    const next = await run(false);
    return {
      applied,
      next,
      integrations,
      webhooks,
      state,
      stats: { ...stats, ...afterApply },
      faultedRequests: sandbox.requests().filter((r) => r.status === 0 || r.status === 503 || r.status === 409).length,
      webhookPosts: sandbox.requests().filter((r) => r.method === 'POST' && r.path === '/webhooks').map((r) => ({ status: r.status, durationMs: r.durationMs })),
    };
  } finally {
    await api.close();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}
