/**
 * The shared status poller against the sandbox: the first poll aimed at the learned end of the
 * transition, growing intervals while nothing is known, one list answering for many, the request-rate
 * cap, what is learned, timeouts and cancellation. The poller and the sandbox share one clock the test moves
 * (helpers/clock.ts): transitions end at its times, and time moves only while no request is in flight, so every
 * assertion on time is exact in the clock's milliseconds, however busy the machine.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import type { IntegrationBody } from '../../src/api/types.js';
import { CAPPED_LIST_FACTOR, IDLE_LIST_SPACING, LIST_BYTES_PER_ITEM, LIST_SPACING, Poller, ROUND_TRIP_BYTES, STATUS_BYTES, listCheaper, listSooner, type PollerOptions } from '../../src/apply/poller.js';
import { TransitionStats, bestFit } from '../../src/apply/transitions.js';
import { CancelledError, ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ManualClock } from '../helpers/clock.js';
import { trackApi, type TrackedApi } from '../helpers/tracked-api.js';

let sandbox: SandboxHandle;
let client: ServiceClient;
let clock: ManualClock;
/** The poller's api: counts requests in flight (time holds while one is) and when each was sent. */
let tracked: TrackedApi<ServiceClient>;
let api: ServiceClient;
let poller: Poller | undefined;
let seq = 0;
beforeAll(async () => {
  clock = new ManualClock();
  // transitions take 300 ms of the shared clock
  sandbox = await startSandbox({ port: 0, transitionMs: 300, clock });
  client = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries: 0 });
});
beforeEach(() => {
  tracked = trackApi(client, clock);
  api = tracked.api;
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});
afterEach(() => {
  poller?.close();
  poller = undefined;
  sandbox.reset();
});

const store = (): IntegrationBody => {
  const name = `store-${++seq}`;
  return {
    type: 'object_store',
    autoBootstrap: false,
    config: { name, cloudAccountId: '1', cloudRegion: 'eu-west-1', cloudLocationRole: `role/${name}`, cloudLocationPath: `s3://${name}`, authenticationType: 'auto' },
  };
};

/** The api, but each list comes back `ms` of the clock after it was asked for. */
function listsTaking(ms: number): ServiceClient {
  return new Proxy(api, {
    get(t, prop, receiver) {
      if (prop !== 'listIntegrationStatuses') return Reflect.get(t, prop, receiver) as unknown;
      return async () => {
        const out = await t.listIntegrationStatuses();
        clock.advance(ms);
        return out;
      };
    },
  });
}

function makePoller(o: Partial<PollerOptions> = {}): Poller {
  poller = new Poller({
    api,
    stats: new TransitionStats(),
    minMs: 20,
    maxMs: 5000,
    ratePerSec: 1000,
    listThreshold: Infinity,
    deadline: clock.now() + 30_000,
    clock,
    ...o,
  });
  return poller;
}

/** Create `n` integrations; returns their ids and the moment each write was accepted. */
async function create(n: number): Promise<Array<{ id: string; at: number }>> {
  const out: Array<{ id: string; at: number }> = [];
  for (let i = 0; i < n; i++) {
    const { id } = await api.createIntegration(store());
    out.push({ id, at: clock.now() });
  }
  return out;
}

/** Clock times the poller sent the status polls of one integration. */
const statusPolls = (id: string): number[] => tracked.calls.filter((c) => c.method === 'getIntegrationStatus' && c.arg === id).map((c) => c.at);
/**
 * Put `total` integrations in the sandbox at once (ids 1..total), the first `pending` of them still `creating`
 * (held: transitions are stuck until the test releases them).
 */
function seed(total: number, pending: number): string[] {
  sandbox.setStuckTransitions(['creating']);
  const at = new Date(clock.now()).toISOString();
  const integrations = Array.from({ length: total }, (_, k) => {
    const name = `seed-${k + 1}`;
    return {
      id: k + 1, type: 'object_store', autoBootstrap: false, status: k < pending ? 'creating' : 'enabled', validationResults: {},
      createdAt: at, updatedAt: at, ...(k < pending ? { pendingUntil: clock.now() + 300 } : {}),
      config: { name, cloudAccountId: '123456789012', cloudRegion: 'eu-west-1', cloudLocationRole: `arn:aws:iam::123456789012:role/${name}`, cloudLocationPath: `s3://${name}/data`, authenticationType: 'auto' },
    };
  });
  sandbox.integrations.restore({ nextId: total + 1, integrations, cleanups: [] });
  sandbox.clearRequests();
  return integrations.slice(0, pending).map((i) => String(i.id));
}
const allStatusPolls = (): number => sandbox.requests().filter((r) => r.method === 'GET' && r.path.endsWith('/status')).length;
const lists = (): number => sandbox.requests().filter((r) => r.method === 'GET' && r.path === '/integrations').length;

