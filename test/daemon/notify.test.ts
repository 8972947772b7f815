/** The notifier (--notify-url): which reconciles give an event, and which repeats are not sent again. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Attempt } from '../../src/daemon/loop.js';
import { Notifier } from '../../src/daemon/notify.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function receiver(): Promise<{ url: string; got: Array<{ type: string; subject: string }> }> {
  const got: Array<{ type: string; subject: string }> = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      got.push(JSON.parse(text) as { type: string; subject: string });
      res.statusCode = 202;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, got };
}

const at = new Date(0).toISOString();
const attempt = (verdict: Attempt['verdict'], extra: Partial<Attempt> = {}): Attempt => ({
  revision: 'rev1',
  reason: 'resync',
  apply: true,
  verdict,
  startedAt: at,
  finishedAt: at,
  durationSec: 0.1,
  ...extra,
});
const unreachable = (): Attempt =>
  attempt('unreachable', { failure: { code: 'GOVOPS_SERVICE_UNREACHABLE', failureClass: 'transient' } as Attempt['failure'] & object, error: 'connect ECONNREFUSED' });

describe('Notifier', () => {
  it('does not repeat a failure at every retry, but tells a new outage after a reconcile that succeeded', async () => {
    const recv = await receiver();
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), observe: false });
    n.notify(unreachable());
    n.notify(unreachable()); // the same failure at the retry: not news
    await n.idle();
    expect(recv.got.map((e) => e.type)).toEqual(['io.govops.reconcile.failed']);
    n.notify(attempt('in-sync')); // the service is back: nothing to tell, but the outage is over
    n.notify(unreachable()); // a new outage at a later resync
    await n.idle();
    expect(recv.got.map((e) => e.type)).toEqual(['io.govops.reconcile.failed', 'io.govops.reconcile.failed']);
  });
});
