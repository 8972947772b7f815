/**
 * A round of the daemon's automatic retries stops at the first answer that holds for every retry: a 401/403 (the
 * token, its permission), a refused connection, and a 429 the client's own retries did not get past (the service said
 * slow down). The sandbox's fault injection answers the retry requests; its request log counts what was sent.
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { WebhookHealth } from '../../src/daemon/webhook-health.js';
import { ErrorCode } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { backgroundClock } from '../../src/util/clock.js';
import { hookItem, startWorld, type World } from '../deliveries/world.js';
import { Cleanup, jsonLogSink } from './helpers.js';

const cleanup = new Cleanup();
let w: World;
afterEach(async () => {
  await cleanup.run();
  await w?.close();
});

async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = (m?.values as Array<{ value: number; labels: Record<string, string | number> }> | undefined)?.find((x) =>
    Object.entries(labels).every(([k, val]) => String(x.labels[k]) === val),
  );
  return v?.value;
}

const HOOKS = 6;

/**
 * Six managed webhooks whose receivers fail (503), one failed delivery each polled, and the automatic retries of
 * them due at the next round (`nextRound`: a minute later). One automatic retry per delivery: a retry counted against
 * a delivery gives it up at once ("giving up").
 */
async function sixFailedDeliveries() {
  w = await startWorld();
  const paths = Array.from({ length: HOOKS }, (_, i) => `/h${i}`);
  const hooks = await w.createHooks(paths.map((p) => hookItem(w, p.slice(1), p)));
  for (const p of paths) w.rx.set(p, 503);
  // no retry of the client's own: the answer the test injects is the one the round gets
  const api = new ServiceClient({ baseUrl: w.url, token: w.admin, retries: 0 });
  cleanup.add(() => api.close());
  let now = Date.now();
  const registry = new Registry();
  const { logs, sink } = jsonLogSink();
  const health = new WebhookHealth({
    api,
    logger: createLogger({ level: 'debug', destination: sink }),
    registry,
    intervalMs: 60_000,
    clock: { ...backgroundClock, now: () => now, monotonic: () => now },
    autoRetry: { maxAttempts: 1, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
    managed: async () => new Map(hooks.map((h: any) => [String(h.id), String(h.name)])),
  });
  await health.pollOnce(); // baseline: empty
  await w.fire('modelAccessRequested');
  expect(await health.pollOnce()).toMatchObject({ newRecords: HOOKS, retried: 0 });
  const retryRequests = async () => {
    const { requests } = await w.control('GET', '/_sandbox/requests');
    return requests.filter((r: { method: string; path: string }) => r.method === 'POST' && r.path.startsWith('/webhooks/history/retry/')).length;
  };
  const hits = () => paths.reduce((n, p) => n + (w.rx.hits.get(p) ?? 0), 0);
  const retryFault = (status: number) =>
    w.control('POST', '/_sandbox/faults', { type: 'error', method: 'POST', path: '/webhooks/history/retry/:id', status });
  return {
    health,
    registry,
    logs,
    retryRequests,
    hits,
    retryFault,
    nextRound: () => {
      now += 60_000;
      return health.pollOnce();
    },
  };
}

describe('automatic retries refused by the service (403: the token lacks the permission)', () => {
  it('a round sends one retry request, logs the refusal once with its hint, attempts nothing else and spends nothing', async () => {
    const t = await sixFailedDeliveries();
    await t.retryFault(403);
    // the old code: one retry request per due delivery (6), each logged at warn and counted as `error`
    expect(await t.nextRound()).toMatchObject({ ok: true, retried: 0, stopped: 'refused', notAttempted: HOOKS - 1 });
    expect(await t.retryRequests()).toBe(1);
    const refusals = t.logs.filter((l) => l.level === 40);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ code: ErrorCode.apiAuth, reason: 'refused', notAttempted: HOOKS - 1 });
    expect(String(refusals[0]!.error)).toMatch(/POST \/webhooks\/history\/retry\/\d+: 403 /);
    expect(String(refusals[0]!.hint)).toMatch(/lacks the permission to retry/);
    expect(JSON.stringify(t.logs)).not.toContain(w.admin);
    expect(t.health.status().autoRetry).toMatchObject({
      pending: HOOKS,
      exhausted: 0,
      retried: { delivered: 0, failed: 0, gone: 0, error: 0 },
      stopped: { reason: 'refused', code: ErrorCode.apiAuth, rounds: 1, notAttempted: HOOKS - 1 },
    });
    expect(await metric(t.registry, 'govops_webhook_auto_retry_stopped', { reason: 'refused' })).toBe(1);
    expect(await metric(t.registry, 'govops_webhook_auto_retry_rounds_stopped_total', { reason: 'refused' })).toBe(1);
    expect(await metric(t.registry, 'govops_webhook_auto_retries_total', { result: 'error' })).toBeUndefined();

    // the next round starts again with one request, said at debug only (the refusal was said)
    expect(await t.nextRound()).toMatchObject({ retried: 0, stopped: 'refused' });
    expect(await t.retryRequests()).toBe(2);
    expect(t.logs.filter((l) => l.level === 40)).toHaveLength(1);
    expect(t.health.status().autoRetry).toMatchObject({ stopped: { rounds: 2 } });
    expect(await metric(t.registry, 'govops_webhook_auto_retry_rounds_stopped_total', { reason: 'refused' })).toBe(2);
    expect(t.hits()).toBe(HOOKS); // the event's deliveries only: nothing reached a receiver

    // the permission given: every delivery is retried (none was spent), the stop is over
    await w.control('DELETE', '/_sandbox/faults');
    expect(await t.nextRound()).toMatchObject({ retried: HOOKS });
    expect(await t.retryRequests()).toBe(2 + HOOKS);
    expect(t.hits()).toBe(2 * HOOKS);
    expect(t.health.status().autoRetry).toMatchObject({ pending: 0, exhausted: HOOKS, retried: { failed: HOOKS, error: 0 } });
    expect((t.health.status().autoRetry as Record<string, unknown>).stopped).toBeUndefined();
    expect(await metric(t.registry, 'govops_webhook_auto_retry_stopped', { reason: 'refused' })).toBe(0);
    expect(t.logs.filter((l) => /retries resume/.test(String(l.msg)))).toHaveLength(1);
  });
});

