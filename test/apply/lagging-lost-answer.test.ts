/**
 * A webhook create whose answer is lost (the service stored it, a gateway answered 503) while the service's list lags
 * behind writes (sandbox behaviours 503-after-success-all and list-lag): the lookup right after the loss does not show
 * the webhook yet. Re-sending it then made a second webhook that no state entry records (delivering every event twice).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { sendJson, startServer, type TestServer } from '../api/server.js';
import { rig, webhookManifest, type Rig } from './inproc.js';

let r: Rig | undefined;
let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  await r?.close();
  r = server = client = undefined;
});

describe('lost create answer + a list that lags behind writes', () => {
  it('one POST, one webhook in the service, the state records it, the next run writes nothing', async () => {
    r = await rig({ behaviours: ['503-after-success-all', 'list-lag'] });
    r.env.GOVOPS_SECRET_HOOK_SECRET = 'hook-lag-1';
    await r.write('w.yaml', webhookManifest('lag-hook'));
    const first = await r.run();
    expect(first.ok, first.error).toBe(true);
    const posts = () => r!.lines().filter((l) => l.startsWith('POST /webhooks'));
    expect(posts()).toEqual(['POST /webhooks 503']);
    // two lists: the second shows what the first (lagging) left out
    const live = [...(await r.api.listWebhooks()), ...(await r.api.listWebhooks())].filter((w) => w.name === 'lag-hook');
    const ids = [...new Set(live.map((w) => w.id))];
    expect(ids).toHaveLength(1);
    expect((await r.state()).resources.map((e) => [e.name, e.id, e.pending])).toEqual([['lag-hook', ids[0], undefined]]);
    r.sandbox.clearRequests();
    const second = await r.run();
    expect(second.ok, second.error).toBe(true);
    expect(r.lines().filter((l) => !l.startsWith('GET '))).toEqual([]);
  });

  it("another team's webhook of the same name and another url, left out of the plan's list, is never recorded as govops'", async () => {
    r = await rig({ behaviours: ['503-after-success-all', 'list-lag'] });
    r.env.GOVOPS_SECRET_HOOK_SECRET = 'hook-lag-2';
    // made by another team just before the plan (a plain POST, no lookup after its lost answer): the plan's list lags
    await fetch(`${r.sandbox.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.sandbox.userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ webhooks: [{ name: 'lag-hook', url: 'https://other-team.example/in', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' }] }),
    });
    await r.write('w.yaml', webhookManifest('lag-hook'));
    const first = await r.run();
    expect(first.ok, first.error).toBe(true);
    const state = await r.state();
    const otherId = (await r.api.listWebhooks()).find((w) => w.url === 'https://other-team.example/in')!.id;
    expect(state.resources.map((e) => e.id)).not.toContain(otherId);
    const live = [...(await r.api.listWebhooks()), ...(await r.api.listWebhooks())];
    const ours = [...new Set(live.filter((w) => w.url === 'https://hooks.example.com/lag-hook').map((w) => w.id))];
    expect(state.resources.map((e) => e.id)).toEqual(ours);
  });

  it('no retry left and the list still lags: looked for again and recorded; the next run (list caught up or not) creates nothing', async () => {
    r = await rig();
    r.env.GOVOPS_SECRET_HOOK_SECRET = 'hook-lag-3';
    const webhooks: Array<Record<string, unknown> & { lists: number }> = [];
    let posts = 0;
    server = await startServer((req, res, { socket }) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, []);
      if (req.method === 'GET' && req.url === '/webhooks') {
        for (const w of webhooks) w.lists++;
        // a webhook is listed from the 4th list after its create on
        return sendJson(res, 200, webhooks.filter((w) => w.lists > 3).map(({ lists: _l, ...w }) => w));
      }
      if (req.method === 'POST' && req.url === '/webhooks') {
        posts++;
        const items = (JSON.parse(req.body) as { webhooks: Array<Record<string, unknown>> }).webhooks;
        const made = items.map((w, i) => ({ id: String(webhooks.length + 1 + i), name: w.name, url: w.url, global: w.global, notificationType: w.notificationType, createdBy: 1, lists: 0 }));
        webhooks.push(...made);
        if (posts === 1) return void socket.destroy(); // stored, answer lost
        return sendJson(res, 200, { createdWebhooks: made.map(({ lists: _l, ...w }) => w), errors: [] });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retries: 0, logger: silentLogger(), retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 } });
    await r.write('a.yaml', webhookManifest('a'));
    const opts = engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, pollIntervalMs: 10 });
    const first = await reconcile(client, opts);
    expect(first.ok, first.error).toBe(true);
    expect((await r.state()).resources.map((e) => [e.id, e.pending])).toEqual([['1', undefined]]);
    const second = await reconcile(client, opts);
    expect(second.ok, second.error).toBe(true);
    expect(posts).toBe(1);
    expect(webhooks).toHaveLength(1);
  });
});
