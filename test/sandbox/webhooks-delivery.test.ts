/** Webhook deliveries over real HTTP: who receives an event, signatures, timeouts, history records, retry. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN,
  ALICE,
  BOB,
  IDS,
  createHooks,
  fire,
  hook,
  sha1,
  startHarness,
  startReceiver,
  type Harness,
  type Receiver,
} from './webhooks-helpers.js';
import { createHmac } from 'node:crypto';

// Long enough that a receiver answering at once is never timed out on a busy machine (/hold/100 x 80 under load took > 250 ms).
const TIMEOUT_MS = 2_000;
let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  [h, rx] = await Promise.all([startHarness({ deliveryTimeoutMs: TIMEOUT_MS }), startReceiver()]);
});
afterAll(async () => {
  await h.close();
  await rx.close();
});
beforeEach(async () => {
  expect((await h.control('POST', '/_sandbox/reset')).status).toBeLessThan(300);
  rx.received.length = 0;
});

async function history(token: string, query = ''): Promise<any> {
  const res = await h.call('GET', `/webhooks/history${query}`, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('who receives an event', () => {
  it('webhooks subscribed to the event or to ALL_NOTIFICATIONS; global ones only for their notificationType too', async () => {
    await createHooks(h, ADMIN, [
      hook(`${rx.url}/subscribed`, { name: 'subscribed', notificationType: ['tagCreated', 'modelCreated'] }),
      hook(`${rx.url}/all`, { name: 'all', notificationType: ['ALL_NOTIFICATIONS'] }),
      hook(`${rx.url}/global`, { name: 'global', global: true, notificationType: ['userCreated'] }),
      hook(`${rx.url}/global-tag`, { name: 'global-tag', global: true, notificationType: ['tagCreated'] }),
      hook(`${rx.url}/other`, { name: 'other', notificationType: ['tagDeleted'] }),
    ]);
    const res = await fire(h, 'tagCreated');
    expect(res).toEqual({ webhooksActivityId: expect.any(Number), deliveries: 3 });
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/all', '/global-tag', '/subscribed']);
  });

  it('a non-global webhook receives only events that pertain to its owner; a global one receives them all', async () => {
    await createHooks(h, ALICE, [hook(`${rx.url}/alice`, { name: 'alice' })]);
    await createHooks(h, BOB, [hook(`${rx.url}/bob`, { name: 'bob' })]);
    await createHooks(h, ADMIN, [hook(`${rx.url}/global`, { name: 'global', global: true })]);
    // Alice asks for access: it pertains to Alice only (actionBy and targetUser are her).
    await fire(h, 'modelAccessRequested', { actorUserId: IDS.alice });
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/alice', '/global']);
    rx.received.length = 0;
    // The admin approves Bob's request: it pertains to Bob (target) and the admin (actor), not to Alice.
    await fire(h, 'modelAccessRequested', { actorUserId: IDS.admin, metadata: { targetUser: IDS.bob } });
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/bob', '/global']);
    rx.received.length = 0;
    // An event naming no user pertains to every owner.
    await fire(h, 'modelAccessRequested');
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/alice', '/bob', '/global']);
  });

  it('deliveries of one event run concurrently, more than the concurrency limit all arrive', async () => {
    rx.maxInFlight = 0;
    const items = Array.from({ length: 80 }, (_, i) => hook(`${rx.url}/hold/100`, { name: `c${i}` }));
    await createHooks(h, ADMIN, items);
    const res = await fire(h, 'modelAccessRequested');
    expect(res.deliveries).toBe(80);
    expect(rx.received).toHaveLength(80);
    expect(rx.maxInFlight).toBeGreaterThan(1);
    expect(rx.maxInFlight).toBeLessThanOrEqual(64);
    const { count, records } = await history(ADMIN, '?successOrFailure=success');
    expect(count).toBe(80);
    expect(new Set(records.map((r: any) => r.id)).size).toBe(20);
  });

  it('the control endpoint rejects unknown events and bad bodies with 400', async () => {
    for (const body of [{ notificationType: 'noSuchEvent' }, { notificationType: 'ALL_NOTIFICATIONS' }, {}, { notificationType: 'tagCreated', metadata: 'x' }]) {
      const res = await h.control('POST', '/_sandbox/events', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.statusCode).toBe(400);
    }
  });

  it('each event gets a new webhooksActivityId shared by its deliveries', async () => {
    await createHooks(h, ADMIN, [hook(`${rx.url}/one`, { name: 'one' }), hook(`${rx.url}/two`, { name: 'two' })]);
    const first = await fire(h, 'modelAccessRequested');
    const second = await fire(h, 'modelAccessRequested');
    expect(second.webhooksActivityId).toBeGreaterThan(first.webhooksActivityId);
    const { records } = await history(ADMIN);
    expect(records).toHaveLength(4);
    expect(records.filter((r: any) => r.webhooksActivityId === first.webhooksActivityId)).toHaveLength(2);
    expect(records.filter((r: any) => r.webhooksActivityId === second.webhooksActivityId)).toHaveLength(2);
  });
});

describe('the delivered request', () => {
  it('is JSON { text, metadata, webhookId, webhookName } signed with HMAC-SHA1 (and SHA-256) of the raw body', async () => {
    const secret = 'shared-secret-xyz';
    const [w] = await createHooks(h, ADMIN, [hook(`${rx.url}/signed`, { name: 'signed', secret, global: true })]);
    await fire(h, 'modelAccessRequested', {
      actorUserId: IDS.alice,
      metadata: { modelId: 42, modelType: 'project', projectName: 'Fraud', targetUser: IDS.bob, targetUserName: 'Bob' },
    });
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-webhook-signature']).toBe(sha1(secret, got.raw));
    expect(got.headers['x-webhook-signature']).not.toBe(sha1('wrong-secret', got.raw));
    expect(got.headers['x-webhook-signature-256']).toBe(`sha256=${createHmac('sha256', secret).update(got.raw).digest('hex')}`);
    expect(got.raw).not.toContain(secret);
    expect(got.json).toEqual({
      text: expect.stringContaining('modelAccessRequested'),
      webhookId: w.id,
      webhookName: 'signed',
      metadata: {
        modelId: 42,
        actionBy: IDS.alice,
        modelType: 'project',
        targetUser: IDS.bob,
        projectName: 'Fraud',
        targetGroup: null,
        actionByName: 'Alice',
        targetUserName: 'Bob',
        notifyInitiator: false,
        notificationType: 'modelAccessRequested',
      },
    });
    // The history record's request is exactly what was sent.
    const { records } = await history(ADMIN, '?includeGlobal=true');
    expect(records[0].request).toEqual(got.json);
    expect(JSON.stringify(records)).not.toContain(secret);
  });

  it('carries no signature header without a secret', async () => {
    await createHooks(h, ADMIN, [hook(`${rx.url}/plain`)]);
    await fire(h, 'modelAccessRequested');
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.headers['x-webhook-signature']).toBeUndefined();
    expect(rx.received[0]!.headers['x-webhook-signature-256']).toBeUndefined();
  });
});

describe('outcomes recorded in the history', () => {
  it('success: statusCode of the receiver; non-2xx: its status; response is empty (2.13: no receiver body)', async () => {
    await createHooks(h, ADMIN, [hook(`${rx.url}/status/200`, { name: 'ok' }), hook(`${rx.url}/status/503`, { name: 'down' })]);
    await fire(h, 'modelAccessRequested');
    const { records, count } = await history(ADMIN, '?sortField=name&sortOrder=asc');
    expect(count).toBe(2);
    expect(records.map((r: any) => [r.name, r.statusCode])).toEqual([
      ['down', 503],
      ['ok', 200],
    ]);
    expect(records[0].response).toEqual({});
    expect(records[1].response).toEqual({});
  });

  it(`a receiver slower than the delivery timeout gives 500 with ESOCKETTIMEDOUT, and API calls are not blocked`, async () => {
    const [w] = await createHooks(h, ADMIN, [hook(`${rx.url}/slow`, { name: 'slow' })]);
    const fired = await h.control('POST', '/_sandbox/events', { notificationType: 'modelAccessRequested' });
    expect(fired.body.deliveries).toBe(1);
    // While the delivery hangs, the API answers and no record exists yet.
    const during = await history(ADMIN);
    expect(during.count).toBe(0);
    expect((await h.control('GET', '/_sandbox/webhooks/idle')).status).toBe(200);
    const { records } = await history(ADMIN);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      statusCode: 500,
      response: { body: { code: 'ESOCKETTIMEDOUT', connect: false } },
      webhooksId: w.id,
      notificationType: 'modelAccessRequested',
    });
    const took = Date.parse(records[0].updatedAt) - Date.parse(records[0].createdAt);
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  it('a refused connection gives 500 with ECONNREFUSED', async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    await createHooks(h, ADMIN, [hook(`${url}/gone`, { name: 'gone' })]);
    await fire(h, 'modelAccessRequested');
    const { records } = await history(ADMIN);
    expect(records[0]).toMatchObject({ statusCode: 500, response: { body: { code: 'ECONNREFUSED', connect: false } } });
  });

  it('history records hold every 2.13 field and repeat the webhook fields', async () => {
    const [w] = await createHooks(h, ALICE, [hook(`${rx.url}/x`, { name: 'alice-hook', actionType: 'receive', notificationType: ['modelAccessApproved'] })]);
    const ev = await fire(h, 'modelAccessApproved');
    const { records } = await history(ALICE);
    expect(Object.keys(records[0]).sort()).toEqual(
      [
        'actionType',
        'createdAt',
        'createdBy',
        'id',
        'name',
        'notificationType',
        'request',
        'response',
        'statusCode',
        'updatedAt',
        'url',
        'webhooksActivityId',
        'webhooksId',
      ].sort(),
    );
    expect(records[0]).toMatchObject({
      webhooksId: w.id,
      url: `${rx.url}/x`,
      name: 'alice-hook',
      actionType: 'receive',
      createdBy: IDS.alice,
      notificationType: 'modelAccessApproved',
      webhooksActivityId: ev.webhooksActivityId,
      request: { webhookId: w.id, webhookName: 'alice-hook' },
    });
    expect(Number.isInteger(records[0].id)).toBe(true);
  });
});

describe('POST /webhooks/history/retry/{id}', () => {
  it('re-delivers the same request with the current secret and returns a NEW record', async () => {
    const [w] = await createHooks(h, ALICE, [hook(`${rx.url}/status/500`, { name: 'flaky', secret: 's1', notificationType: ['modelAccessDenied'] })]);
    await fire(h, 'modelAccessDenied');
    const [orig] = (await history(ALICE)).records;
    expect(orig.statusCode).toBe(500);

    const res = await h.call('POST', `/webhooks/history/retry/${orig.id}`, ALICE);
    expect(res.status).toBe(200);
    expect(res.body.id).not.toBe(orig.id);
    expect(res.body).toMatchObject({
      statusCode: 500,
      webhooksId: w.id,
      notificationType: 'modelAccessDenied',
      webhooksActivityId: orig.webhooksActivityId,
      request: orig.request,
    });
    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.raw).toBe(rx.received[0]!.raw);
    expect(rx.received[1]!.headers['x-webhook-signature']).toBe(sha1('s1', rx.received[1]!.raw));
    const after = await history(ALICE);
    expect(after.count).toBe(2);
    expect(after.records.map((r: any) => r.id)).toEqual([res.body.id, orig.id]);
  });

  it('any record may be retried, also a successful one', async () => {
    await createHooks(h, ADMIN, [hook(`${rx.url}/ok`)]);
    await fire(h, 'modelAccessRequested');
    const [orig] = (await history(ADMIN)).records;
    expect(orig.statusCode).toBe(200);
    const res = await h.call('POST', `/webhooks/history/retry/${orig.id}`, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.statusCode).toBe(200);
    expect((await history(ADMIN)).count).toBe(2);
  });

  it('404 for an unknown record, a record of another user, or a deleted webhook', async () => {
    const [al] = await createHooks(h, ALICE, [hook(`${rx.url}/al`)]);
    await fire(h, 'modelAccessRequested');
    const [rec] = (await history(ALICE)).records;
    expect((await h.call('POST', '/webhooks/history/retry/9999', ADMIN)).status).toBe(404);
    expect((await h.call('POST', `/webhooks/history/retry/${rec.id}`, BOB)).status).toBe(404);
    await h.call('DELETE', `/webhooks/${al.id}`, ALICE);
    const gone = await h.call('POST', `/webhooks/history/retry/${rec.id}`, ALICE);
    expect(gone.status).toBe(404);
    expect(gone.body.message).toContain('deleted');
    expect(rx.received).toHaveLength(1);
    // The history of a deleted webhook stays readable.
    expect((await history(ALICE)).count).toBe(1);
  });
});
