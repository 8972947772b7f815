/**
 * POST /webhooks/history/retry/{id} makes a new delivery: after an answer that may come after the service acted
 * (any 5xx, 503 included: a gateway answers it after the origin delivered; a 408) it is never sent again. Only an
 * answer that says "not done" (429) is retried. docs/webhooks.md and docs/decisions.md say the same.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { TransportError } from '../../src/errors.js';
import { sendJson, startServer, type TestServer } from './server.js';

const FAST = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10 };
let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

async function answeringFirst(status: number) {
  server = await startServer((req, res, { count }) => {
    if (count('POST', '/webhooks/history/retry/') === 1) return sendJson(res, status, { statusCode: status, error: 'x', message: 'first' });
    sendJson(res, 200, { id: 9, statusCode: 200, webhooksId: 1, createdAt: '2026-01-01T00:00:00Z' });
  });
  client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
  return { server, client };
}

describe('retry of a webhook delivery', () => {
  it.each([503, 502, 500, 408])('%i: not sent again (it may have been delivered)', async (status) => {
    const { server: s, client: c } = await answeringFirst(status);
    await expect(c.retryWebhookDelivery('41')).rejects.toBeInstanceOf(TransportError);
    expect(s.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('429: retried (not processed)', async () => {
    const { server: s, client: c } = await answeringFirst(429);
    expect((await c.retryWebhookDelivery('41')).id).toBe('9');
    expect(s.seen.filter((r) => r.method === 'POST')).toHaveLength(2);
  });
});
