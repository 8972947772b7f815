/**
 * The transport (one HTTP attempt over undici's dispatch API) against real servers on 127.0.0.1: how a request
 * that waits for a connection ends at its timeout, one listener on the shutdown signal for all requests under
 * way, the body read as UTF-8 text, and a connection cut in the middle of it.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpTransport, RequestTimeoutError, ResponseTooLargeError } from '../../src/api/transport.js';
import { ServiceClient } from '../../src/api/client.js';
import { ApiError, ErrorCode } from '../../src/errors.js';
import { isRetryableTransportError } from '../../src/api/retry.js';
import { CancelledError } from '../../src/errors.js';
import { latch } from '../helpers/latch.js';
import { sendJson, startServer, type TestServer } from './server.js';

let server: TestServer | undefined;
let transport: HttpTransport | undefined;
afterEach(async () => {
  await transport?.close();
  await server?.close();
  transport = server = undefined;
});

const get = (path: string, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
  transport!.send({ method: 'GET', path, headers: { accept: 'application/json' }, timeoutMs: extra.timeoutMs ?? 10_000, ...(extra.signal ? { signal: extra.signal } : {}) });

describe('HttpTransport', () => {
  it('a request still waiting for a connection fails at its own timeout, and is never sent', async () => {
    const released = latch();
    const held = latch();
    server = await startServer(async (req, res) => {
      if (req.url === '/hold') {
        held.open();
        await released.reached;
      }
      sendJson(res, 200, { path: req.url });
    });
    transport = new HttpTransport(server.url, { connections: 1 });
    const first = get('/hold');
    await held.reached; // the only connection is busy: the next request waits in the pool's queue
    // It fails at its timeout while the connection is still busy (before, it failed only once it got the connection).
    const err = await get('/queued', { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestTimeoutError);
    released.open();
    expect((await first).status).toBe(200);
    // The queue is first in, first out: the timed-out request reaches the connection before this one, and is dropped.
    expect(JSON.parse((await get('/after')).text)).toEqual({ path: '/after' });
    expect(server.seen.map((r) => r.url)).toEqual(['/hold', '/after']);
  });

  it('all requests under way on one shutdown signal share one listener; aborting it ends each with CancelledError', async () => {
    let arrived = 0;
    const five = latch();
    server = await startServer(async (_req, res) => {
      if (++arrived === 5) five.open();
      await new Promise<void>(() => undefined); // never answers
      sendJson(res, 200, {});
    });
    transport = new HttpTransport(server.url, { connections: 8 });
    const force = new AbortController();
    const sent = Array.from({ length: 5 }, (_, i) => get(`/r${i}`, { signal: force.signal }).catch((e: unknown) => e));
    await five.reached;
    expect(getEventListeners(force.signal, 'abort')).toHaveLength(1);
    force.abort();
    const errors = await Promise.all(sent);
    for (const e of errors) expect(e).toBeInstanceOf(CancelledError);
    // a request on a signal already aborted is not sent
    const late = await get('/late', { signal: force.signal }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(CancelledError);
    expect(server.seen.map((r) => r.url)).not.toContain('/late');
  });

  it('the last request under way on a signal removes its listener (a signal made per reconcile is not kept alive by it)', async () => {
    const held = latch();
    server = await startServer(async (req, res) => {
      if (req.url === '/held') {
        held.open();
        await new Promise<void>(() => undefined); // never answers
      }
      sendJson(res, 200, {});
    });
    transport = new HttpTransport(server.url, { connections: 8 });
    const run = new AbortController();
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 4 }, (_, i) => get(`/r${i}`, { signal: run.signal })));
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    }
    // Still watched while one is under way: aborting then ends it.
    const pending = get('/held', { signal: run.signal }).catch((e: unknown) => e);
    await held.reached;
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    run.abort();
    expect(await pending).toBeInstanceOf(CancelledError);
  });

  it('an answer larger than the limit is stopped and fails (ResponseTooLargeError, not a network failure); one at the limit is read', async () => {
    server = await startServer(async (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/endless' || req.url!.startsWith('/api/')) {
        // chunked, never ending: only the limit stops it
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        for (let i = 0; i < 10_000 && !res.destroyed; i++) {
          if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
        }
        res.end();
        return;
      }
      res.end(JSON.stringify({ pad: 'x'.repeat(1024 * 1024 - 10) }));
    });
    transport = new HttpTransport(server.url, { connections: 2, maxResponseBytes: 1024 * 1024 });
    const err = await get('/endless', { timeoutMs: 60_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(isRetryableTransportError(err)).toBe(false);
    expect((await get('/exact')).text).toHaveLength(1024 * 1024);
    // Through the client: the service's fault (an invalid answer), reported once, never retried.
    const client = new ServiceClient({ baseUrl: `${server.url}/api`, token: 't', maxResponseBytes: 1024 * 1024, retryPolicy: { baseDelayMs: 1, maxDelayMs: 2 } });
    try {
      server.seen.length = 0;
      const failed = await client.listIntegrations().catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(ApiError);
      expect(failed).toMatchObject({ code: ErrorCode.apiInvalidResponse, statusCode: 200 });
      expect(server.seen).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('the body is read as UTF-8 text across chunks (a leading byte order mark dropped), headers as undici parses them', async () => {
    const text = '{"name":"café ☕"}';
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    const split = bytes.indexOf(Buffer.from('é', 'utf8')) + 1; // inside the two bytes of "é"
    server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-many': ['a', 'b'] });
      res.write(bytes.subarray(0, split));
      await new Promise((r) => setImmediate(r));
      res.end(bytes.subarray(split));
    });
    transport = new HttpTransport(server.url);
    const res = await get('/x');
    expect(res.status).toBe(200);
    expect(res.text).toBe(text);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-many']).toEqual(['a', 'b']);
  });

  it('a connection closed in the middle of the body fails with undici\'s error (a transient one), never a partial text', async () => {
    server = await startServer((_req, res, { socket }) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"items":[');
      setImmediate(() => socket.destroy());
    });
    transport = new HttpTransport(server.url);
    const err = await get('/cut').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toBe('UND_ERR_SOCKET');
    expect(isRetryableTransportError(err)).toBe(true);
  });

  it('an empty body is the empty string', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    transport = new HttpTransport(server.url);
    const res = await get('/empty');
    expect(res).toMatchObject({ status: 204, text: '' });
  });
});
