/**
 * Cancellation: one AbortSignal flows through the client's retry sleeps, the status polling and the
 * runner; a request in flight finishes (its result is saved) unless the force signal aborts it too.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { objectStore } from '../../bench/flaky-drill.mjs';
import { ServiceClient } from '../../src/api/client.js';
import { CancelledError, ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { sendJson, startServer, type TestServer } from '../api/server.js';
import { ManualClock } from '../helpers/clock.js';
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

/** Wait (on real I/O) until `cond` holds: a condition, never a fixed time. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((ok) => setTimeout(ok, 5));
}


describe('the client', () => {
  it('a retry sleep (Retry-After 30 s) ends at once when the signal aborts', async () => {
    server = await startServer((_req, res) => sendJson(res, 503, { statusCode: 503, error: 'Service Unavailable', message: 'later' }, { 'retry-after': '30' }));
    const clock = new ManualClock();
    client = new ServiceClient({ baseUrl: server.url, token: 't', logger: silentLogger(), retryPolicy: { maxRetryAfterMs: 60_000 }, clock });
    const stop = new AbortController();
    const call = client.withSignal(stop.signal).listIntegrations();
    const outcome = call.then(() => 'answered', (err: unknown) => err);
    await clock.untilTimer(); // the client sleeps on the clock: the 30 s the service asked for
    expect(clock.dueIn()).toEqual([30_000]);
    stop.abort();
    // ended by the abort, with no time passing: the clock never moved
    expect(await outcome).toBeInstanceOf(CancelledError);
    expect(clock.dueIn()).toEqual([]);
    expect(server.seen).toHaveLength(1);
  });

  it('a request in flight finishes on the graceful signal; the force signal aborts it', async () => {
    // the server holds each answer until the test releases it: the signals come while the request is in flight
    const held: ServerResponse[] = [];
    let arrived: () => void = () => undefined;
    const arrival = (): Promise<void> => new Promise((ok) => (arrived = ok));
    server = await startServer((_req, res) => {
      held.push(res);
      arrived();
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', logger: silentLogger(), retries: 0 });
    const stop = new AbortController();
    const force = new AbortController();
    let next = arrival();
    const graceful = client.withSignal(stop.signal, force.signal).listIntegrations();
    await next;
    stop.abort();
    sendJson(held[0]!, 200, []);
    expect(await graceful).toEqual([]);
    next = arrival();
    const forced = client.withSignal(stop.signal, force.signal).listIntegrations();
    await next;
    force.abort(); // never answered: only the abort can end it
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
    // writes, not transitions), all four waiting on a status that never settles: each polled at least once, by
    // its status endpoint or by a list sent after the last create (four due together: one list is cheaper)
    const created = (): string[] => rig_.lines().filter((l) => /^POST \/integrations \d/.test(l));
    const polledAll = (): boolean => {
      const qs = rig_.sandbox.requests();
      let lastCreate = -1;
      qs.forEach((q, i) => {
        if (q.method === 'POST' && q.path === '/integrations' && q.query.dryRun !== 'true') lastCreate = i;
      });
      if (qs.slice(lastCreate + 1).some((q) => q.method === 'GET' && q.path === '/integrations')) return true;
      return new Set(qs.filter((q) => q.path.endsWith('/status')).map((q) => q.path.split('/')[2]!)).size === 4;
    };
    await until(() => created().length === 4 && polledAll());
    stop.abort();
    // The waits end with the abort: without it, nothing would end them before the 60 s --timeout (the test's own
    // timeout fails first), and the outcomes would be settle timeouts, not cancellations.
    const res = await running;
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
