/**
 * api/transport.ts requires undici's Pool and request API from their own modules (not undici's index, which
 * loads fetch, WebSocket, the cache... at 3x the start-up cost). They must be the very class and function
 * `import { Pool } from 'undici'` gives, or an undici upgrade that moved them would go unnoticed until a request.
 */
import { createRequire } from 'node:module';
import { Dispatcher, Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { HttpTransport } from '../../src/api/transport.js';
import { sendJson, startServer } from './server.js';

const require = createRequire(import.meta.url);

describe("the transport's undici modules", () => {
  it("are undici's own Pool and request", () => {
    expect(require('undici/lib/dispatcher/pool.js')).toBe(Pool);
    expect(require('undici/lib/api/api-request.js')).toBe((Dispatcher.prototype as unknown as { request: unknown }).request);
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
});