describe('transition estimate', () => {
  it('is the point with the least distance to the observed brackets: inside all of them when they overlap', () => {
    expect(bestFit([])).toBeUndefined();
    expect(bestFit([[1500, 2200], [1500, 2200], [1990, 2000]])).toBeGreaterThanOrEqual(1990);
    expect(bestFit([[1500, 2200], [1500, 2200], [1990, 2000]])).toBeLessThanOrEqual(2000);
    // a service that got slower: the newer brackets win once they are the majority
    expect(bestFit([[900, 1000], [2900, 3000], [2950, 3050]])).toBeGreaterThanOrEqual(2900);
  });

  it('falls back to the same operation of other types, and keeps a bounded window', () => {
    const stats = new TransitionStats({ 'lakehouse/create': [[100, 200]] });
    expect(stats.estimate('object_store/create')).toBe(150);
    expect(stats.estimate('object_store/delete')).toBeUndefined();
    for (let i = 0; i < 100; i++) stats.record('lakehouse/create', 1000, 1100);
    expect(stats.estimate('lakehouse/create')).toBe(1050);
    expect(stats.toJSON()['lakehouse/create']!.length).toBeLessThanOrEqual(32);
  });
});

describe('status poller', () => {
  it('with a learned duration, the first poll is aimed at the expected end, not before', async () => {
    const p = makePoller({ stats: new TransitionStats({ 'object_store/create': [[290, 310]] }) });
    const [c] = await create(1);
    expect(await clock.runUntil(p.wait({ id: c!.id, type: 'object_store', op: 'create', startedAt: c!.at }))).toBe('enabled');
    // aimed at the expected end (300 ms): one poll, when the transition is over (the old schedule polled at +100 and +300)
    expect(statusPolls(c!.id).map((t) => t - c!.at)).toEqual([300]);
  });

  it('registering waits sets one timer at the first due poll: no look over every wait per registration', async () => {
    const p = makePoller({ stats: new TransitionStats({ 'object_store/create': [[290, 310]] }) });
    const startedAt = clock.now();
    const waits = Array.from({ length: 100 }, (_, i) => p.wait({ id: String(10_000 + i), type: 'object_store', op: 'create', startedAt: startedAt + i }));
    // (a tick looks at every wait: one per registration made registering n waits cost n x n)
    expect(clock.dueIn()).toEqual([300]);
    p.close();
    await Promise.allSettled(waits);
  });

  it('a wait whose first poll falls after the settle deadline times out at the deadline', async () => {
    const start = clock.now();
    const p = makePoller({ stats: new TransitionStats({ 'object_store/create': [[290, 310]] }), deadline: start + 100 });
    const waiting = p.wait({ id: '424242', type: 'object_store', op: 'create', startedAt: start });
    await expect(clock.runUntil(waiting)).rejects.toMatchObject({ code: ErrorCode.settleTimeout });
    expect(clock.now()).toBe(start + 100);
  });

  it('with nothing learned, intervals grow by half the time elapsed; the bracket around the end is learned', async () => {
    const stats = new TransitionStats();
    const p = makePoller({ stats });
    const [c] = await create(1);
    expect(await clock.runUntil(p.wait({ id: c!.id, type: 'object_store', op: 'create', startedAt: c!.at }))).toBe('enabled');
    const polls = statusPolls(c!.id);
    expect(polls.length).toBeGreaterThan(2);
    for (let i = 1; i < polls.length; i++) {
      const elapsed = polls[i - 1]! - c!.at;
      expect(polls[i]! - polls[i - 1]!).toBeCloseTo(Math.max(20, elapsed * 0.5), 6);
    }
    // the last poll saw it settled, the one before still creating: the bracket around the 300 ms end (whole ms)
    const [[lo, hi]] = stats.toJSON()['object_store/create']!;
    expect([lo, hi]).toEqual([Math.round(polls.at(-2)! - c!.at), Math.round(polls.at(-1)! - c!.at)]);
    expect(lo).toBeLessThan(300);
    expect(hi).toBeGreaterThanOrEqual(300);
  });

  it('when several polls are due at once, one GET /integrations answers for all of them', async () => {
    const p = makePoller({ listThreshold: 4 });
    // the ten transitions are held until the poller is listing, then all end together: on a loaded machine the
    // creates are accepted far apart, and transitions ending one by one would leave fewer than four due at once
    sandbox.setStuckTransitions(['creating']);
    const made = await create(10);
    const startedAt = clock.now();
    sandbox.clearRequests();
    const waiting = Promise.all(made.map((c) => p.wait({ id: c.id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() > 0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions(); // together: released one by one at their own times, the last few would be asked one by one
    const statuses = await clock.runUntil(waiting);
    expect(statuses).toEqual(made.map(() => 'enabled'));
    expect(made.flatMap((c) => statusPolls(c.id))).toEqual([]);
    expect(lists()).toBeGreaterThan(0);
    expect(p.counters).toEqual({ status: 0, lists: lists() });
  });

  it('never polls faster than --poll-rate requests per second', async () => {
    const rate = 10;
    const p = makePoller({ ratePerSec: rate, minMs: 20 });
    const made = await create(8);
    const startedAt = clock.now();
    await clock.runUntil(Promise.all(made.map((c) => p.wait({ id: c.id, type: 'object_store', op: 'create', startedAt }))));
    const times = tracked.calls
      .filter((c) => c.method === 'getIntegrationStatus')
      .map((c) => c.at)
      .sort((a, b) => a - b);
    expect(times.length).toBeGreaterThan(rate); // more requests than one second's burst
    // the bucket holds one second of requests, full when the poller was made: request i (0-based) is sent no
    // earlier than (i + 1 - rate) / rate s after that
    for (let i = rate; i < times.length; i++) expect(times[i]! - startedAt).toBeGreaterThanOrEqual(((i + 1 - rate) * 1000) / rate);
  });

  it('a delete is settled when the integration is gone (status 404, or absent from a list)', async () => {
    const p = makePoller({ listThreshold: 2 });
    const made = await create(3);
    sandbox.finishTransitions();
    for (const c of made) await api.deleteIntegration(c.id, undefined);
    const at = clock.now();
    const waits = made.map((c) => p.wait({ id: c.id, type: 'object_store', op: 'delete', startedAt: at }));
    expect(await clock.runUntil(Promise.all(waits))).toEqual(['gone', 'gone', 'gone']);
    expect(clock.now() - at).toBeGreaterThanOrEqual(300); // not before the deletes' transitions ended
  });

  it('a status poll that fails transiently (after the client\'s retries) is a missed observation: polled again, up to 3 in a row', async () => {
    const p = makePoller();
    const [a, b] = await create(2);
    // three failed polls in a row (503, 409 on a read: the service busy) and the wait still ends with the status
    sandbox.faults.add({ type: 'error', status: 503, method: 'GET', path: `/integrations/${a!.id}/status`, count: 2 });
    sandbox.faults.add({ type: 'conflict', method: 'GET', path: `/integrations/${a!.id}/status`, count: 1 });
    expect(await clock.runUntil(p.wait({ id: a!.id, type: 'object_store', op: 'create', startedAt: a!.at }))).toBe('enabled');
    expect(statusPolls(a!.id).length).toBeGreaterThanOrEqual(4);
    // a fourth in a row fails the wait with the service's answer
    sandbox.faults.clear();
    sandbox.setStuckTransitions(['creating']);
    try {
      const { id } = await api.createIntegration(store());
      sandbox.faults.add({ type: 'error', status: 503, method: 'GET', path: `/integrations/${id}/status` });
      await expect(clock.runUntil(p.wait({ id, type: 'object_store', op: 'create' }))).rejects.toMatchObject({ statusCode: 503 });
      expect(statusPolls(id)).toHaveLength(4);
    } finally {
      sandbox.faults.clear();
      sandbox.setStuckTransitions(false);
    }
    // a terminal failure (the token refused) fails the wait at once
    sandbox.faults.add({ type: 'error', status: 401, method: 'GET', path: `/integrations/${b!.id}/status`, count: 1 });
    const polled = statusPolls(b!.id).length;
    await expect(clock.runUntil(p.wait({ id: b!.id, type: 'object_store', op: 'create', immediate: true }))).rejects.toMatchObject({ statusCode: 401 });
    expect(statusPolls(b!.id)).toHaveLength(polled + 1);
    sandbox.faults.clear();
  });

  it('past the deadline a wait fails with GOVOPS_SETTLE_TIMEOUT; the signal ends every wait at once', async () => {
    sandbox.setStuckTransitions(true);
    try {
      const [a, b] = await create(2);
      const deadline = clock.now() + 300;
      const p1 = makePoller({ deadline });
      await expect(clock.runUntil(p1.wait({ id: a!.id, op: 'create' }))).rejects.toMatchObject({ code: ErrorCode.settleTimeout, liveId: a!.id });
      expect(clock.now()).toBe(deadline); // at the deadline, not before
      p1.close();
      const stop = new AbortController();
      const p2 = makePoller({ signal: stop.signal });
      const waiting = p2.wait({ id: b!.id, op: 'create' });
      const polled = statusPolls(b!.id).length;
      await clock.runUntil(() => statusPolls(b!.id).length >= polled + 2); // waiting, polling
      const abortedAt = clock.now();
      stop.abort();
      // the wait ends with the abort, not with time: the clock does not move
      await expect(waiting).rejects.toBeInstanceOf(CancelledError);
      expect(clock.now()).toBe(abortedAt);
      expect(clock.dueIn()).toEqual([]); // the poller's timer is cleared
      await expect(p2.wait({ id: b!.id, op: 'create' })).rejects.toBeInstanceOf(CancelledError);
    } finally {
      sandbox.setStuckTransitions(false);
    }
  });

  it('a list only when it costs less than the status requests it replaces (bytes and round trips)', () => {
    // 10 status requests cost ~41 KB of traffic and CPU; a list of 10,000 integrations ~4.3 MB
    expect(listCheaper(10, 10_000 * LIST_BYTES_PER_ITEM)).toBe(false);
    expect(listCheaper(200, 10_000 * LIST_BYTES_PER_ITEM)).toBe(false); // the old rule listed here (200 x 50 items)
    expect(listCheaper(2_000, 10_000 * LIST_BYTES_PER_ITEM)).toBe(true);
    expect(listCheaper(4, 10 * LIST_BYTES_PER_ITEM)).toBe(true);
    const breakEven = Math.ceil((10_000 * LIST_BYTES_PER_ITEM + ROUND_TRIP_BYTES) / (STATUS_BYTES + ROUND_TRIP_BYTES));
    expect(listCheaper(breakEven - 1, 10_000 * LIST_BYTES_PER_ITEM)).toBe(false);
    expect(listCheaper(breakEven + 1, 10_000 * LIST_BYTES_PER_ITEM)).toBe(true);
    // held back by the rate cap, a list may cost a few times the status requests, never a list per few polls
    expect(listCheaper(300, 10_000 * LIST_BYTES_PER_ITEM, CAPPED_LIST_FACTOR)).toBe(true);
    expect(listCheaper(10, 10_000 * LIST_BYTES_PER_ITEM, CAPPED_LIST_FACTOR)).toBe(false);
  });

  // (300: the old rule, a list when it held at most 50 integrations per due poll, listed here)
  it.each([10, 300])('%i pending among 10,000 integrations: status requests, never a list of all 10,000', async (pending) => {
    const ids = seed(10_000, pending);
    const p = makePoller({ listThreshold: 4, listSize: 10_000, minMs: 20 });
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    // all ten are due together, and again after every miss, until released
    await clock.runUntil(() => allStatusPolls() >= 2 * pending || lists() > 0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
    expect(lists()).toBe(0);
    expect(p.counters.lists).toBe(0);
    expect(p.counters.status).toBe(allStatusPolls());
    expect(new Set(sandbox.requests().map((r) => r.path.split('/')[2]))).toEqual(new Set(ids));
  });

  it('2,000 pending among 10,000: one list answers for all of them (cheaper than 2,000 status requests)', async () => {
    const ids = seed(10_000, 2_000);
    // a rate cap far above 2,000: the list is chosen for its cost, not because the cap would hold polls back
    const p = makePoller({ listThreshold: 4, listSize: 10_000, minMs: 20, ratePerSec: 100_000 });
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() > 0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
    expect(allStatusPolls()).toBe(0);
    expect(p.counters).toEqual({ status: 0, lists: lists() });
    expect(lists()).toBeLessThanOrEqual(5);
  });

  it('10 pending among 10,000 with the rate cap exhausted: status requests as tokens come, still no list', async () => {
    const ids = seed(10_000, 10);
    const p = makePoller({ listThreshold: 4, listSize: 10_000, minMs: 20, ratePerSec: 5 });
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => allStatusPolls() >= 12 || lists() > 0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
    expect(lists()).toBe(0);
  });

  it('40 pending among 2,000 with the rate cap exhausted: one list answers them sooner than 40 status requests at the cap', async () => {
    // the tail of a large apply: the bucket is empty (lists and polls spent it) and the last creates are due together.
    // Status requests at 10/s would take 4 s to see them all; one list of 2,000 (~0.9 MB, 5x the bytes of their
    // status requests, which the bytes rule alone refuses) answers every one of them at once.
    expect(listCheaper(40, 2_000 * LIST_BYTES_PER_ITEM, 5)).toBe(false);
    const ids = seed(2_000, 40);
    const p = makePoller({ listThreshold: 4, listSize: 2_000, minMs: 20, ratePerSec: 10 });
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() > 0 || allStatusPolls() >= 10);
    expect(lists()).toBe(1);
    expect(allStatusPolls()).toBe(0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
    expect(allStatusPolls()).toBe(0);
  });

  it('a list only when it answers the capped backlog sooner than the cap would, and within its bytes bound', () => {
    // 40 due, no token, 50/s: the last status request goes out 800 ms from now, 400 ms on average
    expect(listSooner(40, 0, 50, 30)).toBe(true);
    expect(listSooner(40, 0, 50, 450)).toBe(false);
    // tokens at hand shorten the wait: 40 due, 30 tokens -> 10 wait, 100 ms on average
    expect(listSooner(40, 30, 50, 90)).toBe(true);
    expect(listSooner(40, 30, 50, 110)).toBe(false);
    // at a high cap the status requests are not held back long: no list
    expect(listSooner(40, 0, 5_000, 10)).toBe(false);
    // the bytes bound: a few polls never draw a list of 10,000, however long the cap holds them
    expect(listCheaper(10, 10_000 * LIST_BYTES_PER_ITEM, CAPPED_LIST_FACTOR)).toBe(false);
  });

  it('a list whose integrations bracket the duration records that bracket only, not one per integration', async () => {
    // 1 still creating, 4 enabled: one list sees a (started 100 ms ago) settled and b (10 ms ago) still creating
    const [b] = seed(5, 1);
    const a = '2';
    const stats = new TransitionStats();
    const p = makePoller({ stats, listThreshold: 2, listSize: 5 });
    const now = clock.now();
    const settledA = p.wait({ id: a, type: 'object_store', op: 'create', startedAt: now - 100, immediate: true });
    const waitingB = p.wait({ id: b!, type: 'object_store', op: 'create', startedAt: now - 10, immediate: true });
    expect(await clock.runUntil(settledA)).toBe('enabled');
    expect(lists()).toBe(1);
    // the transition lasts more than 10 ms and less than 100: a's own guess ([80, 100]: "ended within the last
    // short interval") would pull the estimate towards the time between two lists
    expect(stats.toJSON()).toEqual({ 'object_store/create': [[10, 100]] });
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waitingB)).toBe('enabled');
  });

  it('a delete absent from a list is over, not under way: it never widens the bracket of a delete seen in deleteError', async () => {
    const [a, b] = await create(2);
    sandbox.finishTransitions();
    // a's delete began 600 ms ago and ended in deleteError; b's began 400 ms ago and is done (gone from the list)
    sandbox.failures.next.push({ operation: 'delete', id: Number(a!.id), count: 1 });
    await api.deleteIntegration(a!.id, undefined);
    clock.advance(200);
    await api.deleteIntegration(b!.id, undefined);
    clock.advance(400);
    sandbox.finishTransitions();
    const stats = new TransitionStats();
    const p = makePoller({ stats, listThreshold: 2, listSize: 2 });
    const now = clock.now();
    const waits = [a!, b!].map((c, i) => p.wait({ id: c.id, type: 'object_store', op: 'delete', startedAt: now - (i === 0 ? 600 : 400), immediate: true }));
    expect(await clock.runUntil(Promise.all(waits))).toEqual(['deleteError', 'gone']);
    expect(lists()).toBe(1);
    // b was over by 400 ms: "still under way at 400 ms" ([400, 600]) is false; each one's own bracket is recorded
    expect(stats.toJSON()['object_store/delete']).not.toContainEqual([400, 600]);
    expect(stats.toJSON()['object_store/delete']).toContainEqual([360, 400]);
  });

  it(`lists spaced by ${LIST_SPACING} times the last list's round trip: reading them never holds the thread back to back`, async () => {
    const ids = seed(10_000, 2_000);
    // every list takes 40 ms of the clock to come back (the service serialising it, govops reading it)
    const slowLists = listsTaking(40);
    const p = makePoller({ api: slowLists, listThreshold: 4, listSize: 10_000, minMs: 20, ratePerSec: 100_000 });
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() >= 3);
    const sent = tracked.calls.filter((c) => c.method === 'listIntegrationStatuses').map((c) => c.at);
    expect(sent).toHaveLength(3);
    // each list comes back 40 ms after it was sent; the next goes out no sooner than 8 x 40 ms after that
    expect(sent[1]! - (sent[0]! + 40)).toBeGreaterThanOrEqual(LIST_SPACING * 40);
    expect(sent[2]! - (sent[1]! + 40)).toBeGreaterThanOrEqual(LIST_SPACING * 40);
    // meanwhile the due polls waited for the next list, not one status request each
    expect(allStatusPolls()).toBe(0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
  });

  it(`once no write runs or waits, lists are spaced by ${IDLE_LIST_SPACING} round trips, not ${LIST_SPACING}`, async () => {
    const ids = seed(10_000, 2_000);
    const p = makePoller({ api: listsTaking(40), listThreshold: 4, listSize: 10_000, minMs: 20, ratePerSec: 100_000 });
    p.watchWrites(() => false);
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() >= 3);
    const sent = tracked.calls.filter((c) => c.method === 'listIntegrationStatuses').map((c) => c.at);
    for (const i of [1, 2]) {
      const gap = sent[i]! - (sent[i - 1]! + 40);
      expect(gap).toBeGreaterThanOrEqual(IDLE_LIST_SPACING * 40);
      expect(gap).toBeLessThan(LIST_SPACING * 40);
    }
    expect(allStatusPolls()).toBe(0);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
  });

  it('when the writes stop (writesIdle), a list held back by the longer spacing goes after the shorter one', async () => {
    const ids = seed(10_000, 2_000);
    const p = makePoller({ api: listsTaking(40), listThreshold: 4, listSize: 10_000, minMs: 20, ratePerSec: 100_000 });
    let busy = true;
    p.watchWrites(() => busy);
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() >= 1 && !tracked.busy());
    const first = tracked.calls.find((c) => c.method === 'listIntegrationStatuses')!.at;
    // the writes end 100 ms after the first list came back: 3 round trips (120 ms) are not over by then, 8 would be 320
    let listsWhenIdle = -1;
    clock.setTimeout(() => {
      listsWhenIdle = lists();
      busy = false;
      p.writesIdle();
    }, first + 40 + 100 - clock.now());
    await clock.runUntil(() => lists() >= 2);
    expect(listsWhenIdle).toBe(1);
    const second = tracked.calls.filter((c) => c.method === 'listIntegrationStatuses')[1]!.at;
    expect(second - (first + 40)).toBeGreaterThanOrEqual(IDLE_LIST_SPACING * 40);
    expect(second - (first + 40)).toBeLessThan(LIST_SPACING * 40);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
  });

  it('a slow list spaces the next one by at most --poll-max', async () => {
    const ids = seed(10_000, 2_000);
    // one list takes 10 s of the clock: 8 of them would stop polling for 80 s
    const slowLists = listsTaking(10_000);
    const p = makePoller({ api: slowLists, listThreshold: 4, listSize: 10_000, minMs: 20, maxMs: 3_000, ratePerSec: 100_000, deadline: clock.now() + 600_000 });
    const startedAt = clock.now();
    const waiting = Promise.all(ids.map((id) => p.wait({ id, type: 'object_store', op: 'create', startedAt })));
    await clock.runUntil(() => lists() >= 2);
    const sent = tracked.calls.filter((c) => c.method === 'listIntegrationStatuses').map((c) => c.at);
    expect(sent[1]! - (sent[0]! + 10_000)).toBeLessThanOrEqual(3_000);
    sandbox.setStuckTransitions(false);
    sandbox.finishTransitions();
    expect(await clock.runUntil(waiting)).toEqual(ids.map(() => 'enabled'));
  });
});
