/**
 * POST /webhooks answers `{ createdWebhooks, errors }` for the items of *that* request (interface 4.3). After a lost
 * answer the client re-sends only the webhooks the list does not show: an item error that names its item by
 * position (`index`) then counts in the smaller batch, and must still land on the webhook it is about.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import type { WebhookInput } from '../../src/api/types.js';
import { createWebhooks } from '../../src/apply/webhooks.js';
import { sendJson, startServer, type TestServer } from './server.js';

const FAST = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10 };
const hook = (name: string, url = `http://127.0.0.1:9/${name}`): WebhookInput => ({ url, name, global: false, notificationType: ['userCreated'], actionType: 'triggered' });

let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

describe('item errors of a webhook batch re-sent after a lost answer', () => {
  it('an error by index is about the item of the request that got it, not the item at that place in the whole batch', async () => {
    const live: Array<Record<string, unknown>> = [];
    let nextId = 100;
    let posts = 0;
    server = await startServer((req, res, { socket }) => {
      if (req.method === 'GET' && req.url === '/webhooks') return sendJson(res, 200, live);
      if (req.method === 'POST' && req.url === '/webhooks') {
        posts++;
        const items = (JSON.parse(req.body) as { webhooks: WebhookInput[] }).webhooks;
        if (posts === 1) {
          // the first item is created, then the connection drops: the answer is lost
          live.push({ id: nextId++, ...items[0], createdBy: 1 });
          return void socket.destroy();
        }
        // the re-sent batch [b, c]: b is refused (its URL), c created
        const created = items.filter((w) => w.url.startsWith('http://127.0.0.1')).map((w) => ({ id: nextId++, ...w, createdBy: 1 }));
        live.push(...created);
        const errors = items.flatMap((w, index) => (w.url.startsWith('http://127.0.0.1') ? [] : [{ index, message: 'url is not reachable' }]));
        return sendJson(res, 201, { createdWebhooks: created, errors });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    // no request may time out on a busy machine (a retry would change the count of POSTs); the list is current: what it
    // does not show is re-sent at once (listLagMs 0; the lag: lagging-list.test.ts)
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, listLagMs: 0, timeoutMs: 10_000 });

    const out = await createWebhooks(client, [hook('a'), hook('b', 'http://unreachable.invalid/b'), hook('c')]);

    expect(posts).toBe(2);
    expect(out[0]).toMatchObject({ ok: true, webhook: { name: 'a', id: '100' } });
    expect(out[1]).toMatchObject({ ok: false, definite: true });
    expect((out[1] as { error: Error }).error.message).toContain('url is not reachable');
    expect(out[2]).toMatchObject({ ok: true, webhook: { name: 'c' } });
  });
});
