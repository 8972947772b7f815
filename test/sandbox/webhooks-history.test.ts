/** GET /webhooks/history query parameters over real HTTP: paging, sorting, filters, visibility, count, 400s. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, ALICE, BOB, IDS, createHooks, fire, hook, startHarness, startReceiver, type Harness, type Receiver } from './webhooks-helpers.js';

let h: Harness;
let rx: Receiver;
const ids: Record<string, number> = {};

// Fixture: 25 deliveries to Alice's hook (modelAccessRequested, 200), 3 to Bob's failing hook
// (modelAccessDenied, 500), 28 to an admin global hook (ALL_NOTIFICATIONS), 3 to an admin personal hook.
beforeAll(async () => {
  [h, rx] = await Promise.all([startHarness(), startReceiver()]);
  const [alice] = await createHooks(h, ALICE, [hook(`${rx.url}/status/200`, { name: 'alice', notificationType: ['modelAccessRequested'] })]);
  const [bob] = await createHooks(h, BOB, [hook(`${rx.url}/status/500`, { name: 'bob', notificationType: ['modelAccessDenied'] })]);
  const [glob, adm] = await createHooks(h, ADMIN, [
    hook(`${rx.url}/status/202`, { name: 'global', global: true, notificationType: ['ALL_NOTIFICATIONS'] }),
    hook(`${rx.url}/status/404`, { name: 'admin', notificationType: ['modelAccessDenied'] }),
  ]);
  Object.assign(ids, { alice: alice.id, bob: bob.id, glob: glob.id, adm: adm.id });
  for (let i = 0; i < 25; i++) await fire(h, 'modelAccessRequested');
  for (let i = 0; i < 3; i++) await fire(h, 'modelAccessDenied');
});
afterAll(async () => {
  await h.close();
  await rx.close();
});

async function page(token: string, query: string): Promise<{ status: number; body: any }> {
  return h.call('GET', `/webhooks/history${query}`, token);
}
async function ok(token: string, query: string): Promise<any> {
  const res = await page(token, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('defaults', () => {
  it('pageSize 20, newest first, count of all matches, personal records only (includeGlobal false)', async () => {
    const body = await ok(ALICE, '');
    expect(body.count).toBe(25);
    expect(body.records).toHaveLength(20);
    const times = body.records.map((r: any) => Date.parse(r.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(body.records[0].id).toBeGreaterThan(body.records[19].id);
    expect(body.records.every((r: any) => r.webhooksId === ids.alice)).toBe(true);
  });
});

describe('visibility', () => {
  it('includeUser returns the records of the caller\'s own personal webhooks, for administrators too', async () => {
    expect((await ok(BOB, '')).count).toBe(3);
    expect((await ok(BOB, '')).records.every((r: any) => r.createdBy === IDS.bob)).toBe(true);
    const admin = await ok(ADMIN, '?pageSize=100');
    expect(admin.count).toBe(3);
    expect(new Set(admin.records.map((r: any) => r.webhooksId))).toEqual(new Set([ids.adm]));
  });

  it('includeGlobal=true adds records of global webhooks; includeUser=false drops personal ones', async () => {
    expect((await ok(ADMIN, '?includeGlobal=true')).count).toBe(3 + 28);
    const onlyGlobal = await ok(ADMIN, '?includeGlobal=true&includeUser=false&pageSize=100');
    expect(onlyGlobal.count).toBe(28);
    expect(onlyGlobal.records.every((r: any) => r.webhooksId === ids.glob)).toBe(true);
    expect((await ok(ADMIN, '?includeUser=false')).count).toBe(0);
    // A user never sees another user's global webhook records.
    expect((await ok(ALICE, '?includeGlobal=true')).count).toBe(25);
  });
});

describe('filters', () => {
  it('notificationType', async () => {
    const body = await ok(ADMIN, '?notificationType=modelAccessDenied&includeGlobal=true&pageSize=100');
    expect(body.count).toBe(3 + 3);
    expect(body.records.every((r: any) => r.notificationType === 'modelAccessDenied')).toBe(true);
    expect((await ok(ALICE, '?notificationType=modelAccessDenied')).count).toBe(0);
  });

  it('successOrFailure: 2xx is success, anything else failure', async () => {
    const success = await ok(ADMIN, '?successOrFailure=success&includeGlobal=true&pageSize=100');
    expect(success.count).toBe(28);
    expect(success.records.every((r: any) => r.statusCode >= 200 && r.statusCode < 300)).toBe(true);
    const failure = await ok(ADMIN, '?successOrFailure=failure&includeGlobal=true&pageSize=100');
    expect(failure.count).toBe(3);
    expect(failure.records.map((r: any) => r.statusCode).sort()).toEqual([404, 404, 404]);
    expect((await ok(BOB, '?successOrFailure=failure')).records.map((r: any) => r.statusCode)).toEqual([500, 500, 500]);
  });
});

describe('paging and sorting', () => {
  it('offset and pageSize page through a stable order', async () => {
    const all = await ok(ALICE, '?pageSize=25&sortField=id&sortOrder=asc');
    const first = await ok(ALICE, '?pageSize=10&offset=0&sortField=id&sortOrder=asc');
    const third = await ok(ALICE, '?pageSize=10&offset=20&sortField=id&sortOrder=asc');
    expect(first.count).toBe(25);
    expect(third.count).toBe(25);
    expect(first.records.map((r: any) => r.id)).toEqual(all.records.slice(0, 10).map((r: any) => r.id));
    expect(third.records.map((r: any) => r.id)).toEqual(all.records.slice(20).map((r: any) => r.id));
    expect((await ok(ALICE, '?offset=100')).records).toEqual([]);
  });

  it('sortField id / statusCode / notificationType with sortOrder asc and desc', async () => {
    const asc = (await ok(ADMIN, '?includeGlobal=true&sortField=id&sortOrder=asc&pageSize=100')).records.map((r: any) => r.id);
    expect(asc).toHaveLength(31);
    expect(asc).toEqual([...asc].sort((a, b) => a - b));
    const desc = (await ok(ADMIN, '?includeGlobal=true&sortField=id&pageSize=100')).records.map((r: any) => r.id);
    expect(desc).toEqual([...asc].reverse());
    const byStatus = (await ok(ADMIN, '?includeGlobal=true&sortField=statusCode&sortOrder=desc&pageSize=100')).records.map((r: any) => r.statusCode);
    expect(byStatus.slice(0, 3)).toEqual([404, 404, 404]);
    expect(byStatus.at(-1)).toBe(202);
    const byType = (await ok(ADMIN, '?includeGlobal=true&sortField=notificationType&sortOrder=asc&pageSize=100')).records.map((r: any) => r.notificationType);
    expect(byType[0]).toBe('modelAccessDenied');
    expect(byType.at(-1)).toBe('modelAccessRequested');
  });
});

describe('bad query values', () => {
  it.each([
    'pageSize=0',
    'pageSize=-1',
    'pageSize=abc',
    'offset=-3',
    'offset=1.5',
    'sortOrder=up',
    'sortField=secret',
    'includeGlobal=yes',
    'includeUser=1',
    'successOrFailure=maybe',
    'notificationType=noSuchEvent',
    'colour=red',
  ])('%s → 400 with an error body', async (q) => {
    const res = await page(ADMIN, `?${q}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: expect.any(String), message: expect.stringContaining(q.split('=')[0]!) });
  });
});