describe('an automatic retry answered 429 after the client retried it (the service said slow down)', () => {
  it('is not spent against the delivery (it stays due) nor counted as a failed retry, and it stops the round', async () => {
    const t = await sixFailedDeliveries();
    await w.control('POST', '/_sandbox/faults', { type: 'error', method: 'POST', path: '/webhooks/history/retry/:id', status: 429, count: 1 });
    // the old code: an `error`, the delivery's one retry spent ("giving up"), and the other five sent anyway
    expect(await t.nextRound()).toMatchObject({ ok: true, retried: 0, stopped: 'rate_limited', notAttempted: HOOKS - 1 });
    expect(await t.retryRequests()).toBe(1);
    expect(t.logs.filter((l) => /giving up/.test(String(l.msg)))).toEqual([]);
    const said = t.logs.filter((l) => l.level === 40);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ code: ErrorCode.apiRateLimited, reason: 'rate_limited', notAttempted: HOOKS - 1 });
    expect(t.health.status().autoRetry).toMatchObject({
      pending: HOOKS,
      exhausted: 0,
      retried: { delivered: 0, failed: 0, gone: 0, error: 0 },
      stopped: { reason: 'rate_limited', code: ErrorCode.apiRateLimited },
    });
    expect(await metric(t.registry, 'govops_webhook_auto_retry_stopped', { reason: 'rate_limited' })).toBe(1);
    expect(await metric(t.registry, 'govops_webhook_auto_retry_rounds_stopped_total', { reason: 'rate_limited' })).toBe(1);
    expect(await metric(t.registry, 'govops_webhook_auto_retries_total', { result: 'error' })).toBeUndefined();

    // the next round: every delivery retried once, the one rate limited included (it was not spent)
    expect(await t.nextRound()).toMatchObject({ retried: HOOKS });
    expect(t.hits()).toBe(2 * HOOKS);
    expect(t.health.status().autoRetry).toMatchObject({ pending: 0, exhausted: HOOKS, retried: { failed: HOOKS, error: 0 } });
    expect(await metric(t.registry, 'govops_webhook_auto_retry_stopped', { reason: 'rate_limited' })).toBe(0);
  });
});

describe('a stop with nothing left behind it', () => {
  it('is over once no delivery is pending (each retried by hand and delivered): the gauge and /status say so', async () => {
    const t = await sixFailedDeliveries();
    await t.retryFault(403);
    expect(await t.nextRound()).toMatchObject({ stopped: 'refused' });
    // the operator retries every delivery by hand, with a token that may, once the receivers are back
    await w.control('DELETE', '/_sandbox/faults');
    for (let i = 0; i < HOOKS; i++) w.rx.set(`/h${i}`, 200);
    const history = await w.call('GET', '/webhooks/history?pageSize=100&successOrFailure=failure');
    const failed = (Array.isArray(history) ? history : history.records ?? history.items) as Array<{ id: string | number }>;
    expect(failed).toHaveLength(HOOKS);
    for (const r of failed) await w.call('POST', `/webhooks/history/retry/${r.id}`);
    expect(t.hits()).toBe(2 * HOOKS);
    // the next round reads the deliveries that got through: nothing is pending, nothing is sent
    expect(await t.nextRound()).toMatchObject({ retried: 0 });
    expect(await t.retryRequests()).toBe(1 + HOOKS);
    const status = t.health.status().autoRetry as Record<string, unknown>;
    expect(status).toMatchObject({ pending: 0 });
    // the old code: `stopped` stayed (and the gauge at 1) until a round sent a retry, which none ever would
    expect(status.stopped).toBeUndefined();
    expect(await metric(t.registry, 'govops_webhook_auto_retry_stopped', { reason: 'refused' })).toBe(0);
    expect(t.logs.filter((l) => /retries resume|nothing is pending/.test(String(l.msg)))).toHaveLength(1);
  });
});
