/**
 * Interface 6.1 / 8: the receiver must answer within 10 seconds by default; otherwise the delivery is recorded
 * with statusCode 500 and response body code ESOCKETTIMEDOUT. The deadline's timers are a clock the test moves
 * by hand, so the default is checked at the millisecond without waiting for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ManualClock } from '../helpers/clock.js';
import { startReceiver, type Receiver } from './webhooks-helpers.js';

let sb: SandboxHandle;
let rx: Receiver;
const clock = new ManualClock();

beforeAll(async () => {
  rx = await startReceiver();
  sb = await startSandbox({ port: 0, deliveryTimers: clock });
});
afterAll(async () => {
  await sb.close();
  await rx.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(sb.url + path, {
    method,
    headers: { authorization: `Bearer ${sb.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('delivery deadline (interface 6.1)', () => {
  it('is 10 seconds by default: no record at 9,999 ms, a 500 ESOCKETTIMEDOUT record at 10,000 ms', async () => {
    const made = await call('POST', '/webhooks', {
      webhooks: [{ url: `${rx.url}/slow`, name: 'slow', global: true, notificationType: ['modelCreated'], actionType: 'triggered' }],
    });
    expect(made.body.errors).toEqual([]);
    expect((await call('POST', '/_sandbox/events', { notificationType: 'modelCreated' })).status).toBe(200);
    // The receiver holds the request: the deadline is running.
    await expect.poll(() => rx.received.length).toBe(1);
    expect(clock.dueIn()).toEqual([10_000]);
    clock.advance(9_999);
    expect((await call('GET', '/webhooks/history?includeGlobal=true')).body.count).toBe(0);
    clock.advance(1);
    await call('GET', '/_sandbox/webhooks/idle');
    const { body } = await call('GET', '/webhooks/history?includeGlobal=true');
    expect(body.count).toBe(1);
    expect(body.records[0]).toMatchObject({ statusCode: 500, response: { body: { code: 'ESOCKETTIMEDOUT', connect: false } } });
  });
});
