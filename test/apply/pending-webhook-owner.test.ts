/**
 * A pending webhook create (its answer lost, the lookup failed: outcome unknown) is resolved by the next run by the
 * webhook's name and url. Another's webhook with that very name and url (another team's, made by another user) that
 * was live when the intent was recorded is never the one govops' create made: taken for it, govops recorded someone
 * else's webhook as its own and the next change replaced it (deleted it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { rig, webhookManifest, type Rig } from './inproc.js';

/** Forwards to the sandbox; once a POST /webhooks went through, its answer is lost and every later request is a 503. */
async function failingAfterCreate(upstream: string) {
  let down = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (down) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message: 'down' }));
        return;
      }
      const create = req.method === 'POST' && req.url === '/webhooks';
      const up = http.request(`${upstream}${req.url}`, { method: req.method, headers: req.headers }, (ur) => {
        const body: Buffer[] = [];
        ur.on('data', (c: Buffer) => body.push(c));
        ur.on('end', () => {
          if (create) {
            down = true;
            return void req.socket.destroy(); // processed upstream, answer lost
          }
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          res.end(Buffer.concat(body));
        });
      });
      up.on('error', () => req.socket.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}

let r: Rig;
beforeEach(async () => {
  r = await rig();
});
afterEach(async () => {
  await r.close();
});

describe('a pending webhook create resolved by name and url', () => {
  it("never takes another's webhook of that name and url, live before the intent, for govops' own", async () => {
    await r.write('w.yaml', webhookManifest('hook', ['modelAccessRequested'], false));
    expect((await r.run()).ok).toBe(true);
    const ours = (await r.state()).resources.find((x) => x.name === 'hook')!.id;
    // another team's webhook: same name, same url, made by another user
    const theirs = await r.api.listWebhooks().then(async () => {
      const res = await fetch(`${r.sandbox.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${r.sandbox.userToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ webhooks: [{ url: 'https://hooks.example.com/hook', name: 'hook', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' }] }),
      });
      return String(((await res.json()) as { createdWebhooks: Array<{ id: number }> }).createdWebhooks[0]!.id);
    });

    // a change replaces govops' webhook; the create's answer is lost and the service is down for the lookup
    await r.write('w.yaml', webhookManifest('hook', ['modelAccessRequested', 'modelAccessDenied'], false));
    const gw = await failingAfterCreate(r.sandbox.url);
    const api = new ServiceClient({ baseUrl: gw.url, token: r.sandbox.adminToken, retries: 1, retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 }, logger: silentLogger() });
    try {
      const res = await reconcile(api, engineOptions({
        root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(),
        statePath: r.statePath, env: r.env, timeoutMs: 20_000, pollIntervalMs: 20, pollMaxIntervalMs: 200,
      }));
      expect(res.ok).toBe(false);
    } finally {
      await api.close();
      await gw.close();
    }
    const pending = (await r.state()).resources.find((x) => x.name === 'hook')!;
    expect(pending.pending).toBe('create');
    const live = await r.api.listWebhooks();
    const made = live.find((w) => w.name === 'hook' && w.id !== theirs)!;
    expect(made.id).not.toBe(ours); // the old one was deleted by the replace
    expect(made.notificationType.sort()).toEqual(['modelAccessDenied', 'modelAccessRequested']);

    // the next run resolves the intent to the webhook its create made, and leaves the other team's alone
    const next = await r.run();
    expect(next.ok, next.error).toBe(true);
    expect((await r.state()).resources.find((x) => x.name === 'hook')).toMatchObject({ id: made.id });
    expect((await r.api.listWebhooks()).map((w) => w.id)).toContain(theirs);
    expect(r.lines()).not.toContain(`DELETE /webhooks/${theirs} 200`);
  });
});
