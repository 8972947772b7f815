/** ServiceClient against tiny real HTTP servers: headers, ids, errors, retries, timeouts, keep-alive. */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient, type RequestEvent } from '../../src/api/client.js';
import { ApiError, ErrorCode, TransportError, type GovopsError } from '../../src/errors.js';
import { notProcessed } from '../../src/api/retry.js';
import { REDACTED, registerSecrets } from '../../src/util/redact.js';
import { deadPort, sendJson, startServer, type TestServer } from './server.js';
import { ManualClock } from '../helpers/clock.js';

const TOKEN = 'tok-abc-123';
const FAST = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 5_000 };

let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

function makeClient(url: string, extra: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}): ServiceClient {
  client = new ServiceClient({ baseUrl: url, token: TOKEN, retryPolicy: FAST, ...extra });
  return client;
}

describe('ServiceClient basics', () => {
  it('sends the raw token to integrations and Bearer to webhooks, JSON headers, and normalises ids', async () => {
    server = await startServer((req, res) => {
      if (req.url === '/integrations/7/status') return sendJson(res, 200, { id: 7, status: 'enabled' });
      if (req.url === '/webhooks') return sendJson(res, 200, [{ id: 3, name: 'a', url: 'http://x', notificationType: ['x'], global: false, createdBy: 1 }]);
      if (req.url === '/integrations?dryRun=true') return sendJson(res, 200, { id: '12', status: 'creating', validationResults: { status: 'passed', validationTests: [] } });
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: 'nope' });
    });
    const c = makeClient(server.url);
    expect(await c.getIntegrationStatus('7')).toEqual({ id: '7', status: 'enabled' });
    const hooks = await c.listWebhooks();
    expect(hooks[0]!.id).toBe('3');
    const created = await c.createIntegration({ type: 'distributed_sql' }, { dryRun: true });
    expect(created.id).toBe('12');

    const [status, webhooks, post] = server.seen;
    expect(status!.headers.authorization).toBe(TOKEN);
    expect(status!.headers.accept).toBe('application/json');
    expect(status!.headers['content-type']).toBeUndefined();
    expect(webhooks!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(post!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post!.body)).toEqual({ type: 'distributed_sql' });
  });

  it('maps error bodies to ApiError and never retries other 4xx', async () => {
    server = await startServer((req, res) => {
      if (req.url.startsWith('/integrations/1')) return sendJson(res, 422, { statusCode: 422, error: 'Unprocessable Entity', message: 'a test failed', validationResults: { status: 'failed' } });
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('plain failure');
    });
    const c = makeClient(server.url);
    const err = await c.updateIntegration('1', { type: 'distributed_sql' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const api = err as ApiError;
    expect([api.statusCode, api.error, api.message, api.method, api.path]).toEqual([422, 'Unprocessable Entity', 'a test failed', 'PUT', '/integrations/1']);
    expect((api.body as { validationResults: unknown }).validationResults).toEqual({ status: 'failed' });

    const err2 = (await c.getWebhook('9').catch((e: unknown) => e)) as ApiError;
    expect(err2).toBeInstanceOf(ApiError);
    expect([err2.statusCode, err2.error, err2.message]).toEqual([400, 'Bad Request', 'plain failure']);
    expect(server.seen.length).toBe(2);
  });

  it("keeps at most 2,000 characters of a service's error text (shown in outcomes, logs, /status and notifications)", async () => {
    const long = 'e'.repeat(50_000);
    server = await startServer((_req, res) => sendJson(res, 400, { statusCode: 400, error: long, message: [long, 'second'] }));
    const err = (await makeClient(server.url).getWebhook('9').catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toBe(`${'e'.repeat(2000)}… (${50_000 + 8 - 2000} more characters)`);
    expect(err.error).toBe(`${'e'.repeat(2000)}… (48000 more characters)`);
    expect(((err.body as { message: string[] }).message)[1]).toBe('second');
  });

  it('redacts the error text before cutting it: a secret the service echoed across the cut leaves no part of itself', async () => {
    const secret = 'client-cut-Secret-77c1&<x>';
    registerSecrets(secret);
    // the secret echoed across the 2,000th character of a JSON message (its [redacted] too), the 200th of a text answer
    for (const [pad, json] of [[1960, true], [1965, true], [165, false]] as const) {
      server = await startServer((_req, res) => {
        const text = `${'x'.repeat(pad)}invalid config: {"password":${JSON.stringify(secret)}}`;
        if (json) return sendJson(res, 400, { statusCode: 400, error: 'Bad Request', message: text });
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(text);
      });
      const err = (await makeClient(server.url).getWebhook('9').catch((e: unknown) => e)) as ApiError;
      expect(err).toBeInstanceOf(ApiError);
      expect(err.message).not.toContain('client-cut');
      expect(err.message.replaceAll(REDACTED, '')).not.toMatch(/\[|\]/); // a [redacted] is whole or left out
      expect(err.message).toMatch(json ? /… \(\d+ more characters\)$/ : /…$/);
      if (pad === 1965) expect(err.message).toBe(`${'x'.repeat(1965)}invalid config: {"password":"… (12 more characters)`);
      await client?.close();
      await server.close();
      client = server = undefined;
    }
  });

  it('reuses one keep-alive connection for sequential requests and reports each attempt with its route', async () => {
    server = await startServer((req, res) => sendJson(res, 200, { id: Number(req.url.split('/')[2]), status: 'enabled' }));
    const events: RequestEvent[] = [];
    const c = makeClient(server.url, { onRequest: (e) => events.push(e) });
    for (let i = 1; i <= 10; i++) await c.getIntegrationStatus(String(i));
    // undici may open a second socket when the next request races the first socket's release; never one per request.
    expect(server.connections).toBeLessThanOrEqual(2);
    expect(events.map((e) => [e.method, e.route, e.status])).toEqual(Array(10).fill(['GET', '/integrations/{id}/status', 200]));
  });

  it('returns scripts given as text/plain or as a JSON string, with the id in the path for edit', async () => {
    server = await startServer((req, res) => {
      if (req.url.endsWith('/edit')) return sendJson(res, 200, 'EDIT SCRIPT');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('CREATE SCRIPT\n');
    });
    const c = makeClient(server.url);
    const body = { type: 'sql_analytics' as const, autoBootstrap: false, config: { host: 'h' } };
    expect(await c.generateScript('create', { body })).toBe('CREATE SCRIPT\n');
    expect(await c.generateScript('edit', { id: '4', body })).toBe('EDIT SCRIPT');
    expect(await c.generateScript('delete', { id: '4' })).toBe('CREATE SCRIPT\n');
    expect(server.seen.map((s) => [s.url, s.body])).toEqual([
      ['/integrations/scripts/create', JSON.stringify(body)],
      ['/integrations/4/scripts/edit', JSON.stringify(body)],
      ['/integrations/4/scripts/delete', ''],
    ]);
  });
});

describe('ids past 2^53 (webhook and history ids are JSON integers, interface 2.12/2.13)', () => {
  it('keeps every digit of an id: a rounded id would read, retry or delete another webhook', async () => {
    const big = '9007199254740993'; // 2^53 + 1: JSON.parse reads it as 9007199254740992
    const raw = (res: import('node:http').ServerResponse, text: string): void => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    };
    server = await startServer((req, res) => {
      if (req.url === '/webhooks') {
        return raw(res, `[{"id":${big},"name":"a","url":"http://x/${big}","notificationType":["x"],"global":false,"createdBy":1}]`);
      }
      if (req.url === `/webhooks/${big}` && req.method === 'DELETE') return raw(res, `{"id": ${big}, "name": "a"}`);
      if (req.url?.startsWith('/webhooks/history')) {
        return raw(res, `{"count":"1","records":[{"id":${big}1,"webhooksId":-${big},"webhooksActivityId":${big},"statusCode":200,"request":{"webhookId":${big}}}]}`);
      }
      if (req.url === `/integrations/${big}/status`) return raw(res, `{"id":${big},"status":"enabled"}`);
      if (req.url === '/integrations') return raw(res, `[{"id":${big},"status":"enabled"},{"id":"${big}","status":"creating"}]`);
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url ?? '' });
    });
    const c = makeClient(server.url);
    const [hook] = await c.listWebhooks();
    expect(hook!.id).toBe(big);
    expect(hook!.url).toBe(`http://x/${big}`); // inside a string: untouched
    expect((await c.deleteWebhook(big)).id).toBe(big);
    const page = await c.listWebhookHistory();
    expect(page.records[0]).toMatchObject({ id: `${big}1`, webhookId: `-${big}`, webhooksActivityId: big });
    expect((await c.getIntegrationStatus(big)).id).toBe(big);
    expect((await c.listIntegrationStatuses()).items.map((i) => i.id)).toEqual([big, big]);
  });
});

