/**
 * A webhook create whose answer is lost while the service's list lags behind writes (interface 4.3: the service
 * takes any number of webhooks of the same name, so nothing but govops stops a second copy). The client looks for
 * what it sent again, within its list-lag window on the injected clock, before it re-sends anything.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { notProcessed } from '../../src/api/retry.js';
import { ErrorCode } from '../../src/errors.js';
import { ManualClock } from '../helpers/clock.js';
import { sendJson, startServer, type TestServer } from './server.js';

const LAG_MS = 3_000;
const WINDOW_MS = 10_000;
/** A timeout no answer of the in-process server reaches, however busy the machine. */
const TIMEOUT_MS = 10_000;

let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

interface Stored {
  id: number;
  name: string;
  url: string;
  createdBy: number;
  /** clock.monotonic() from which lists show it. */
  visibleAt: number;
}

/**
 * A service whose webhook list shows a webhook only `lag` ms (clock time) after its create; its first POST stores
 * the first `landFirst` items (all by default) and then the connection is reset (the answer lost).
 */
async function laggingService(clock: ManualClock, opts: { lag?: number; landFirst?: number; others?: Array<Omit<Stored, 'visibleAt'>> } = {}) {
  const store: Stored[] = (opts.others ?? []).map((w) => ({ ...w, visibleAt: 0 }));
  let nextId = 100;
  let posts = 0;
  const bodies: string[][] = [];
  server = await startServer((req, res, { socket }) => {
    if (req.method === 'GET' && req.url === '/webhooks') {
      const now = clock.monotonic();
      return sendJson(res, 200, store.filter((w) => w.visibleAt <= now).map(({ visibleAt: _v, ...w }) => ({ ...w, global: false, notificationType: ['userCreated'] })));
    }
    if (req.method === 'POST' && req.url === '/webhooks') {
      posts++;
      const items = (JSON.parse(req.body) as { webhooks: Array<{ name: string; url: string }> }).webhooks;
      bodies.push(items.map((w) => w.name));
      const keep = posts === 1 ? items.slice(0, opts.landFirst ?? items.length) : items;
      const made = keep.map((w) => ({ id: nextId++, name: w.name, url: w.url, createdBy: 1, visibleAt: clock.monotonic() + (opts.lag ?? LAG_MS) }));
      store.push(...made);
      if (posts === 1) return void socket.destroy();
      return sendJson(res, 201, { createdWebhooks: made.map(({ visibleAt: _v, ...w }) => w), errors: [] });
    }
    sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
  });
  client = new ServiceClient({
    baseUrl: server.url, token: 't', clock, timeoutMs: TIMEOUT_MS, listLagMs: WINDOW_MS, retries: 3,
    retryPolicy: { baseDelayMs: 500, maxDelayMs: 2_000 }, random: () => 0.5,
  });
  return { store, bodies, client };
}

const hook = (name: string) => ({ url: `http://127.0.0.1:9/${name}`, name, global: false, notificationType: ['userCreated'], actionType: 'triggered' as const });

describe('a lost webhook create answer while the list lags behind writes', () => {
  it('looks again until the list shows it: one POST, one webhook, its id returned', async () => {
    const clock = new ManualClock();
    const { store, bodies, client: c } = await laggingService(clock);
    const start = clock.monotonic();
    const res = await clock.runUntil(c.createWebhooks([hook('a')]));
    expect(res.createdWebhooks.map((w) => [w.name, w.id])).toEqual([['a', '100']]);
    expect(bodies).toEqual([['a']]);
    expect(store.map((w) => w.name)).toEqual(['a']);
    expect(clock.monotonic() - start).toBeGreaterThanOrEqual(LAG_MS);
    expect(clock.monotonic() - start).toBeLessThan(WINDOW_MS);
  });

  it('a batch partly stored: the stored ones are found once listed, the others re-sent only after the window, once', async () => {
    const clock = new ManualClock();
    const { store, bodies, client: c } = await laggingService(clock, { landFirst: 1 });
    const start = clock.monotonic();
    const res = await clock.runUntil(c.createWebhooks([hook('a'), hook('b')]));
    expect(res.createdWebhooks.map((w) => w.name).sort()).toEqual(['a', 'b']);
    expect(bodies).toEqual([['a', 'b'], ['b']]);
    expect(store.map((w) => w.name)).toEqual(['a', 'b']);
    expect(clock.monotonic() - start).toBeGreaterThanOrEqual(WINDOW_MS);
  });

  it('the run deadline comes first: not re-sent, an unknown outcome (never "not processed")', async () => {
    const clock = new ManualClock();
    const { store, bodies, client: c } = await laggingService(clock, { lag: 60_000 });
    const view = c.withSignal(new AbortController().signal, undefined, { clock, at: clock.monotonic() + 2_000 });
    const err = await clock.runUntil(view.createWebhooks([hook('a')]).then(() => undefined, (e: unknown) => e));
    expect(err).toBeInstanceOf(Error);
    expect(notProcessed(err)).toBe(false);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe(ErrorCode.createUnsettled);
    expect(bodies).toEqual([['a']]);
    expect(store).toHaveLength(1);
  });

  it("another's webhook of the same name and another url (not in the plan's list) is never taken for the one sent", async () => {
    const clock = new ManualClock();
    const other = { id: 7, name: 'a', url: 'https://other-team.example/a', createdBy: 2 };
    const { store, bodies, client: c } = await laggingService(clock, { landFirst: 0, others: [other] });
    const res = await clock.runUntil(c.createWebhooks([hook('a')]));
    expect(res.createdWebhooks.map((w) => [w.name, w.id, w.url])).toEqual([['a', '100', hook('a').url]]);
    expect(bodies).toEqual([['a'], ['a']]);
    expect(store.map((w) => w.id)).toEqual([7, 100]);
  });
});
