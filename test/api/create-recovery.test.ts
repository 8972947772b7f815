/**
 * A create is never blindly re-sent after an ambiguous failure: the client looks the resource up by
 * its identity first. Tested against a small real server holding integrations and webhooks in memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { notProcessed } from '../../src/api/retry.js';
import { createWebhooks } from '../../src/apply/webhooks.js';
import { TransportError } from '../../src/errors.js';
import { sendJson, startServer, type SeenRequest, type TestServer } from './server.js';

type Fault = 'reset-after-create' | 'reset-before-create' | '504-after-create' | 'slow-after-create' | '503' | 'html-200-after-create' | 'empty-200-after-create';

interface Store {
  integrations: Array<Record<string, unknown>>;
  webhooks: Array<Record<string, unknown>>;
}

const FAST = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10 };
/** A timeout no answer of the in-process server reaches, however busy the machine: no test waits it out. */
const LOOKUP_TIMEOUT_MS = 10_000;
const passed = { status: 'passed', validationTests: [] };
let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

/** What a proxy in front of the service may answer with a 200 after passing the request on: not the service's JSON. */
function proxyPage(res: import('node:http').ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>OK</body></html>');
}

/** A service whose first POST of each collection suffers `fault`; webhooks: `createFirst` of the batch are created first. */
async function faultyService(fault: Fault, opts: { createFirst?: number } = {}) {
  const store: Store = { integrations: [], webhooks: [] };
  let nextId = 100;
  server = await startServer((req: SeenRequest, res, { socket, count }) => {
    const first = req.method === 'POST' && count('POST', req.url.split('?')[0]!) === 1;
    if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, store.integrations);
    if (req.method === 'GET' && req.url === '/webhooks') return sendJson(res, 200, store.webhooks);
    if (req.method === 'POST' && req.url === '/integrations?dryRun=true') {
      if (first) return void socket.destroy();
      return sendJson(res, 200, { id: '', status: 'creating', validationResults: passed });
    }
    if (req.method === 'POST' && req.url === '/integrations') {
      const body = JSON.parse(req.body) as Record<string, unknown>;
      if (first && fault === 'reset-before-create') return void socket.destroy();
      if (first && fault === '503') return sendJson(res, 503, { statusCode: 503, error: 'Service Unavailable', message: 'later' });
      const item = { id: String(nextId++), status: 'creating', validationResults: passed, ...body };
      store.integrations.push(item);
      if (first && fault === 'reset-after-create') return void socket.destroy();
      if (first && fault === '504-after-create') return sendJson(res, 504, { statusCode: 504, error: 'Gateway Timeout', message: 'slow' });
      if (first && fault === 'slow-after-create') return void setTimeout(() => sendJson(res, 201, { id: item.id, status: 'creating', validationResults: passed }), 500);
      if (first && fault === 'html-200-after-create') return void proxyPage(res);
      return sendJson(res, 201, { id: item.id, status: 'creating', validationResults: passed });
    }
    if (req.method === 'POST' && req.url === '/webhooks') {
      const items = (JSON.parse(req.body) as { webhooks: Array<Record<string, unknown>> }).webhooks;
      const keep = first && fault === 'reset-after-create' ? items.slice(0, opts.createFirst ?? items.length) : items;
      const created = keep.map((w) => ({ id: nextId++, url: w.url, name: w.name, global: w.global, notificationType: w.notificationType, createdBy: 1 }));
      store.webhooks.push(...created);
      if (first && fault === 'reset-after-create') return void socket.destroy();
      if (first && fault === 'html-200-after-create') return void proxyPage(res);
      if (first && fault === 'empty-200-after-create') return void res.writeHead(200, { 'content-length': '0' }).end();
      return sendJson(res, 201, { createdWebhooks: created, errors: [] });
    }
    sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
  });
  // The request timeout is real time: short only where the create must outlast it (slow-after-create answers after
  // 500 ms, and nothing else is sent); elsewhere the lookups must never time out on a busy machine (a timed-out
  // lookup is retried, and the request counts below would change).
  // Its list is current (no lag behind writes): what a lookup does not find is re-sent at once (listLagMs 0; a lagging
  // list is test/api/lagging-list.test.ts).
  client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, listLagMs: 0, timeoutMs: fault === 'slow-after-create' ? 200 : LOOKUP_TIMEOUT_MS });
  return { store, server, client };
}

