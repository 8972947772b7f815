/**
 * The daemon's webhook delivery health against the sandbox with a real receiver: incremental polling
 * (the sandbox's request log shows only the new pages), a record listed late still counted, metrics
 * and /status after failures in a running daemon, and automatic retries within their cap and rate.
 */
import { Writable } from 'node:stream';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning } from '../../src/daemon/run.js';
import { WebhookHealth, managedWebhooksFromState } from '../../src/daemon/webhook-health.js';
import { webhookIdentity } from '../../src/service/kinds.js';
import { newState, saveState } from '../../src/state/store.js';
import { StateWriter } from '../../src/state/journal.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { backgroundClock } from '../../src/util/clock.js';
import { ApiError, ErrorCode, TransportError, UserError } from '../../src/errors.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { hookItem, startWorld, type World } from '../deliveries/world.js';
import { Cleanup, getJson, until } from './helpers.js';
import { ManualClock } from '../helpers/clock.js';

const cleanup = new Cleanup();
let w: World;
afterEach(async () => {
  await cleanup.run();
  await w?.close();
});

function client(): ServiceClient {
  const c = new ServiceClient({ baseUrl: w.url, token: w.admin, retries: 0 });
  cleanup.add(() => c.close());
  return c;
}

function memoryLogger() {
  const lines: any[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', destination: stream }), lines };
}

async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = (m?.values as Array<{ value: number; labels: Record<string, string | number> }> | undefined)?.find((x) =>
    Object.entries(labels).every(([k, val]) => String(x.labels[k]) === val),
  );
  return v?.value;
}

describe('webhook delivery health: incremental polling', () => {
  it('reads only new pages: one request when nothing is new, the new pages when records arrived', async () => {
    w = await startWorld();
    const [h] = await w.createHooks([hookItem(w, 'h', '/h')]);
    await w.seed({ webhookId: h.id, count: 1000, from: new Date(Date.now() - 86_400_000).toISOString(), stepMs: 1000 });
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      overlapMs: 0,
      managed: async () => new Map([[String(h.id), 'h']]),
    });
    await w.clearRequests();
    const first = await health.pollOnce();
    expect(first).toMatchObject({ ok: true, baseline: true, requests: 1 });

    await w.clearRequests();
    expect(await health.pollOnce()).toMatchObject({ ok: true, baseline: false, requests: 1, newRecords: 0 });
    expect((await w.historyRequests()).map((r) => r.query.offset)).toEqual(['0']);

    for (let i = 0; i < 130; i++) await w.fire('modelAccessRequested');
    await w.clearRequests();
    expect(await health.pollOnce()).toMatchObject({ ok: true, newRecords: 130 });
    const reqs = await w.historyRequests();
    expect(reqs.map((r) => [r.query.offset, r.query.pageSize])).toEqual([
      ['0', '100'],
      ['100', '100'],
    ]);
    expect(reqs[0]!.query).toMatchObject({ sortField: 'createdAt', sortOrder: 'desc', includeGlobal: 'true', includeUser: 'true' });

    await w.clearRequests();
    expect(await health.pollOnce()).toMatchObject({ newRecords: 0, requests: 1 });
    expect((health.status().webhooks as any[])[0]).toMatchObject({ name: 'h', delivered: 130, failed: 0 });
  });

  it("lists each managed name once, sorted, with its first id, reading the managed webhooks once (not once per name)", async () => {
    w = await startWorld();
    /** The managed webhooks, counting the passes over them. */
    class CountedMap extends Map<string, string> {
      passes = 0;
      override [Symbol.iterator]() {
        this.passes++;
        return super[Symbol.iterator]();
      }
      override entries() {
        this.passes++;
        return super.entries();
      }
      override values() {
        this.passes++;
        return super.values();
      }
    }
    const managed = new CountedMap();
    for (let i = 0; i < 40; i++) managed.set(String(1000 + i), `hook-${String(39 - i).padStart(2, '0')}`);
    managed.set('999', 'hook-05'); // a second id under a name: the first one listed is reported
    const health = new WebhookHealth({ api: client(), logger: silentLogger(), registry: new Registry(), intervalMs: 60_000, managed: async () => managed });
    await health.pollOnce();
    managed.passes = 0;
    const listed = health.status().webhooks as Array<{ name: string; id: string }>;
    expect(listed.map((x) => x.name)).toEqual(Array.from({ length: 40 }, (_, i) => `hook-${String(i).padStart(2, '0')}`));
    expect(listed.find((x) => x.name === 'hook-05')?.id).toBe(String(1000 + 34));
    expect(listed.find((x) => x.name === 'hook-39')?.id).toBe('1000');
    // One pass for the whole list: a pass per name is quadratic (10,000 webhooks: 2.4 s per /status).
    expect(managed.passes).toBeLessThanOrEqual(1);
  });

  it('forgets a webhook no longer managed (deleted or renamed): its figures and every metric series of it go', async () => {
    w = await startWorld();
    const [gone, kept] = await w.createHooks([hookItem(w, 'gone', '/gone'), hookItem(w, 'kept', '/kept')]);
    w.rx.set('/gone', 500);
    w.rx.set('/kept', 500);
    let managed = new Map([
      [String(gone.id), 'gone'],
      [String(kept.id), 'kept'],
    ]);
    const registry = new Registry();
    const health = new WebhookHealth({ api: client(), logger: silentLogger(), registry, intervalMs: 60_000, managed: async () => managed });
    await health.pollOnce();
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    const series = async () => (await registry.metrics()).split('\n').filter((l) => l.includes('webhook="gone"'));
    expect(await series()).not.toEqual([]);
    expect((health.status().webhooks as any[]).map((x) => x.name)).toEqual(['gone', 'kept']);

    managed = new Map([[String(kept.id), 'kept']]);
    await health.pollOnce();
    expect(await series()).toEqual([]);
    expect((health.status().webhooks as any[]).map((x) => x.name)).toEqual(['kept']);
    expect(await metric(registry, 'govops_webhook_last_failure_timestamp_seconds', { webhook: 'kept' })).toBeGreaterThan(0);
    expect(await metric(registry, 'govops_webhook_deliveries_total', { webhook: 'kept', outcome: 'failed' })).toBe(1);
    // Its deliveries count as unmanaged from then on.
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    expect(await series()).toEqual([]);
    expect(await metric(registry, 'govops_webhook_deliveries_total', { webhook: '(unmanaged)', outcome: 'failed' })).toBe(1);
  });

  it('counts a record the service lists after newer ones (a slow delivery), within the overlap', async () => {
    w = await startWorld({ deliveryTimeoutMs: 20_000 });
    const [slow, quick] = await w.createHooks([hookItem(w, 'slow', '/slow'), hookItem(w, 'quick', '/quick', { notificationType: ['userCreated'] })]);
    w.rx.set('/slow', 'hold');
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      managed: async () =>
        new Map([
          [String(slow.id), 'slow'],
          [String(quick.id), 'quick'],
        ]),
    });
    expect(await health.pollOnce()).toMatchObject({ baseline: true, newRecords: 0 });
    await w.control('POST', '/_sandbox/events', { notificationType: 'modelAccessRequested' }); // held by the receiver
    await w.rx.held();
    await w.control('POST', '/_sandbox/events', { notificationType: 'userCreated' }); // no wait: slow's delivery is still held
    await until(async () => (await w.call('GET', '/webhooks/history?includeGlobal=true')).records.some((r: any) => r.name === 'quick'));
    const before = await health.pollOnce();
    expect(before.newRecords).toBe(1); // quick's; slow's delivery is not listed yet
    w.rx.release();
    await w.control('GET', '/_sandbox/webhooks/idle');
    const page = await w.call('GET', '/webhooks/history?includeGlobal=true');
    const [q, s] = [page.records.find((r: any) => r.name === 'quick'), page.records.find((r: any) => r.name === 'slow')];
    expect(Date.parse(s.createdAt)).toBeLessThanOrEqual(Date.parse(q.createdAt)); // listed late: created before
    expect(await health.pollOnce()).toMatchObject({ newRecords: 1 });
    const byName = Object.fromEntries((health.status().webhooks as any[]).map((x) => [x.name, x]));
    expect([byName.slow.delivered, byName.quick.delivered]).toEqual([1, 1]);
  });
});