describe('redirects', () => {
  it('are never followed: the host a 3xx names receives nothing (not the token), and the 3xx is an error of the request', async () => {
    const other = await startServer((_req, res) => sendJson(res, 200, []));
    try {
      server = await startServer((req, res) => {
        res.writeHead(307, { location: `${other.url}${req.url ?? ''}` }).end();
      });
      const c = makeClient(server.url);
      await expect(c.listIntegrations()).rejects.toMatchObject({ name: 'ApiError', statusCode: 307 });
      await expect(c.createWebhooks([{ url: 'http://x', name: 'a', global: false, notificationType: ['x'], actionType: 'triggered' }])).rejects.toMatchObject({ statusCode: 307 });
      expect(other.seen).toHaveLength(0);
      expect(server.seen.map((r) => r.method)).toEqual(['GET', 'POST']); // a 3xx is never retried
    } finally {
      await other.close();
    }
  });
});

describe('ServiceClient close', () => {
  it('after close() a request fails at once with a TransportError, without retrying', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, []));
    const c = makeClient(server.url, { retryPolicy: { baseDelayMs: 10_000, maxDelayMs: 10_000 } });
    expect(await c.listWebhooks()).toEqual([]);
    await c.close();
    const err = await c.listWebhooks().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(server.seen.length).toBe(1);
    client = undefined;
  });
});

