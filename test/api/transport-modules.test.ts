/**
 * util/undici.ts requires undici's Pool, Agent and request API from their own modules (not undici's index, which
 * loads fetch, WebSocket, the cache... at 3x the start-up cost). They must be the very classes and function
 * `import { Pool } from 'undici'` gives, or an undici upgrade that moved them would go unnoticed until a request.
 */
import { createRequire } from 'node:module';
import { Agent, Dispatcher, Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { HttpTransport } from '../../src/api/transport.js';
import { requestUrl, undiciAgent, undiciPool, undiciRequest } from '../../src/util/undici.js';
import { sendJson, startServer } from './server.js';

const require = createRequire(import.meta.url);

describe("the transport's undici modules", () => {
  it("are undici's own Pool and request", () => {
    expect(require('undici/lib/dispatcher/pool.js')).toBe(Pool);
    expect(require('undici/lib/dispatcher/agent.js')).toBe(Agent);
    expect(require('undici/lib/api/api-request.js')).toBe((Dispatcher.prototype as unknown as { request: unknown }).request);
    expect([undiciPool(), undiciAgent(), undiciRequest()]).toEqual([Pool, Agent, (Dispatcher.prototype as unknown as { request: unknown }).request]);
  });

  it('send a request and read its answer through the pool', async () => {
    const server = await startServer((req, res) => sendJson(res, 201, { method: req.method, url: req.url, body: req.body }));
    const transport = new HttpTransport(`${server.url}/api`);
    try {
      const res = await transport.send({ method: 'POST', path: '/integrations?dryRun=true', headers: { 'content-type': 'application/json' }, body: '{"a":1}', timeoutMs: 5_000 });
      expect(res.status).toBe(201);
      expect(JSON.parse(res.text)).toEqual({ method: 'POST', url: '/api/integrations?dryRun=true', body: '{"a":1}' });
    } finally {
      await transport.close();
      await server.close();
    }
  });

  it('requestUrl: origin, path and query from the URL; PUT with a body and GET without, unless a method is given', async () => {
    const server = await startServer((req, res) => sendJson(res, 200, { method: req.method, url: req.url, body: req.body }));
    try {
      const get = await requestUrl(`${server.url}/hooks/a?x=1`, {});
      expect(await get.body.json()).toEqual({ method: 'GET', url: '/hooks/a?x=1', body: '' });
      const put = await requestUrl(`${server.url}/b`, { body: 'x' });
      expect(await put.body.json()).toEqual({ method: 'PUT', url: '/b', body: 'x' });
      const post = await requestUrl(`${server.url}/c`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(post.statusCode).toBe(200);
      expect(await post.body.json()).toEqual({ method: 'POST', url: '/c', body: '{}' });
    } finally {
      await server.close();
    }
  });
});
