/**
 * The shared status poller against the sandbox: the first poll aimed at the learned end of the
 * transition, growing intervals while nothing is known, one list answering for many, the request-rate
 * cap, what is learned, timeouts and cancellation. Assertions on time are lower bounds only (a busy
 * machine makes things later, never earlier).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import type { IntegrationBody } from '../../src/api/types.js';
import { Poller, type PollerOptions } from '../../src/apply/poller.js';
import { TransitionStats, bestFit } from '../../src/apply/transitions.js';
import { CancelledError, ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

let sandbox: SandboxHandle;
let api: ServiceClient;
let poller: Poller | undefined;
let seq = 0;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 300 });
  api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries: 0 });
});
afterAll(async () => {
  await api.close();
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

function makePoller(o: Partial<PollerOptions> = {}): Poller {
  poller = new Poller({
    api,
    stats: new TransitionStats(),
    minMs: 20,
    maxMs: 5000,
    ratePerSec: 1000,
    listThreshold: Infinity,
    deadline: Date.now() + 30_000,
    ...o,
  });
  return poller;
}

/** Create `n` integrations; returns their ids and the moment each write was accepted. */
async function create(n: number): Promise<Array<{ id: string; at: number }>> {
  const out: Array<{ id: string; at: number }> = [];
  for (let i = 0; i < n; i++) {
    const { id } = await api.createIntegration(store());
    out.push({ id, at: Date.now() });
  }
  return out;
}

/** Times (epoch ms) of the status polls of one integration, from the sandbox's request log. */
const statusPolls = (id: string): number[] =>
  sandbox
    .requests()
    .filter((r) => r.method === 'GET' && r.path === `/integrations/${id}/status`)
    .map((r) => Date.parse(r.time));
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
    expect(await p.wait({ id: c!.id, type: 'object_store', op: 'create', startedAt: c!.at })).toBe('enabled');
    const polls = statusPolls(c!.id);
    expect(polls.length).toBeGreaterThan(0);
    expect(polls[0]! - c!.at).toBeGreaterThanOrEqual(280); // the old schedule polled at +100 and +300
  });

  it('with nothing learned, intervals grow by half the time elapsed; the bracket around the end is learned', async () => {
    const stats = new TransitionStats();
    const p = makePoller({ stats });
    const [c] = await create(1);
    expect(await p.wait({ id: c!.id, type: 'object_store', op: 'create', startedAt: c!.at })).toBe('enabled');
    const polls = statusPolls(c!.id);
    expect(polls.length).toBeGreaterThan(2);
    // (times are when the sandbox received each poll: a little after it was sent, hence the margin)
    for (let i = 1; i < polls.length; i++) {
      const elapsed = polls[i - 1]! - c!.at;
      expect(polls[i]! - polls[i - 1]!).toBeGreaterThanOrEqual(0.8 * Math.max(20, elapsed * 0.5) - 10);
    }
    const [[lo, hi]] = stats.toJSON()['object_store/create']!;
    expect(lo).toBeLessThan(hi!);
    expect(hi).toBeGreaterThanOrEqual(200); // it cannot be settled before the sandbox's 300 ms transition ended
    expect(stats.estimate('object_store/create')).toBeGreaterThan(100);
  });

  it('when several polls are due at once, one GET /integrations answers for all of them', async () => {
    const p = makePoller({ listThreshold: 4 });
    // the ten transitions are held until the poller is listing, then all end together: on a loaded machine the
    // creates are accepted far apart, and transitions ending one by one would leave fewer than four due at once
    sandbox.setStuckTransitions(['creating']);
    const made = await create(10);
    const startedAt = Date.now();
    sandbox.clearRequests();
    const waiting = Promise.all(made.map((c) => p.wait({ id: c.id, type: 'object_store', op: 'create', startedAt })));
    while (lists() === 0) await new Promise((r) => setTimeout(r, 10));
    sandbox.setStuckTransitions(false);
    const statuses = await waiting;
    expect(statuses).toEqual(made.map(() => 'enabled'));
    expect(made.flatMap((c) => statusPolls(c.id))).toEqual([]);
    expect(lists()).toBeGreaterThan(0);
    expect(p.counters).toEqual({ status: 0, lists: lists() });
  });

  it('never polls faster than --poll-rate requests per second', async () => {
    const rate = 10;
    const p = makePoller({ ratePerSec: rate, minMs: 20 });
    const made = await create(8);
    const startedAt = Date.now();
    sandbox.clearRequests();
    await Promise.all(made.map((c) => p.wait({ id: c.id, type: 'object_store', op: 'create', startedAt })));
    const times = sandbox
      .requests()
      .filter((r) => r.path.endsWith('/status'))
      .map((r) => Date.parse(r.time))
      .sort((a, b) => a - b);
    expect(times.length).toBeGreaterThan(rate); // more requests than one second's burst
    // the bucket holds one second of requests: request i comes no earlier than (i + 1 - rate) / rate s after the first
    for (let i = rate; i < times.length; i++) expect(times[i]! - times[0]!).toBeGreaterThanOrEqual(((i + 1 - rate) * 1000) / rate - 15);
  });

  it('a delete is settled when the integration is gone (status 404, or absent from a list)', async () => {
    const p = makePoller({ listThreshold: 2 });
    const made = await create(3);
    sandbox.finishTransitions();
    for (const c of made) await api.deleteIntegration(c.id, undefined);
    const at = Date.now();
    expect(await Promise.all(made.map((c) => p.wait({ id: c.id, type: 'object_store', op: 'delete', startedAt: at })))).toEqual(['gone', 'gone', 'gone']);
  });

  it('past the deadline a wait fails with GOVOPS_SETTLE_TIMEOUT; the signal ends every wait at once', async () => {
    sandbox.setStuckTransitions(true);
    try {
      const [a, b] = await create(2);
      const p1 = makePoller({ deadline: Date.now() + 300 });
      await expect(p1.wait({ id: a!.id, op: 'create' })).rejects.toMatchObject({ code: ErrorCode.settleTimeout, liveId: a!.id });
      p1.close();
      const stop = new AbortController();
      const p2 = makePoller({ signal: stop.signal });
      const waiting = p2.wait({ id: b!.id, op: 'create' });
      setTimeout(() => stop.abort(), 100);
      await expect(waiting).rejects.toBeInstanceOf(CancelledError);
      await expect(p2.wait({ id: b!.id, op: 'create' })).rejects.toBeInstanceOf(CancelledError);
    } finally {
      sandbox.setStuckTransitions(false);
    }
  });
});