describe('ServiceClient retries', () => {
  it('retries 503, 502 and 504 on reads and then succeeds', async () => {
    const codes = [503, 502, 504];
    server = await startServer((_req, res, { count }) => {
      const n = count('GET', '/integrations');
      if (n <= codes.length) return sendJson(res, codes[n - 1]!, { statusCode: codes[n - 1], error: 'x', message: 'busy' });
      sendJson(res, 200, []);
    });
    const events: RequestEvent[] = [];
    expect(await makeClient(server.url, { onRequest: (e) => events.push(e) }).listIntegrations()).toEqual([]);
    expect(events.map((e) => e.status)).toEqual([503, 502, 504, 200]);
  });

  it('gives up after the bounded number of attempts with the last ApiError', async () => {
    server = await startServer((_req, res) => sendJson(res, 503, { statusCode: 503, error: 'Service Unavailable', message: 'down' }));
    const err = (await makeClient(server.url, { retries: 2 }).listWebhooks().catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.statusCode).toBe(503);
    expect(server.seen.length).toBe(3);
  });

  it('honours Retry-After (seconds) on 429', async () => {
    server = await startServer((_req, res, { count }) => {
      if (count('GET', '/webhooks') === 1) return sendJson(res, 429, { statusCode: 429, error: 'Too Many Requests', message: 'slow down' }, { 'retry-after': '1' });
      sendJson(res, 200, []);
    });
    // the client's clock, moved by hand: backoff alone would wait at most FAST.maxDelayMs (5ms); Retry-After asks a second
    const clock = new ManualClock();
    const listed = makeClient(server.url, { clock }).listWebhooks();
    await clock.untilTimer();
    expect(server.seen.length).toBe(1);
    expect(clock.dueIn()).toEqual([1000]);
    clock.advance(999);
    expect(clock.dueIn()).toEqual([1]);
    clock.advance(1);
    await listed;
    expect(server.seen.length).toBe(2);
  });

  it("never sleeps past a run's deadline: a retry that would start after it is not made, and the error says timed out", async () => {
    server = await startServer((_req, res) => sendJson(res, 429, { statusCode: 429, error: 'Too Many Requests', message: 'slow down' }, { 'retry-after': '60' }));
    const clock = new ManualClock();
    const base = makeClient(server.url, { clock, retries: 4, retryPolicy: { ...FAST, maxRetryAfterMs: 60_000 } });
    // an apply with 10 s left: the Retry-After (60 s) would end after it
    const run = base.withSignal(new AbortController().signal, undefined, { clock, at: clock.monotonic() + 10_000 });
    const err = await clock.runUntil(run.listWebhooks().catch((e: unknown) => e));
    expect(server.seen.length).toBe(1);
    expect(clock.dueIn()).toEqual([]);
    expect((err as GovopsError).code).toBe(ErrorCode.settleTimeout);
    expect((err as Error).message).toMatch(/429.*--timeout/);
    // a create refused with 429 was not carried out: its intent can go
    expect(notProcessed(err)).toBe(true);
    // a backoff that ends before the deadline is waited out, as before (then the next one would not be)
    server.seen.length = 0;
    clock.advance(60_000); // what the first 429 asked for is over (the client sends nothing before: test below)
    const short = base.withSignal(new AbortController().signal, undefined, { clock, at: clock.monotonic() + 70_000 });
    const err2 = await clock.runUntil(short.listWebhooks().catch((e: unknown) => e));
    expect(server.seen.length).toBe(2);
    expect((err2 as GovopsError).code).toBe(ErrorCode.settleTimeout);
  });

  it("a Retry-After holds the client's next request too (the daemon's next reconcile, a parallel request), not only the same request's retry", async () => {
    server = await startServer((_req, res, { count }) => {
      if (count('GET', '/webhooks') === 1) return sendJson(res, 429, { statusCode: 429, error: 'Too Many Requests', message: 'slow down' }, { 'retry-after': '30' });
      sendJson(res, 200, []);
    });
    const clock = new ManualClock();
    // no retries (the request's own retry is not what this is about): the call ends with the 429
    const c = makeClient(server.url, { clock, retries: 0, retryPolicy: { ...FAST, maxRetryAfterMs: 60_000 } });
    const err = await c.listWebhooks().catch((e: unknown) => e);
    expect((err as ApiError).statusCode).toBe(429);
    // the next call (the daemon's next reconcile after its own 1 s backoff) waits for what the service asked
    clock.advance(1_000);
    const next = c.withSignal(new AbortController().signal).listWebhooks();
    expect(await Promise.race([clock.untilTimer().then(() => 'waiting'), next.then(() => 'sent at once')])).toBe('waiting');
    expect(server.seen.length).toBe(1);
    expect(clock.dueIn()).toEqual([29_000]);
    clock.advance(29_000);
    await next;
    expect(server.seen.length).toBe(2);
    // asked once, waited once: the request after it goes at once
    await c.listWebhooks();
    expect(server.seen.length).toBe(3);
  });

  it("a request the service's Retry-After would hold past the run's deadline is not sent, and counts as not carried out", async () => {
    server = await startServer((_req, res) => sendJson(res, 503, { statusCode: 503, error: 'Service Unavailable', message: 'busy' }, { 'retry-after': '60' }));
    const clock = new ManualClock();
    const c = makeClient(server.url, { clock, retries: 0, retryPolicy: { ...FAST, maxRetryAfterMs: 60_000 } });
    await c.listWebhooks().catch(() => undefined);
    const run = c.withSignal(new AbortController().signal, undefined, { clock, at: clock.monotonic() + 10_000 });
    const err = await run.createIntegration({ name: 'lake' } as never).catch((e: unknown) => e);
    expect(server.seen.length).toBe(1);
    expect((err as GovopsError).code).toBe(ErrorCode.settleTimeout);
    expect((err as Error).message).toMatch(/Retry-After/);
    expect(notProcessed(err)).toBe(true);
  });

  it('throws TransportError after retries when the connection is refused', async () => {
    const url = await deadPort();
    const events: RequestEvent[] = [];
    const err = await makeClient(url, { retries: 2, onRequest: (e) => events.push(e) }).listIntegrations().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).message).toMatch(/ECONNREFUSED/);
    expect(events.map((e) => [e.status, e.error])).toEqual(Array(3).fill([0, 'ECONNREFUSED']));
  });

  it('times out a request that never answers and retries it', async () => {
    server = await startServer(() => {
      /* never answer */
    });
    const err = await makeClient(server.url, { retries: 1, timeoutMs: 100 }).getIntegration('1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).message).toMatch(/GOVOPS_REQUEST_TIMEOUT/);
    expect(server.seen.length).toBe(2);
  });

  it('retries a reset connection on a read', async () => {
    server = await startServer((_req, res, { socket, count }) => {
      if (count('GET', '/integrations/5') === 1) return void socket.destroy();
      sendJson(res, 200, { id: '5', status: 'enabled', type: 'distributed_sql', autoBootstrap: false, config: {}, validationResults: { status: 'passed', validationTests: [] } });
    });
    const live = await makeClient(server.url).getIntegration('5');
    expect(live.id).toBe('5');
    expect(server.seen.length).toBe(2);
  });
});