const sql = { type: 'sql_analytics' as const, autoBootstrap: true, config: { host: 'db.example.com', database: 'd' } };
const posts = (s: TestServer, url: string) => s.seen.filter((r) => r.method === 'POST' && r.url === url).length;
const lists = (s: TestServer, url: string) => s.seen.filter((r) => r.method === 'GET' && r.url === url).length;

describe('ambiguous integration creates', () => {
  for (const fault of ['reset-after-create', '504-after-create'] as const) {
    it(`${fault}: finds the created integration by natural key and does not re-send`, async () => {
      const { store, server: s, client: c } = await faultyService(fault);
      const result = await c.createIntegration(sql);
      expect(result).toEqual({ id: '100', status: 'creating', validationResults: passed });
      expect(store.integrations).toHaveLength(1);
      expect(posts(s, '/integrations')).toBe(1);
      expect(lists(s, '/integrations')).toBe(1);
    });
  }

  it('slow-after-create: the answer comes after the request timeout; the client waits for it (no lookup, no second POST)', async () => {
    const { store, server: s, client: c } = await faultyService('slow-after-create');
    const result = await c.createIntegration(sql);
    expect(result).toEqual({ id: '100', status: 'creating', validationResults: passed });
    expect(store.integrations).toHaveLength(1);
    expect(posts(s, '/integrations')).toBe(1);
    expect(lists(s, '/integrations')).toBe(0);
  });

  it('reset before the service created it: looks up, finds nothing, re-sends once', async () => {
    const { store, server: s, client: c } = await faultyService('reset-before-create');
    const result = await c.createIntegration(sql);
    expect(result.id).toBe('100');
    expect(store.integrations).toHaveLength(1);
    expect(posts(s, '/integrations')).toBe(2);
    expect(lists(s, '/integrations')).toBe(1);
  });

  it('503 on a create is ambiguous (a gateway answers it after the origin acted): looked up first, re-sent only when not found', async () => {
    const { store, server: s, client: c } = await faultyService('503');
    await c.createIntegration(sql);
    expect(store.integrations).toHaveLength(1);
    expect(posts(s, '/integrations')).toBe(2);
    expect(lists(s, '/integrations')).toBe(1);
  });

  it('dry runs are re-sent plainly after a reset (they change nothing), without a lookup', async () => {
    const { server: s, client: c } = await faultyService('reset-after-create');
    const out = await c.createIntegration(sql, { dryRun: true });
    expect(out.validationResults.status).toBe('passed');
    expect(posts(s, '/integrations?dryRun=true')).toBe(2);
    expect(lists(s, '/integrations')).toBe(0);
  });
});

const hook = (name: string) => ({ url: `http://127.0.0.1:9/${name}`, name, global: false, notificationType: ['userCreated'], actionType: 'triggered' as const });

describe('ambiguous webhook batch creates', () => {
  it('all created before the reset: returns them from the list, no second POST', async () => {
    const { store, server: s, client: c } = await faultyService('reset-after-create');
    const res = await c.createWebhooks([hook('a'), hook('b')]);
    expect(res.createdWebhooks.map((w) => [w.name, w.id])).toEqual([['a', '100'], ['b', '101']]);
    expect(store.webhooks).toHaveLength(2);
    expect(posts(s, '/webhooks')).toBe(1);
  });

  it('partly created: re-sends only the missing ones', async () => {
    const { store, server: s, client: c } = await faultyService('reset-after-create', { createFirst: 1 });
    const res = await c.createWebhooks([hook('a'), hook('b')]);
    expect(res.createdWebhooks.map((w) => w.name).sort()).toEqual(['a', 'b']);
    expect(store.webhooks.map((w) => w.name)).toEqual(['a', 'b']);
    expect(posts(s, '/webhooks')).toBe(2);
    expect(JSON.parse(s.seen.filter((r) => r.method === 'POST').at(-1)!.body)).toEqual({ webhooks: [hook('b')] });
  });

  it('a live webhook of the same name that was there before is never claimed as its own; it is asked for only after the loss', async () => {
    const { store, server: first, client: c } = await faultyService('reset-after-create', { createFirst: 1 });
    store.webhooks.push({ id: 7, url: 'http://127.0.0.1:9/a', name: 'a', global: false, notificationType: ['userCreated'], createdBy: 1 });
    let asked = 0;
    const preexisting = () => {
      asked++;
      return new Set(['7']);
    };
    const res = await c.createWebhooks([hook('a'), hook('b')], { preexisting });
    expect(res.createdWebhooks.map((w) => [w.name, w.id])).toEqual([['a', '100'], ['b', '101']]);
    expect(asked).toBe(1);
    // Without it, the older one would be taken for this request's.
    await c.close();
    await first.close();
    const plain = await faultyService('reset-after-create', { createFirst: 1 });
    plain.store.webhooks.push({ id: 7, url: 'http://127.0.0.1:9/a', name: 'a', global: false, notificationType: ['userCreated'], createdBy: 1 });
    expect((await plain.client.createWebhooks([hook('a'), hook('b')])).createdWebhooks.find((w) => w.name === 'a')?.id).toBe('7');
    // An answer that is not lost never asks.
    asked = 0;
    await plain.client.createWebhooks([hook('c')], { preexisting });
    expect(asked).toBe(0);
  });
});