describe('webhook delivery health: lifecycle', () => {
  it('polls every interval once started and stops when its AbortSignal aborts', async () => {
    w = await startWorld();
    const health = new WebhookHealth({ api: client(), logger: silentLogger(), registry: new Registry(), intervalMs: 50, managed: async () => new Map() });
    const abort = new AbortController();
    health.start(abort.signal);
    await until(() => (health.status().polls as number) >= 3);
    abort.abort();
    await health.stop();
    const polls = health.status().polls as number;
    await w.clearRequests();
    await new Promise((r) => setTimeout(r, 300));
    expect(health.status().polls).toBe(polls);
    expect(await w.historyRequests()).toEqual([]);
  });
});

describe('webhook delivery health in the running daemon', () => {
  it('exports metrics and shows recent failures per managed webhook in /status', async () => {
    w = await startWorld({ deliveryTimeoutMs: 300 });
    const dir = await cleanup.tmp('govops-wh-manifests-');
    const home = await cleanup.tmp('govops-wh-home-');
    const hook = (name: string, path: string) => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: ${w.rx.url}${path}
  global: true
  notificationType: [modelAccessRequested]
  actionType: triggered
`;
    await writeFile(join(dir, 'hooks.yaml'), `${hook('good', '/good')}---\n${hook('dead', '/dead')}`);
    await w.createHooks([hookItem(w, 'foreign', '/foreign')]);
    w.rx.set('/dead', 'hang');
    const running = await startRunning(
      {
        branch: 'main',
        path: '.',
        dir,
        intervalMs: 60_000,
        resyncMs: 60_000,
        selfHeal: false,
        plan: { prune: false, allowReplace: false },
        listen: { host: '127.0.0.1', port: 0 },
        statePath: join(home, 'state.json'),
        workdir: join(home, 'work'),
        debounceMs: 100,
        webhookHealth: { intervalMs: 150 },
      },
      silentLogger(),
      (onRequest) => new ServiceClient({ baseUrl: w.url, token: w.admin, onRequest, retries: 0 }),
    );
    cleanup.add(() => running.shutdown(2000));
    const url = running.daemon.url;
    // managed webhooks known (state written) and a first poll done before any delivery
    await until(async () => {
      const s = (await getJson(`${url}/status`)).body.webhookHealth;
      return s.polls >= 1 && s.webhooks.length === 2;
    });
    await w.fire('modelAccessRequested');
    await w.fire('modelAccessRequested');

    const status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body.webhookHealth;
      const dead = s.webhooks.find((x: any) => x.name === 'dead');
      return dead.failed === 2 && s.unmanaged.delivered === 2 ? s : undefined;
    });
    const dead = status.webhooks.find((x: any) => x.name === 'dead');
    const good = status.webhooks.find((x: any) => x.name === 'good');
    expect(dead).toMatchObject({ failed: 2, delivered: 0, healthy: false });
    expect(dead.recentFailures).toHaveLength(2);
    expect(dead.recentFailures[0]).toMatchObject({ event: 'modelAccessRequested', statusCode: 500, code: 'ESOCKETTIMEDOUT' });
    expect(good).toMatchObject({ delivered: 2, failed: 0, healthy: true, recentFailures: [] });
    expect(status.lastError).toBeUndefined();
    expect(status.autoRetry).toBeUndefined();

    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('govops_webhook_deliveries_total{webhook="dead",event="modelAccessRequested",outcome="failed"} 2');
    expect(metrics).toContain('govops_webhook_deliveries_total{webhook="good",event="modelAccessRequested",outcome="delivered"} 2');
    expect(metrics).toContain('govops_webhook_deliveries_total{webhook="(unmanaged)",event="modelAccessRequested",outcome="delivered"} 2');
    expect(metrics).toContain('govops_webhook_delivery_failures_total{webhook="dead",code="ESOCKETTIMEDOUT"} 2');
    const lastFailure = /govops_webhook_last_failure_timestamp_seconds\{webhook="dead"\} (\S+)/.exec(metrics);
    expect(Number(lastFailure?.[1])).toBeCloseTo(Date.parse(dead.lastFailureAt) / 1000, 3);
    expect(metrics).not.toContain('govops_webhook_last_failure_timestamp_seconds{webhook="good"}');
    expect(metrics).toMatch(/govops_webhook_health_polls_total\{result="ok"\} [1-9]/);
    expect(metrics).not.toContain('govops_webhook_auto_retries_total');
    expect((await getJson(`${url}/status`)).body.options).toMatchObject({ webhookHealthIntervalMs: 150, autoRetryFailed: false });
  });
});

describe('automatic retries', () => {
  it('retries failed deliveries of managed webhooks with backoff, up to the cap; each logged and counted', async () => {
    w = await startWorld();
    const [dead, flaky] = await w.createHooks([hookItem(w, 'dead', '/dead'), hookItem(w, 'flaky', '/flaky'), hookItem(w, 'foreign', '/foreign')]);
    for (const p of ['/dead', '/flaky', '/foreign']) w.rx.set(p, 503);
    let now = Date.now();
    const registry = new Registry();
    const { logger, lines } = memoryLogger();
    const health = new WebhookHealth({
      api: client(),
      logger,
      registry,
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 2, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () =>
        new Map([
          [String(dead.id), 'dead'],
          [String(flaky.id), 'flaky'],
        ]),
    });
    await health.pollOnce(); // baseline: empty
    await w.fire('modelAccessRequested'); // all three fail
    expect(await health.pollOnce()).toMatchObject({ newRecords: 3, retried: 0 }); // not due yet
    const hits = () => ['/dead', '/flaky', '/foreign'].map((p) => w.rx.hits.get(p) ?? 0);
    expect(hits()).toEqual([1, 1, 1]);

    now += 1000;
    expect(await health.pollOnce()).toMatchObject({ retried: 2 }); // the unmanaged one is never retried
    expect(hits()).toEqual([2, 2, 1]);

    w.rx.set('/flaky', 'ok');
    now += 1999;
    expect(await health.pollOnce()).toMatchObject({ retried: 0 }); // backoff doubled: 2 s
    now += 1;
    expect(await health.pollOnce()).toMatchObject({ retried: 2 });
    expect(hits()).toEqual([3, 3, 1]);

    now += 600_000;
    expect(await health.pollOnce()).toMatchObject({ retried: 0 }); // dead: cap of 2 reached; flaky: delivered
    expect(hits()).toEqual([3, 3, 1]);

    const status = health.status().autoRetry as any;
    expect(status).toMatchObject({ pending: 0, exhausted: 1, retried: { delivered: 1, failed: 3, gone: 0, error: 0 } });
    expect(await metric(registry, 'govops_webhook_auto_retries_total', { webhook: 'dead', result: 'failed' })).toBe(2);
    expect(await metric(registry, 'govops_webhook_auto_retries_total', { webhook: 'flaky', result: 'delivered' })).toBe(1);
    expect(await metric(registry, 'govops_webhook_auto_retry_exhausted_total', { webhook: 'dead' })).toBe(1);
    const logged = lines.filter((l) => l.msg === 'webhook delivery retried automatically' || /giving up/.test(l.msg));
    expect(logged).toHaveLength(4);
    expect(logged.filter((l) => l.level === 40)).toEqual([expect.objectContaining({ webhook: 'dead', attempt: 2, result: 'failed', statusCode: 503 })]);
    expect(logged.find((l) => l.result === 'delivered')).toMatchObject({ webhook: 'flaky', attempt: 2, statusCode: 200 });
    // and the poller counted the retries' own records as deliveries, without retrying them again
    const byName = Object.fromEntries((health.status().webhooks as any[]).map((x) => [x.name, x]));
    expect(byName.dead).toMatchObject({ failed: 3, delivered: 0 });
    expect(byName.flaky).toMatchObject({ failed: 2, delivered: 1, healthy: true });
  });

  it('keeps to the rate limit across webhooks', async () => {
    w = await startWorld();
    const hooks = await w.createHooks([1, 2, 3].map((i) => hookItem(w, `h${i}`, `/h${i}`)));
    for (const i of [1, 2, 3]) w.rx.set(`/h${i}`, 500);
    let now = Date.now();
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 5, backoffMs: 10, maxBackoffMs: 10, perMinute: 2 },
      managed: async () => new Map(hooks.map((h: any) => [String(h.id), h.name])),
    });
    await health.pollOnce();
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    let total = 0;
    for (let i = 0; i < 6; i++) {
      now += 10_000; // six rounds within one minute
      total += (await health.pollOnce()).retried ?? 0;
    }
    expect(total).toBe(2);
    now += 60_000;
    expect((await health.pollOnce()).retried).toBe(2);
  });
});

describe('automatic retries and a step of the wall clock (NTP, a VM resumed)', () => {
  it('the time of day set back an hour neither holds a retry back for an hour nor keeps the rate limit closed', async () => {
    w = await startWorld();
    const [h] = await w.createHooks([hookItem(w, 'h', '/h')]);
    w.rx.set('/h', 503);
    // the two readings of the clock, moved by the test: the time of day and the monotonic one
    let wall = Date.now();
    let mono = 0;
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => wall, monotonic: () => mono },
      autoRetry: { maxAttempts: 5, backoffMs: 1000, maxBackoffMs: 1000, perMinute: 1 },
      managed: async () => new Map([[String(h.id), 'h']]),
    });
    await health.pollOnce();
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    wall += 1000;
    mono += 1000;
    expect((await health.pollOnce()).retried).toBe(1);
    wall -= 3_600_000; // set back an hour
    wall += 60_000;
    mono += 60_000;
    // a minute later (backoff 1 s, one retry a minute): the next retry is due; the old code counted in the time of day
    expect((await health.pollOnce()).retried).toBe(1);
    expect(w.rx.hits.get('/h')).toBe(3);
  });

  it("the log line of a retry names the record retried and the one it made, and the next retry's time of day (not the monotonic reading)", async () => {
    w = await startWorld();
    const [h] = await w.createHooks([hookItem(w, 'h', '/h')]);
    w.rx.set('/h', 503);
    const wall = Date.parse('2026-11-20T08:00:00.000Z');
    let mono = 5_000; // performance.now(): milliseconds since the process started
    const { logger, lines } = memoryLogger();
    const health = new WebhookHealth({
      api: client(),
      logger,
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => wall + mono, monotonic: () => mono },
      autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => new Map([[String(h.id), 'h']]),
    });
    await health.pollOnce();
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    const failed = (await client().listWebhookHistory({ pageSize: 10 })).records;
    const original = failed.find((r) => String(r.webhookId) === String(h.id))!;
    mono += 1000;
    expect((await health.pollOnce()).retried).toBe(1);
    const line = lines.find((l) => l.msg === 'webhook delivery retried automatically');
    expect(line).toMatchObject({ webhook: 'h', attempt: 1, result: 'failed', historyId: String(original.id) });
    expect(line.newHistoryId).not.toBe(line.historyId);
    // retried at wall + 6 s; the next one 2 s later (the backoff doubled)
    expect(line.nextRetryAt).toBe(new Date(wall + mono + 2000).toISOString());
  });
});

describe('automatic retries of a webhook govops stops managing', () => {
  it('drops its pending retries: a webhook no longer in the state is not retried (it is somebody else\'s now)', async () => {
    w = await startWorld();
    const [hook] = await w.createHooks([hookItem(w, 'released', '/released')]);
    w.rx.set('/released', 503);
    let now = Date.now();
    let managed = new Map([[String(hook.id), 'released']]);
    const registry = new Registry();
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry,
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => managed,
    });
    await health.pollOnce(); // baseline: empty
    await w.fire('modelAccessRequested');
    expect(await health.pollOnce()).toMatchObject({ newRecords: 1, retried: 0 }); // pending, not due yet
    expect(health.status().autoRetry).toMatchObject({ pending: 1 });

    managed = new Map(); // its manifest was deleted (or the state released it): govops no longer manages it
    now += 60_000;
    expect(await health.pollOnce()).toMatchObject({ retried: 0 });
    expect(w.rx.hits.get('/released')).toBe(1);
    expect(health.status().autoRetry).toMatchObject({ pending: 0 });
    expect(await metric(registry, 'govops_webhook_auto_retries_total', { webhook: '(unmanaged)' })).toBeUndefined();
  });
});

describe('automatic retries on a standby replica (several replicas, one leader)', () => {
  it('a standby does not spend the retries it may not send: after it takes over, the failed delivery is retried', async () => {
    w = await startWorld();
    const [hook] = await w.createHooks([hookItem(w, 'dead', '/dead')]);
    w.rx.set('/dead', 503);
    let leading = false;
    // the daemon's client on a replica: writes go through the leader's gate (src/daemon/leader.ts gate)
    const api = new ServiceClient({
      baseUrl: w.url,
      token: w.admin,
      retries: 0,
      writeGate: (method, path) => {
        if (!leading) throw new UserError(`${method} ${path} not sent: this replica does not hold the lease`, undefined, { code: ErrorCode.stateFenced });
      },
    });
    cleanup.add(() => api.close());
    let now = Date.now();
    const { logger, lines } = memoryLogger();
    const health = new WebhookHealth({
      api,
      logger,
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 2, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => new Map([[String(hook.id), 'dead']]),
      mayWrite: () => leading,
    });
    await health.pollOnce(); // baseline: empty
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    for (let i = 0; i < 4; i++) {
      now += 60_000;
      expect(await health.pollOnce()).toMatchObject({ ok: true, retried: 0 }); // standby: nothing sent, nothing spent
    }
    expect(lines.filter((l) => /giving up|retried automatically/.test(l.msg))).toEqual([]);
    expect(health.status().autoRetry).toMatchObject({ pending: 1, exhausted: 0, retried: { error: 0 } });

    leading = true; // the leader went away; this replica took over
    now += 60_000;
    expect(await health.pollOnce()).toMatchObject({ retried: 1 });
    expect(w.rx.hits.get('/dead')).toBe(2);
  });
});

describe('automatic retries after a restart', () => {
  it('retries again only failures from the last minute before the start, not the history\'s last failures of days ago', async () => {
    w = await startWorld();
    const [hook] = await w.createHooks([hookItem(w, 'dead', '/dead')]);
    w.rx.set('/dead', 503);
    // the receiver died two days ago; the previous daemon retried and gave up; nothing happened since
    await w.seed({ webhookId: hook.id, count: 3, statusCode: 503, code: 'ECONNREFUSED', from: new Date(Date.now() - 2 * 86_400_000).toISOString(), stepMs: 1000 });
    let now = Date.now();
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => new Map([[String(hook.id), 'dead']]),
    });
    expect(await health.pollOnce()).toMatchObject({ baseline: true, newRecords: 3 }); // shown as recent failures
    expect((health.status().webhooks as any[])[0].recentFailures).toHaveLength(3);
    now += 60_000;
    expect(await health.pollOnce()).toMatchObject({ retried: 0 });
    expect(w.rx.hits.get('/dead') ?? 0).toBe(0);

    // a failure from just before the start is retried again, as documented
    const [fresh] = await w.createHooks([hookItem(w, 'fresh', '/fresh')]);
    w.rx.set('/fresh', 503);
    await w.fire('modelAccessRequested'); // both webhooks fail now
    const restarted = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => new Map([[String(fresh.id), 'fresh']]),
    });
    now = Date.now(); // restarted at once
    await restarted.pollOnce();
    now += 1000;
    expect(await restarted.pollOnce()).toMatchObject({ retried: 1 });
    expect(w.rx.hits.get('/fresh')).toBe(2);
  });
});

/**
 * A health poller reading a real state file that records one webhook entry (`entry`: its name, the id and what else
 * the test needs), with auto-retry on and a clock the test moves (`advance`).
 */
async function healthOverState(entry: { name: string; id: string; identity: string; pending?: 'delete' }, registry = new Registry()) {
  const dir = await mkdtemp(join(tmpdir(), 'govops-health-state-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  const statePath = join(dir, 'state.json');
  const state = newState();
  state.resources.push({ kind: 'Webhook', origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: new Date().toISOString(), ...entry });
  await saveState(statePath, state);
  let now = Date.now();
  const health = new WebhookHealth({
    api: client(),
    logger: silentLogger(),
    registry,
    intervalMs: 60_000,
    clock: { ...backgroundClock, now: () => now, monotonic: () => now },
    autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
    managed: managedWebhooksFromState(statePath),
  });
  return { health, advance: (ms: number) => void (now += ms) };
}

/** A baseline poll, one failed delivery, then three polls a minute apart: none retries it. */
async function expectNeverRetried(health: WebhookHealth, advance: (ms: number) => void): Promise<void> {
  await health.pollOnce(); // baseline: empty
  await w.fire('modelAccessRequested');
  await health.pollOnce();
  for (let i = 0; i < 3; i++) {
    advance(60_000);
    expect(await health.pollOnce()).toMatchObject({ retried: 0 });
  }
}

describe('a recorded id the service gave to another webhook', () => {
  it("another team's webhook at an id the state records for ours: its failures are neither counted as ours nor retried", async () => {
    w = await startWorld();
    // ours was deleted out of band and the service gave its id to another team's webhook (the state keeps the id
    // until the next reconcile forgets it; for ever under --observe)
    const [theirs] = await w.createHooks([hookItem(w, 'theirs', '/theirs')]);
    w.rx.set('/theirs', 503);
    const registry = new Registry();
    const { health, advance } = await healthOverState({ name: 'ours', id: String(theirs.id), identity: webhookIdentity('ours', 'https://hooks.example.com/ours') }, registry);
    await expectNeverRetried(health, advance);
    expect(w.rx.hits.get('/theirs')).toBe(1); // the delivery only, never a retry
    expect(health.status()).toMatchObject({ unmanaged: { failed: 1 } });
    expect((health.status().webhooks as any[]).filter((x) => x.failed > 0)).toEqual([]);
    expect(await metric(registry, 'govops_webhook_delivery_failures_total', { webhook: 'ours' })).toBeUndefined();
  });
});

describe('a webhook govops is deleting', () => {
  it('its failed deliveries are not retried while its delete is pending (sent, no answer yet: the next reconcile resolves it)', async () => {
    w = await startWorld();
    const [going] = await w.createHooks([hookItem(w, 'going', '/going')]);
    w.rx.set('/going', 503);
    const { health, advance } = await healthOverState({ name: 'going', id: String(going.id), identity: webhookIdentity('going', `${w.rx.url}/going`), pending: 'delete' });
    await expectNeverRetried(health, advance);
    expect(w.rx.hits.get('/going')).toBe(1); // the delivery only, never a retry
  });
});

describe('automatic retries when the lease is lost during a round of retries', () => {
  it('the retries the write gate refused (nothing sent) are not spent: they are retried once this replica leads again', async () => {
    w = await startWorld();
    // six webhooks, one failed delivery each: one round takes all six, sent the first alone, then four at a time
    const hooks = await w.createHooks([1, 2, 3, 4, 5, 6].map((i) => hookItem(w, `h${i}`, `/h${i}`)));
    for (let i = 1; i <= 6; i++) w.rx.set(`/h${i}`, 503);
    let leading = true;
    const sent = new Set<string>();
    const api = new ServiceClient({
      baseUrl: w.url,
      token: w.admin,
      retries: 0,
      writeGate: (method, path) => {
        sent.add(path);
        if (sent.size === 6) leading = false; // the lease is lost after the first five retries were out
        if (!leading) throw new UserError(`${method} ${path} not sent: this replica does not hold the lease`, undefined, { code: ErrorCode.stateFenced });
      },
    });
    cleanup.add(() => api.close());
    let now = Date.now();
    const { logger, lines } = memoryLogger();
    const health = new WebhookHealth({
      api,
      logger,
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 1, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => new Map(hooks.map((h: any) => [String(h.id), h.name])),
      mayWrite: () => leading,
    });
    await health.pollOnce(); // baseline: empty
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    now += 1000;
    await health.pollOnce(); // five sent and failed (cap reached); the lease went before the sixth was sent
    const hits = () => [1, 2, 3, 4, 5, 6].filter((i) => (w.rx.hits.get(`/h${i}`) ?? 0) > 1).length;
    expect(hits()).toBe(5);
    // nothing was sent for the sixth: not "still failing after 1 automatic retries"
    expect(lines.filter((l) => /giving up/.test(l.msg))).toHaveLength(5);
    expect(health.status().autoRetry).toMatchObject({ pending: 1, exhausted: 5, retried: { failed: 5, error: 0 } });

    leading = true; // leading again (or this replica took over again)
    sent.clear();
    sent.add('x').add('y').add('z').add('w').add('v').add('u'); // past the point the test loses the lease at
    now += 1000;
    expect(await health.pollOnce()).toMatchObject({ retried: 1 });
    expect(hits()).toBe(6);
  });
});

describe('a webhook deleted during an apply (its intent in the state journal)', () => {
  it('its delete intent, appended to state.json.journal while the apply runs, takes it out of the managed set at once', async () => {
    w = await startWorld();
    const [going] = await w.createHooks([hookItem(w, 'going', '/going')]);
    w.rx.set('/going', 503);
    const dir = await mkdtemp(join(tmpdir(), 'govops-health-journal-'));
    cleanup.add(() => rm(dir, { recursive: true, force: true }));
    const statePath = join(dir, 'state.json');
    const entry = {
      kind: 'Webhook' as const, name: 'going', id: String(going.id), origin: 'created' as const, specHash: 'x', secretFingerprints: {},
      updatedAt: new Date().toISOString(), identity: webhookIdentity('going', `${w.rx.url}/going`),
    };
    // the apply's first full save, as src/reconcile/apply-stage.ts writes it
    const writer = new StateWriter(statePath);
    cleanup.add(() => writer.close());
    const state = newState();
    state.resources.push(entry);
    await writer.writeFull(state);
    let now = Date.now();
    const health = new WebhookHealth({
      api: client(),
      logger: silentLogger(),
      registry: new Registry(),
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: managedWebhooksFromState(statePath),
    });
    await health.pollOnce(); // baseline: empty; 'going' managed
    expect((health.status().webhooks as any[]).map((x) => x.name)).toEqual(['going']);
    // later in the same apply: the delete's intent is journaled (the whole state is written again only at its end)
    await writer.append([{ put: { ...entry, pending: 'delete' } }]);
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    expect((health.status().webhooks as any[]).map((x) => x.name)).toEqual([]);
    for (let i = 0; i < 3; i++) {
      now += 60_000;
      expect(await health.pollOnce()).toMatchObject({ retried: 0 });
    }
    expect(w.rx.hits.get('/going')).toBe(1); // the delivery only, never a retry
  });
});

describe('a govops state that cannot be read (not missing: unreadable, not valid JSON, a folder)', () => {
  /** A poller over a state file recording the webhook `dead` (auto-retry on), and a failed delivery of it already seen. */
  async function deadOverState() {
    w = await startWorld();
    const [dead] = await w.createHooks([hookItem(w, 'dead', '/dead')]);
    w.rx.set('/dead', 503);
    const dir = await mkdtemp(join(tmpdir(), 'govops-health-unreadable-'));
    cleanup.add(() => rm(dir, { recursive: true, force: true }));
    const sub = join(dir, 'state');
    await mkdir(sub);
    const statePath = join(sub, 'state.json');
    const state = newState();
    state.resources.push({
      kind: 'Webhook', name: 'dead', id: String(dead.id), origin: 'created', specHash: 'x', secretFingerprints: {},
      updatedAt: new Date().toISOString(), identity: webhookIdentity('dead', `${w.rx.url}/dead`),
    });
    await saveState(statePath, state);
    let now = Date.now();
    const registry = new Registry();
    const { logger, lines } = memoryLogger();
    const health = new WebhookHealth({
      api: client(),
      logger,
      registry,
      intervalMs: 60_000,
      clock: { ...backgroundClock, now: () => now, monotonic: () => now },
      autoRetry: { maxAttempts: 3, backoffMs: 60_000, maxBackoffMs: 600_000, perMinute: 100 },
      managed: managedWebhooksFromState(statePath),
    });
    await health.pollOnce(); // baseline: empty
    await w.fire('modelAccessRequested');
    await health.pollOnce(); // the failure is seen: pending, its retry due in a minute
    expect(health.status().autoRetry).toMatchObject({ pending: 1 });
    const warnings = () => lines.filter((l) => l.level === 40 && /state cannot be read/.test(l.msg));
    return { health, registry, sub, statePath, warnings, advance: (ms: number) => void (now += ms) };
  }

  it('a folder of its path unreadable (EACCES; here ENOTDIR, the test runs as root): rounds skipped, said once with its code, retried once readable', async () => {
    const { health, registry, sub, warnings, advance } = await deadOverState();
    // the state's folder cannot be looked into: a file in its place (stat fails ENOTDIR, as EACCES would)
    await rename(sub, `${sub}.away`);
    await writeFile(sub, '');
    for (let i = 0; i < 3; i++) {
      advance(60_000);
      // the old code read "no state": nothing managed, the pending retry dropped, ok: true
      expect(await health.pollOnce()).toMatchObject({ ok: false, skipped: true, code: ErrorCode.io });
    }
    expect(w.rx.hits.get('/dead')).toBe(1); // the delivery only: no retry sent
    const status = health.status() as any;
    expect(status.stateError).toMatchObject({ code: ErrorCode.io, skippedRounds: 3 });
    expect(status.stateError.message).toContain(sub);
    expect(status.lastError).toMatchObject({ code: ErrorCode.io });
    expect(status.autoRetry).toMatchObject({ pending: 1, exhausted: 0 }); // nothing dropped nor given up
    expect(status.webhooks.map((x: any) => x.name)).toEqual(['dead']);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0].err).toMatchObject({ code: ErrorCode.io });
    expect(await metric(registry, 'govops_webhook_health_state_unreadable')).toBe(1);
    expect(await metric(registry, 'govops_webhook_health_polls_total', { result: 'error' })).toBe(3);

    await rm(sub);
    await rename(`${sub}.away`, sub);
    advance(60_000);
    expect(await health.pollOnce()).toMatchObject({ ok: true, retried: 1 });
    expect(w.rx.hits.get('/dead')).toBe(2);
    expect((health.status() as any).stateError).toBeUndefined();
    expect(await metric(registry, 'govops_webhook_health_state_unreadable')).toBe(0);
  });

  it('not valid JSON, then a folder at its path (EISDIR): each said once with its code, nothing retried meanwhile, retried once readable', async () => {
    const { health, statePath, warnings, advance } = await deadOverState();
    const good = await readFile(statePath, 'utf8');
    await writeFile(statePath, '{"version": 2, "resour'); // torn by hand
    for (let i = 0; i < 2; i++) {
      advance(60_000);
      expect(await health.pollOnce()).toMatchObject({ ok: false, skipped: true, code: ErrorCode.stateCorrupt });
    }
    expect(warnings().map((l) => l.err.code)).toEqual([ErrorCode.stateCorrupt]);
    await rm(statePath);
    await mkdir(statePath);
    for (let i = 0; i < 2; i++) {
      advance(60_000);
      expect(await health.pollOnce()).toMatchObject({ ok: false, skipped: true, code: ErrorCode.io });
    }
    expect(warnings().map((l) => l.err.code)).toEqual([ErrorCode.stateCorrupt, ErrorCode.io]);
    expect((health.status() as any).stateError).toMatchObject({ code: ErrorCode.io, skippedRounds: 2 });
    expect(w.rx.hits.get('/dead')).toBe(1);
    expect(health.status().autoRetry).toMatchObject({ pending: 1, exhausted: 0 });

    await rm(statePath, { recursive: true });
    await writeFile(statePath, good);
    advance(60_000);
    expect(await health.pollOnce()).toMatchObject({ ok: true, retried: 1 });
    expect(w.rx.hits.get('/dead')).toBe(2);
  });
});

/**
 * A webhook whose receiver fails (503), one failed delivery of it recorded and polled, and delivery health whose retry
 * requests fail with `failure` until `heal()`: a cap of one automatic retry, a minute between rounds (`nextRound`).
 */
async function retriesFailingWith(failure: (id: string) => Error) {
  w = await startWorld();
  const [hook] = await w.createHooks([hookItem(w, 'dead', '/dead')]);
  w.rx.set('/dead', 503);
  const real = client();
  let failing = true;
  const api = {
    listWebhookHistory: real.listWebhookHistory.bind(real),
    retryWebhookDelivery: async (id: string) => {
      if (failing) throw failure(id);
      return real.retryWebhookDelivery(id);
    },
  };
  let now = Date.now();
  const { logger, lines } = memoryLogger();
  const health = new WebhookHealth({
    api,
    logger,
    registry: new Registry(),
    intervalMs: 60_000,
    clock: { ...backgroundClock, now: () => now, monotonic: () => now },
    autoRetry: { maxAttempts: 1, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
    managed: async () => new Map([[String(hook!.id), 'dead']]),
  });
  await health.pollOnce(); // baseline: empty
  await w.fire('modelAccessRequested');
  await health.pollOnce();
  return {
    health,
    lines,
    nextRound: () => {
      now += 60_000;
      return health.pollOnce();
    },
    heal: () => void (failing = false),
  };
}

describe('automatic retries the service refuses (401/403: the token)', () => {
  it('do not spend the delivery\'s cap (it was never retried): once the token is accepted, the delivery is retried', async () => {
    const { health, lines, nextRound, heal } = await retriesFailingWith((id) => new ApiError(403, 'Forbidden', 'not allowed to retry', 'POST', `/webhooks/history/retry/${id}`));
    for (let i = 0; i < 3; i++) expect(await nextRound()).toMatchObject({ retried: 0, stopped: 'refused' });
    // the old code: the first refusal reached the cap (1): "giving up", exhausted 1, never retried again
    expect(lines.filter((l) => /giving up/.test(l.msg))).toHaveLength(0);
    // a refusal is no retry (not counted as one); said at warn once, for the rounds it stops
    expect(health.status().autoRetry).toMatchObject({ pending: 1, exhausted: 0, retried: { error: 0 }, stopped: { reason: 'refused', rounds: 3 } });
    expect(lines.filter((l) => /the service refused the retry/.test(l.msg)).map((l) => [l.level, l.code])).toEqual([
      [40, ErrorCode.apiAuth],
      [20, ErrorCode.apiAuth],
      [20, ErrorCode.apiAuth],
    ]);
    expect(w.rx.hits.get('/dead')).toBe(1);

    heal(); // the token is fixed (or given the permission)
    expect(await nextRound()).toMatchObject({ retried: 1 });
    expect(w.rx.hits.get('/dead')).toBe(2);
    expect(health.status().autoRetry).toMatchObject({ pending: 0, exhausted: 1, retried: { failed: 1 } });
  });
});

describe('an automatic retry the service cannot be reached for (the connection not opened: nothing sent)', () => {
  it('does not spend the delivery\'s cap: the delivery is retried once the service answers again', async () => {
    // the service went away between the poll and the round's retries (after the client's own retries)
    const { health, lines, nextRound, heal } = await retriesFailingWith(
      (id) => new TransportError('connect ECONNREFUSED 127.0.0.1:1', 'POST', `/webhooks/history/retry/${id}`, undefined, ErrorCode.connectFailed),
    );
    for (let i = 0; i < 2; i++) await nextRound();
    // the old code: the first refused connection reached the cap (1): "giving up", never retried again
    expect(lines.filter((l) => /giving up/.test(l.msg))).toHaveLength(0);
    expect(lines.filter((l) => /cannot be reached/.test(l.msg)).map((l) => l.code)).toEqual([ErrorCode.connectFailed, ErrorCode.connectFailed]);
    expect(health.status().autoRetry).toMatchObject({ pending: 1, exhausted: 0 });

    heal();
    expect(await nextRound()).toMatchObject({ retried: 1 });
    expect(w.rx.hits.get('/dead')).toBe(2);
  });
});

describe("a round waiting out the client's Retry-After hold (a 429/503 asked the whole client to wait, up to 60 s)", () => {
  const turns = async (n: number): Promise<'held'> => {
    for (let i = 0; i < n; i++) await new Promise((ok) => setImmediate(ok));
    return 'held';
  };
  /** Until the client waits on the clock for more than a second (the hold), I/O running meanwhile. */
  const untilHeld = async (clock: ManualClock): Promise<void> => {
    while (!clock.dueIn().some((ms) => ms > 1000)) await new Promise((ok) => setTimeout(ok, 1));
  };

  it('ends at stop(): a held automatic retry is not sent nor counted, a held poll ends, not after the hold', async () => {
    w = await startWorld();
    const [hook] = await w.createHooks([hookItem(w, 'dead', '/dead')]);
    w.rx.set('/dead', 503);
    const clock = new ManualClock(Date.now());
    const c = new ServiceClient({ baseUrl: w.url, token: w.admin, retries: 1, clock });
    cleanup.add(() => c.close());
    const registry = new Registry();
    const { logger, lines } = memoryLogger();
    const options = {
      api: c, logger, registry, intervalMs: 60_000, clock,
      autoRetry: { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 60_000, perMinute: 100 },
      managed: async () => new Map([[String(hook!.id), 'dead']]),
    };
    const health = new WebhookHealth(options);
    await health.pollOnce(); // baseline: empty
    await w.fire('modelAccessRequested');
    await health.pollOnce();
    clock.advance(1000); // the delivery's backoff
    // the retry is answered 429 Retry-After 30: the client waits 30 s (on its clock) before its retry
    await w.control('POST', '/_sandbox/faults', { type: 'error', method: 'POST', path: '/webhooks/history/retry/:id', status: 429, retryAfter: 30, count: 1 });
    const round = health.pollOnce();
    try {
      await untilHeld(clock);
      void health.stop(0);
      // the old code: the client's wait knew nothing of the stop, the round held until the 30 s were over
      expect(await Promise.race([round.then(() => 'ended' as const), turns(20)])).toBe('ended');
      expect(await round).toMatchObject({ ok: true, retried: 0 });
      expect(lines.filter((l) => /retried automatically|giving up/.test(l.msg))).toEqual([]);
      expect(await metric(registry, 'govops_webhook_auto_retries_total')).toBeUndefined();
      expect(w.rx.hits.get('/dead')).toBe(1); // the event's delivery only

      // a poll held by the client's wait (a 503 Retry-After on the previous one) ends at stop() too
      await w.control('POST', '/_sandbox/faults', { type: 'error', method: 'GET', path: '/webhooks/history', status: 503, retryAfter: 30, count: 2 });
      const other = new WebhookHealth({ ...options, registry: new Registry(), autoRetry: undefined });
      const polled = other.pollOnce();
      await untilHeld(clock);
      void other.stop(0);
      expect(await Promise.race([polled.then(() => 'ended' as const), turns(20)])).toBe('ended');
      expect(await polled).toMatchObject({ ok: false });
      expect(other.status().lastError).toBeUndefined(); // the cancel is no failed poll
    } finally {
      clock.advance(120_000); // the old code's held requests go on (and end)
      await round;
    }
  });
});
