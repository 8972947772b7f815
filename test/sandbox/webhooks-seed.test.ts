/** POST /_sandbox/webhooks/history: synthetic delivery records (large histories for benches and paging tests). */
import { afterEach, describe, expect, it } from 'vitest';
import { hookItem, startWorld, type World } from '../deliveries/world.js';

let w: World;
afterEach(async () => {
  await w?.close();
});

describe('sandbox: seeding the delivery history', () => {
  it('adds records as if delivered (nothing is sent), oldest first, listed by GET /webhooks/history', async () => {
    w = await startWorld();
    const [h] = await w.createHooks([hookItem(w, 'seeded', '/seeded', { global: true })]);
    const res = await w.seed({ webhookId: h.id, count: 3, from: '2026-01-01T00:00:00Z', stepMs: 60_000, statusCode: 500, code: 'ESOCKETTIMEDOUT', notificationType: 'userCreated' });
    expect(res).toEqual({ added: 3, firstId: 1, lastId: 3, firstCreatedAt: '2026-01-01T00:00:00.000Z', lastCreatedAt: '2026-01-01T00:02:00.000Z' });
    expect(w.rx.hits.size).toBe(0);
    const page = await w.call('GET', '/webhooks/history?includeGlobal=true');
    expect(page.count).toBe(3);
    expect(page.records.map((r: any) => [r.id, r.createdAt])).toEqual([
      [3, '2026-01-01T00:02:00.000Z'],
      [2, '2026-01-01T00:01:00.000Z'],
      [1, '2026-01-01T00:00:00.000Z'],
    ]);
    expect(page.records[0]).toMatchObject({
      statusCode: 500,
      notificationType: 'userCreated',
      response: { body: { code: 'ESOCKETTIMEDOUT', connect: false } },
      webhooksId: h.id,
      name: 'seeded',
      request: { webhookId: h.id, webhookName: 'seeded', metadata: { notificationType: 'userCreated' } },
    });
    expect(new Set(page.records.map((r: any) => r.webhooksActivityId)).size).toBe(3);
    // defaults: one successful record of the webhook's first event, now
    const one = await w.seed({ webhookId: h.id });
    expect(one.added).toBe(1);
    const newest = (await w.call('GET', '/webhooks/history?includeGlobal=true&pageSize=1')).records[0];
    expect(newest).toMatchObject({ id: 4, statusCode: 200, notificationType: 'modelAccessRequested', response: {} });
    // a seeded record can be retried like any other
    const retried = await w.call('POST', '/webhooks/history/retry/1');
    expect(retried).toMatchObject({ id: 5, statusCode: 200, webhooksActivityId: page.records[2].webhooksActivityId });
    expect(w.rx.hits.get('/seeded')).toBe(1);
  });

  it('refuses what it cannot seed', async () => {
    w = await startWorld();
    const [h] = await w.createHooks([hookItem(w, 'x', '/x')]);
    await expect(w.seed({ webhookId: 99 })).rejects.toThrow(/404/);
    await expect(w.seed({ webhookId: h.id, count: 0 })).rejects.toThrow(/400.*count/);
    await expect(w.seed({ webhookId: h.id, notificationType: 'nope' })).rejects.toThrow(/400/);
    await expect(w.seed({ webhookId: h.id, from: 'yesterday' })).rejects.toThrow(/400.*from/);
    await expect(w.seed({ webhookId: h.id, extra: 1 })).rejects.toThrow(/400.*unknown fields: extra/);
  });
});