describe('a create answered 2xx with a body govops cannot read', () => {
  it('integration: the 2xx says it was carried out: found by natural key, not re-sent, not taken as refused', async () => {
    const { store, server: s, client: c } = await faultyService('html-200-after-create');
    const result = await c.createIntegration(sql);
    expect(result.id).toBe('100');
    expect(store.integrations).toHaveLength(1);
    expect(posts(s, '/integrations')).toBe(1);
  });

  it('webhooks: an empty 200 is not "nothing created": found by name, not re-sent', async () => {
    const { store, server: s, client: c } = await faultyService('empty-200-after-create');
    const res = await c.createWebhooks([hook('a'), hook('b')]);
    expect(res.createdWebhooks.map((w) => [w.name, w.id])).toEqual([['a', '100'], ['b', '101']]);
    expect(store.webhooks).toHaveLength(2);
    expect(posts(s, '/webhooks')).toBe(1);
  });

  it('not listed after the 2xx: an unknown outcome (GOVOPS_CREATE_UNSETTLED), never re-sent, never "not processed"', async () => {
    server = await startServer((req, res) => {
      if (req.method === 'GET') return sendJson(res, 200, []);
      proxyPage(res);
    });
    // its list is current: what it does not show is not looked for again (listLagMs 0; the lag: lagging-list.test.ts)
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, listLagMs: 0, timeoutMs: LOOKUP_TIMEOUT_MS });
    for (const create of [() => client!.createIntegration(sql), () => client!.createWebhooks([hook('a')])]) {
      const err = await create().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toBe('GOVOPS_CREATE_UNSETTLED');
      expect(notProcessed(err)).toBe(false);
    }
    expect(posts(server, '/integrations')).toBe(1);
    expect(posts(server, '/webhooks')).toBe(1);
  });
});

