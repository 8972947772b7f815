/**
 * A create is never blindly re-sent: through a gateway that loses the response of a create the sandbox
 * did process (connection reset after the upstream answered), apply looks the resource up and adopts
 * what it made. The sandbox's request log proves one real POST per resource.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { rig, lakeManifest, sqlManifest, webhookManifest, type Rig } from './inproc.js';

/** A forwarding proxy that, for the first `losses` matching requests, drops the client's connection once the upstream answered. */
async function lossyGateway(upstream: string, match: (method: string, url: string) => boolean, losses: number) {
  let left = losses;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const lose = left > 0 && match(req.method ?? '', req.url ?? '');
      if (lose) left--;
      const up = http.request(`${upstream}${req.url}`, { method: req.method, headers: req.headers }, (ur) => {
        const body: Buffer[] = [];
        ur.on('data', (c: Buffer) => body.push(c));
        ur.on('end', () => {
          if (lose) return void req.socket.destroy(); // processed upstream, answer lost
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
    lost: () => losses - left,
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}

let r: Rig;
beforeEach(async () => {
  r = await rig();
  Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-amb-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-amb-2', GOVOPS_SECRET_LAKE_TOKEN: 'tok-amb-3', GOVOPS_SECRET_HOOK_SECRET: 'hook-amb-4' });
});
afterEach(async () => {
  await r.close();
});

describe('ambiguous creates during apply (sandbox behind a lossy gateway)', () => {
  it('integrations and webhooks whose create response was lost are found, not created twice', async () => {
    const gw = await lossyGateway(r.sandbox.url, (m, u) => m === 'POST' && (u === '/integrations' || u === '/webhooks'), 3);
    const api = new ServiceClient({ baseUrl: gw.url, token: r.sandbox.adminToken, retries: 3, retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 } });
    try {
      await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
      await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
      await r.write('w.yaml', webhookManifest('hook'));
      const res = await reconcile(api, engineOptions({
        root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(),
        statePath: r.statePath, env: r.env, timeoutMs: 20_000, pollIntervalMs: 20, pollMaxIntervalMs: 200,
      }));
      expect(res.ok, res.error).toBe(true);
      expect(gw.lost()).toBe(3);
      const lines = r.lines();
      expect(lines.filter((l) => l.startsWith('POST /integrations 2'))).toHaveLength(2); // one real create each
      expect(lines.filter((l) => l.startsWith('POST /webhooks 2'))).toHaveLength(1);
      const live = await r.api.listIntegrations();
      expect(live.map((l) => l.status).sort()).toEqual(['enabled', 'enabled']);
      expect(await r.api.listWebhooks()).toHaveLength(1);
      const st = await r.state();
      expect(st.resources.map((x) => x.id).sort()).toEqual([...live.map((l) => l.id), (await r.api.listWebhooks())[0]!.id].sort());
      const again = await reconcile(api, engineOptions({
        root: r.dir, paths: ['m'], apply: false, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env,
      }));
      expect(again.changed).toBe(false);
    } finally {
      await api.close();
      await gw.close();
    }
  });

  it('a webhook with spec.name whose create answer was lost is found by its name in the service, not created twice', async () => {
    const gw = await lossyGateway(r.sandbox.url, (m, u) => m === 'POST' && u === '/webhooks', 1);
    const api = new ServiceClient({ baseUrl: gw.url, token: r.sandbox.adminToken, retries: 3, retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 } });
    try {
      await r.write('w.yaml', webhookManifest('slack-alerts').replace('spec:\n', 'spec:\n  name: Slack Alerts\n'));
      const res = await reconcile(api, engineOptions({
        root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(),
        statePath: r.statePath, env: r.env, timeoutMs: 20_000, pollIntervalMs: 20, pollMaxIntervalMs: 200,
      }));
      expect(res.ok, res.error).toBe(true);
      expect(gw.lost()).toBe(1);
      expect(r.lines().filter((l) => l.startsWith('POST /webhooks 2'))).toHaveLength(1);
      const live = await r.api.listWebhooks();
      expect(live.map((w) => w.name)).toEqual(['Slack Alerts']);
      const st = await r.state();
      expect(st.resources.map((x) => [x.kind, x.name, x.id])).toEqual([['Webhook', 'slack-alerts', live[0]!.id]]);
      const again = await reconcile(api, engineOptions({
        root: r.dir, paths: ['m'], apply: false, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env,
      }));
      expect(again.changed).toBe(false);
    } finally {
      await api.close();
      await gw.close();
    }
  });
});
