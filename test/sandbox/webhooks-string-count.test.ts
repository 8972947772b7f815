/**
 * Interface 4.3: the history's `count` is an "integer as number or string". The sandbox sent a number whatever the
 * behaviours, so a client's reading of the string form was never met over HTTP. Under `string-ids` (the service that
 * sends as strings the integers the interface shows) the count is a string, and so are the integer ids of the
 * records (id, webhooksId, webhooksActivityId, createdBy, request.webhookId), in the history and the retry answer;
 * govops' client reads them back to the same numbers and ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { ADMIN, IDS, createHooks, fire, hook, startHarness, startReceiver, type Harness, type Receiver } from './webhooks-helpers.js';

let h: Harness;
let rx: Receiver;

beforeAll(async () => {
  [h, rx] = await Promise.all([startHarness({ behaviours: ['string-ids'] }), startReceiver()]);
  await createHooks(h, ADMIN, [hook(`${rx.url}/status/200`, { name: 'a', notificationType: ['modelAccessRequested'] })]);
  for (let i = 0; i < 3; i++) await fire(h, 'modelAccessRequested');
});
afterAll(async () => {
  await h.close();
  await rx.close();
});

describe('string-ids: the webhook history in the string form', () => {
  it('count is a string, record ids are strings', async () => {
    const res = await h.call('GET', '/webhooks/history', ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe('3');
    const r = res.body.records[0];
    expect(r).toMatchObject({ id: expect.any(String), webhooksId: '1', webhooksActivityId: expect.any(String), createdBy: String(IDS.admin) });
    expect(r.request.webhookId).toBe('1');
    expect(Number(r.id)).toBeGreaterThan(0);
  });

  it('the retry answers the new record in the same form', async () => {
    const first = (await h.call('GET', '/webhooks/history?sortOrder=asc', ADMIN)).body.records[0];
    const retried = await h.call('POST', `/webhooks/history/retry/${first.id}`, ADMIN);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: expect.any(String), webhooksId: '1', webhooksActivityId: first.webhooksActivityId });
    expect(retried.body.id).not.toBe(first.id);
  });

  it("govops' client reads the string forms: count 4 (3 deliveries and the retry), ids as the service gave them", async () => {
    const c = new ServiceClient({ baseUrl: h.url, token: ADMIN, retries: 0 });
    try {
      const page = await c.listWebhookHistory({ pageSize: 2 });
      expect(page.count).toBe(4);
      expect(page.records).toHaveLength(2);
      expect(page.records[0]).toMatchObject({ webhookId: '1', statusCode: 200 });
      expect(page.records[0]!.id).toMatch(/^\d+$/);
    } finally {
      await c.close();
    }
  });
});