describe('a create still in flight after the request timeout', () => {
  it('is never re-sent while it may be processed: the client waits for its answer', async () => {
    const created: Array<Record<string, unknown>> = [];
    server = await startServer((req, res) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, created);
      if (req.method === 'POST' && req.url === '/integrations') {
        if (created.length) return sendJson(res, 409, { statusCode: 409, error: 'Conflict', message: 'exists' });
        // The service takes 300ms: longer than the client's 100ms timeout.
        return void setTimeout(() => {
          created.push({ id: 7, status: 'creating', validationResults: passed, ...(JSON.parse(req.body) as object) });
          sendJson(res, 201, { id: 7, status: 'creating', validationResults: passed });
        }, 300);
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', timeoutMs: 100, retries: 6, retryPolicy: FAST });
    const result = await client.createIntegration(sql);
    expect(result.id).toBe('7');
    expect(created).toHaveLength(1);
    expect(server.seen.map((r) => r.method)).toEqual(['POST']);
  });

  it('a batch of webhooks slower than the timeout: one POST, no duplicates', async () => {
    const webhooks: Array<Record<string, unknown>> = [];
    server = await startServer((req, res) => {
      if (req.method === 'GET' && req.url === '/webhooks') return sendJson(res, 200, webhooks);
      if (req.method === 'POST' && req.url === '/webhooks') {
        return void setTimeout(() => {
          const items = (JSON.parse(req.body) as { webhooks: Array<Record<string, unknown>> }).webhooks;
          const made = items.map((w, i) => ({ id: webhooks.length + i + 1, url: w.url, name: w.name, global: w.global, notificationType: w.notificationType, createdBy: 1 }));
          webhooks.push(...made);
          sendJson(res, 201, { createdWebhooks: made, errors: [] });
        }, 300);
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', timeoutMs: 100, retries: 6, retryPolicy: FAST });
    const res = await client.createWebhooks(Array.from({ length: 20 }, (_, i) => hook(`w${i}`)));
    expect(res.createdWebhooks).toHaveLength(20);
    expect(webhooks).toHaveLength(20);
    expect(posts(server, '/webhooks')).toBe(1);
  });

  it('no answer within the settle limit: looked up by identity, never re-sent (TransportError GOVOPS_CREATE_UNSETTLED when not found)', async () => {
    server = await startServer((req, res) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, []);
      if (req.method === 'POST' && req.url === '/integrations') return; // never answers
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    // the lookup after the settle limit is sent with the same request timeout: long enough that it is answered on a
    // busy machine (50 ms made it time out and be retried, a second GET)
    client = new ServiceClient({ baseUrl: server.url, token: 't', timeoutMs: 1000, settleTimeoutMs: 1000, retries: 6, retryPolicy: FAST });
    const err = await client.createIntegration(sql).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'GOVOPS_CREATE_UNSETTLED', failureClass: 'transient' });
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /integrations', 'GET /integrations']);
  });
});

describe('the last attempt is ambiguous', () => {
  it('with no retries left, a create that timed out is still looked up and returned when it landed', async () => {
    const { store, server: s, client: unused } = await faultyService('slow-after-create');
    await unused.close();
    client = new ServiceClient({ baseUrl: s.url, token: 't', retries: 0, timeoutMs: 100, retryPolicy: FAST });
    const result = await client.createIntegration(sql);
    expect(result.id).toBe('100');
    expect(store.integrations).toHaveLength(1);
    expect(posts(s, '/integrations')).toBe(1);
  });

  it('with no retries left and nothing found, the failure is a TransportError', async () => {
    const { server: s, client: unused } = await faultyService('reset-before-create');
    await unused.close();
    client = new ServiceClient({ baseUrl: s.url, token: 't', retries: 0, retryPolicy: FAST });
    await expect(client.createIntegration(sql)).rejects.toThrow(/after 1 attempt/);
    expect(lists(s, '/integrations')).toBe(1);
  });
});

describe('an item error in the answer to a re-sent webhook batch', () => {
  /**
   * The service refuses `forbidden-*` items one by one (`{ index, name, statusCode, message }`, as the sandbox does)
   * and creates the others; its first answer is lost after it acted (a reset), so the client re-sends only the
   * missing items: the indexes of that answer's errors are positions in the re-sent list, not in the batch.
   */
  async function refusingService() {
    const store: Array<Record<string, unknown>> = [];
    let nextId = 100;
    server = await startServer((req: SeenRequest, res, { socket, count }) => {
      if (req.method === 'GET' && req.url === '/webhooks') return sendJson(res, 200, store);
      if (req.method === 'POST' && req.url === '/webhooks') {
        const items = (JSON.parse(req.body) as { webhooks: Array<Record<string, unknown>> }).webhooks;
        const createdWebhooks: Array<Record<string, unknown>> = [];
        const errors: unknown[] = [];
        items.forEach((w, index) => {
          if (String(w.name).startsWith('forbidden')) errors.push({ index, name: w.name, statusCode: 403, message: `${String(w.name)}: only administrators may create global webhooks` });
          else createdWebhooks.push({ id: nextId++, url: w.url, name: w.name, global: w.global, notificationType: w.notificationType, createdBy: 1 });
        });
        store.push(...createdWebhooks);
        if (count('POST', '/webhooks') === 1) return void socket.destroy();
        return sendJson(res, 200, { createdWebhooks, errors });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    // its list is current: the refused item is re-sent at once, not looked for again (listLagMs 0)
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, listLagMs: 0, timeoutMs: LOOKUP_TIMEOUT_MS });
    return { store, client };
  }

  it('is the refused item\'s: the created one is an outcome ok, the refused one fails with its own message', async () => {
    const { store, client: c } = await refusingService();
    const outcomes = await createWebhooks(c, [hook('a'), hook('forbidden-b')]);
    expect(store.map((w) => w.name)).toEqual(['a']);
    expect(outcomes[0]).toMatchObject({ ok: true, webhook: { id: '100', name: 'a' } });
    expect(outcomes[1]).toMatchObject({ ok: false, definite: true });
    expect((outcomes[1] as { error: Error }).error.message).toContain('forbidden-b: only administrators');
  });

  it('the client reports it at the item\'s index in the batch it was given', async () => {
    const { client: c } = await refusingService();
    const res = await c.createWebhooks([hook('a'), hook('forbidden-b')]);
    expect(res.createdWebhooks.map((w) => w.name)).toEqual(['a']);
    expect(res.errors).toEqual([expect.objectContaining({ index: 1, name: 'forbidden-b' })]);
  });
});
