/**
 * Cancellation: one AbortSignal flows through the client's retry sleeps, the status polling and the
 * runner; a request in flight finishes (its result is saved) unless the force signal aborts it too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { objectStore } from '../../bench/flaky-drill.mjs';
import { ServiceClient } from '../../src/api/client.js';
import { CancelledError, ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { sendJson, startServer, type TestServer } from '../api/server.js';
import { rig, type Rig } from './inproc.js';

let server: TestServer | undefined;
let client: ServiceClient | undefined;
let r: Rig | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  await r?.close();
  server = client = r = undefined;
});


describe('the client', () => {
  it('a retry sleep (Retry-After 30 s) ends at once when the signal aborts', async () => {
    server = await startServer((_req, res) => sendJson(res, 503, { statusCode: 503, error: 'Service Unavailable', message: 'later' }, { 'retry-after': '30' }));
    client = new ServiceClient({ baseUrl: server.url, token: 't', logger: silentLogger(), retryPolicy: { maxRetryAfterMs: 60_000 } });
    const stop = new AbortController();
    const started = Date.now();
    const call = client.withSignal(stop.signal).listIntegrations();
    setTimeout(() => stop.abort(), 100);
    await expect(call).rejects.toBeInstanceOf(CancelledError);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.seen).toHaveLength(1);
  });

  it('a request in flight finishes on the graceful signal; the force signal aborts it', async () => {
    server = await startServer((_req, res) => void setTimeout(() => sendJson(res, 200, []), 300));
    client = new ServiceClient({ baseUrl: server.url, token: 't', logger: silentLogger() });
    const stop = new AbortController();
    const force = new AbortController();
    const graceful = client.withSignal(stop.signal, force.signal).listIntegrations();
    setTimeout(() => stop.abort(), 50);
    expect(await graceful).toEqual([]);
    const forced = client.withSignal(stop.signal, force.signal).listIntegrations();
    setTimeout(() => force.abort(), 50);
    await expect(forced).rejects.toMatchObject({ code: ErrorCode.cancelled });
  });
});

describe('an apply', () => {
  it('stopped while integrations are stuck in creating: returns at once, the ids are saved, no second create', async () => {
    r = await rig({ transitionMs: 30 });
    for (const n of ['a', 'b', 'c', 'd']) await r.write(`${n}.yaml`, objectStore(n));
    r.sandbox.setStuckTransitions(['creating']);
    const stop = new AbortController();
    const running = r.run({ signal: stop.signal, concurrency: 2, timeoutMs: 60_000 });
    const rig_ = r;
    // all four creates made (a slot is freed once the write is accepted: concurrency 2 bounds dry runs and
    // writes, not transitions), all four waiting on a status that never settles
    while (rig_.lines().filter((l) => /^POST \/integrations \d/.test(l)).length < 4) await new Promise((ok) => setTimeout(ok, 10));
    await new Promise((ok) => setTimeout(ok, 100));
    const stoppedAt = Date.now();
    stop.abort();
    const res = await running;
    expect(Date.now() - stoppedAt).toBeLessThan(2000);
    expect(res.ok).toBe(false);
    const byResult = res.outcomes.map((o) => `${o.result}:${o.code}`).sort();
    expect(byResult).toEqual(Array.from({ length: 4 }, () => `failed:${ErrorCode.cancelled}`));
    expect(res.failure).toMatchObject({ code: ErrorCode.cancelled, failureClass: 'transient' });
    const live = await r.api.listIntegrations();
    expect(live).toHaveLength(4);
    expect((await r.state()).resources.map((e) => e.id).sort()).toEqual(live.map((l) => l.id).sort());
    // the next run picks them up: no second create
    r.sandbox.setStuckTransitions(false);
    r.sandbox.clearRequests();
    const again = await r.run();
    expect(again.ok, again.error).toBe(true);
    expect(r.lines().filter((l) => /^POST \/integrations \d/.test(l))).toHaveLength(0);
    expect(await r.api.listIntegrations()).toHaveLength(4);
  });
});
