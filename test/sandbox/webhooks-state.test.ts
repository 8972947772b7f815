/** Webhook state across restarts (--data FILE), reset and close: over real HTTP. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, ALICE, createHooks, fire, hook, sha1, startHarness, startReceiver, type Harness, type Receiver } from './webhooks-helpers.js';

let rx: Receiver;
let dir: string;
const open: Harness[] = [];
beforeAll(async () => {
  rx = await startReceiver();
  dir = mkdtempSync(join(tmpdir(), 'govops-wh-state-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
  rx.received.length = 0;
});
afterAll(async () => {
  await rx.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(opts: { deliveryTimeoutMs?: number; dataFile?: string } = {}): Promise<Harness> {
  const h = await startHarness(opts);
  open.push(h);
  return h;
}

describe('persistence', () => {
  it('webhooks (with their secret), history and id counters survive a restart', async () => {
    const dataFile = join(dir, 'state.json');
    const first = await start({ dataFile });
    const [w] = await createHooks(first, ALICE, [hook(`${rx.url}/p`, { name: 'kept', secret: 'persisted-secret' })]);
    const ev = await fire(first, 'modelAccessRequested');
    const [rec] = (await first.call('GET', '/webhooks/history', ALICE)).body.records;
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await start({ dataFile });
    expect((await second.call('GET', '/webhooks', ALICE)).body).toEqual([expect.objectContaining({ id: w.id, name: 'kept' })]);
    const hist = (await second.call('GET', '/webhooks/history', ALICE)).body;
    expect(hist.count).toBe(1);
    expect(hist.records[0]).toEqual(rec);
    // The secret came back too: a retry is signed with it.
    const retried = await second.call('POST', `/webhooks/history/retry/${rec.id}`, ALICE);
    expect(retried.status).toBe(200);
    expect(retried.body.id).toBe(rec.id + 1);
    const last = rx.received.at(-1)!;
    expect(last.headers['x-webhook-signature']).toBe(sha1('persisted-secret', last.raw));
    // Counters continue.
    const [w2] = await createHooks(second, ALICE, [hook(`${rx.url}/p2`)]);
    expect(w2.id).toBe(w.id + 1);
    expect((await fire(second, 'modelAccessRequested')).webhooksActivityId).toBeGreaterThan(ev.webhooksActivityId);
  });

  it('creating a webhook and recording a delivery are saved without waiting for close', async () => {
    const dataFile = join(dir, 'live.json');
    const h = await start({ dataFile });
    const saved = (): any => {
      try {
        return JSON.parse(readFileSync(dataFile, 'utf8')).webhooks;
      } catch {
        return undefined;
      }
    };
    await createHooks(h, ALICE, [hook(`${rx.url}/live`, { name: 'live-hook' })]);
    await expect.poll(() => saved()?.webhooks?.map((w: any) => w.name)).toEqual(['live-hook']);
    await fire(h, 'modelAccessRequested');
    await expect.poll(() => saved()?.history?.length).toBe(1);
  });
});

describe('reset and close', () => {
  it('POST /_sandbox/reset forgets webhooks and history and drops in-flight deliveries', async () => {
    const h = await start({ deliveryTimeoutMs: 400 });
    await createHooks(h, ADMIN, [hook(`${rx.url}/slow`, { name: 'slow' }), hook(`${rx.url}/fast`, { name: 'fast' })]);
    await fire(h, 'modelAccessRequested');
    expect((await h.call('GET', '/webhooks/history', ADMIN)).body.count).toBe(2);
    const fired = await h.control('POST', '/_sandbox/events', { notificationType: 'modelAccessRequested' });
    expect(fired.body.deliveries).toBe(2);
    expect((await h.control('POST', '/_sandbox/reset')).status).toBeLessThan(300);
    await h.control('GET', '/_sandbox/webhooks/idle');
    expect((await h.call('GET', '/webhooks', ADMIN)).body).toEqual([]);
    expect((await h.call('GET', '/webhooks/history', ADMIN)).body).toEqual({ count: 0, records: [] });
    const [fresh] = await createHooks(h, ADMIN, [hook(`${rx.url}/again`)]);
    expect(fresh.id).toBe(1);
  });

  it('close() aborts a delivery that would hang for a minute, and records nothing of it', async () => {
    const dataFile = join(dir, 'close.json');
    const h = await start({ deliveryTimeoutMs: 60_000, dataFile });
    await createHooks(h, ADMIN, [hook(`${rx.url}/slow`)]);
    const fired = await h.control('POST', '/_sandbox/events', { notificationType: 'modelAccessRequested' });
    expect(fired.body.deliveries).toBe(1);
    await expect.poll(() => rx.received.length).toBe(1);
    await h.close(); // would exceed the test timeout if the delivery were not aborted
    open.splice(open.indexOf(h), 1);
    const saved = JSON.parse(readFileSync(dataFile, 'utf8'));
    expect(saved.webhooks.webhooks).toHaveLength(1);
    expect(saved.webhooks.history).toEqual([]);
  });
});
