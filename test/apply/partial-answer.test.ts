/**
 * A webhook batch answered 2xx whose `createdWebhooks` leaves an item out without an `errors` item about it (a partial
 * answer): the service accepted the batch, so the left-out webhook may exist. Its intent must stay (the next run finds
 * it by identity and records it as govops'), never be dropped as "not created" (the next run then saw govops' own
 * webhook as someone else's: adopted, or blocked under --no-adopt).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { sendJson, startServer, type TestServer } from '../api/server.js';
import { rig, webhookManifest, type Rig } from './inproc.js';

let r: Rig;
let server: TestServer | undefined;
let client: ServiceClient | undefined;
beforeEach(async () => {
  r = await rig();
  r.env.GOVOPS_SECRET_HOOK_SECRET = 'hook-partial-1';
});
afterEach(async () => {
  await client?.close();
  await server?.close();
  server = client = undefined;
  await r.close();
});

describe('a partial answer to a webhook batch', () => {
  it('the left-out webhook (created) stays govops\' own: no adoption, no block under --no-adopt, no second create', async () => {
    const webhooks: Array<Record<string, unknown>> = [];
    let posts = 0;
    server = await startServer((req, res) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, []);
      if (req.method === 'GET' && req.url === '/webhooks') return sendJson(res, 200, webhooks);
      if (req.method === 'POST' && req.url === '/webhooks') {
        posts++;
        const items = (JSON.parse(req.body) as { webhooks: Array<Record<string, unknown>> }).webhooks;
        const made = items.map((w, i) => ({ id: String(webhooks.length + 1 + i), name: w.name, url: w.url, global: w.global, notificationType: w.notificationType, createdBy: 1 }));
        webhooks.push(...made);
        // all created; the answer names only the first
        return sendJson(res, 200, { createdWebhooks: made.slice(0, 1), errors: [] });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retries: 0, logger: silentLogger() });
    for (const n of ['a', 'b']) await r.write(`${n}.yaml`, webhookManifest(n));
    const flat = engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, pollIntervalMs: 10 });
    const opts = { ...flat, plan: { ...flat.plan, noAdopt: true } };
    const first = await reconcile(client, opts);
    expect(first.ok).toBe(false);
    const second = await reconcile(client, opts);
    expect(second.ok, second.error).toBe(true);
    expect(posts).toBe(1);
    const state = await r.state();
    expect(state.resources.map((e) => [e.name, e.id, e.pending, e.origin]).sort()).toEqual([['a', '1', undefined, 'created'], ['b', '2', undefined, 'created']]);
  });
});
