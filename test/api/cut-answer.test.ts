/**
 * An answer cut short on a connection the server closes (`Connection: close`: an HTTP/1.0 proxy, a server that
 * stops mid-answer) is the connection lost, as a reset is: undici reports it as a content-length mismatch (a body
 * with a length) or a parser error (a chunked body without its last chunk), not as a socket error. A read is sent
 * again; a create that was answered 2xx with a cut body was accepted, so it is looked up by its identity and never
 * re-sent blindly (docs/decisions.md, "Ambiguous vs safe failures").
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { sendJson, startServer, type TestServer } from './server.js';

const FAST = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10 };
const passed = { status: 'passed', validationTests: [] };
let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

type Cut = 'content-length' | 'chunked';

/** Start a 2xx answer, send part of its body, and close the connection. */
function cutAnswer(res: ServerResponse, socket: Socket, status: number, cut: Cut): void {
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...(cut === 'content-length' ? { 'content-length': '1000' } : {}) });
  res.write('[{"id":"1","status":"ena');
  setImmediate(() => socket.end());
}

describe('an answer cut short when the server closes the connection', () => {
  it.each<Cut>(['content-length', 'chunked'])('a read is sent again (%s body)', async (cut) => {
    server = await startServer((req, res, { socket, count }) => {
      if (count('GET', '/integrations') === 1) return cutAnswer(res, socket, 200, cut);
      sendJson(res, 200, [{ id: '1', status: 'enabled', type: 'lakehouse', autoBootstrap: false, config: {} }]);
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    expect((await client.listIntegrations()).map((i) => i.id)).toEqual(['1']);
    expect(server.seen.filter((r) => r.method === 'GET')).toHaveLength(2);
  });

  it.each<Cut>(['content-length', 'chunked'])('a create answered 201 with a cut body is found by natural key, never sent twice (%s body)', async (cut) => {
    const live: Array<Record<string, unknown>> = [];
    server = await startServer((req, res, { socket }) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, live);
      if (req.method === 'POST' && req.url === '/integrations') {
        const body = JSON.parse(req.body) as Record<string, unknown>;
        live.push({ id: String(100 + live.length), status: 'creating', validationResults: passed, ...body });
        return cutAnswer(res, socket, 201, cut);
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    const created = await client.createIntegration({ type: 'sql_analytics', autoBootstrap: true, config: { host: 'db.example.com', database: 'd' } });
    expect(created.id).toBe('100');
    expect(live).toHaveLength(1);
    expect(server.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});

describe('a create answered with more than the client reads (maxResponseBytes)', () => {
  it('2xx: it was carried out: found by natural key, not re-sent, never "not processed"', async () => {
    const live: Array<Record<string, unknown>> = [];
    server = await startServer((req, res) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, live);
      if (req.method === 'POST' && req.url === '/integrations') {
        const body = JSON.parse(req.body) as Record<string, unknown>;
        live.push({ id: '100', status: 'creating', validationResults: passed, ...body });
        return sendJson(res, 201, { id: '100', status: 'creating', validationResults: passed, pad: 'x'.repeat(4096) });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, maxResponseBytes: 1024 });
    const created = await client.createIntegration({ type: 'sql_analytics', autoBootstrap: true, config: { host: 'db.example.com', database: 'd' } });
    expect(created.id).toBe('100');
    expect(server.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});
