/** Webhook endpoints of interface 4.3 over real HTTP: create, list, get, delete, actions, auth, visibility. */
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../src/service/events.js';
import { ADMIN, ALICE, BOB, IDS, createHooks, hook, harnessPerFile } from './webhooks-helpers.js';

const h = harnessPerFile();

const SUMMARY_KEYS = ['actionType', 'createdAt', 'createdBy', 'global', 'id', 'name', 'updatedAt', 'url'];
const VIEW_KEYS = ['createdBy', 'global', 'id', 'name', 'notificationType', 'url'];

describe('authentication', () => {
  it('401 without a token, with an unknown token, and with a raw (non-Bearer) token', async () => {
    for (const headers of [undefined, 'nobody']) {
      const res = await h.call('GET', '/webhooks', headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: expect.any(String), message: expect.any(String) });
    }
    const raw = await fetch(`${h.url}/webhooks`, { headers: { authorization: ADMIN } });
    expect(raw.status).toBe(401);
  });
});

describe('POST /webhooks', () => {
  it('creates valid items, reports invalid ones per item (the rules of interface 4.3 only), and never returns the secret', async () => {
    const res = await h.call('POST', '/webhooks', ADMIN, {
      webhooks: [
        hook('http://127.0.0.1:1/a', { name: 'a', secret: 'top-secret-1' }),
        { url: 'ftp://127.0.0.1/x', name: 'bad-url', global: false, notificationType: ['modelCreated'], actionType: 'triggered' },
        hook('https://127.0.0.1:1/b', { name: 'b', global: true, notificationType: ['ALL_NOTIFICATIONS'], actionType: 'receive' }),
        { name: 'no-url', global: false, notificationType: ['modelCreated'], actionType: 'triggered' },
        hook('http://127.0.0.1:1/c', { name: 'bad-event', notificationType: ['noSuchEvent'] }),
        hook('http://127.0.0.1:1/d', { name: 'bad-action', actionType: 'sometimes' }),
        hook('http://127.0.0.1:1/e', { name: 'bad-global', global: 'yes' }),
        hook('http://127.0.0.1:1/f', { name: 'empty-types', notificationType: [] }),
        hook('http://127.0.0.1:1/g', { name: 'extra', colour: 'red' }),
        'not an object',
      ],
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain('top-secret-1');
    // The interface states no rule on the url's scheme, the list's length or extra fields: accepted
    // (a delivery to ftp:// fails later, EINVALIDURL; extra fields are ignored).
    expect(res.body.createdWebhooks.map((w: any) => w.name)).toEqual(['a', 'bad-url', 'b', 'empty-types', 'extra']);
    const [a, , b] = res.body.createdWebhooks;
    expect(Object.keys(a).sort()).toEqual(SUMMARY_KEYS);
    expect(a).toMatchObject({ name: 'a', url: 'http://127.0.0.1:1/a', global: false, actionType: 'triggered', createdBy: IDS.admin });
    expect(typeof a.id).toBe('number');
    expect(Number.isInteger(a.id)).toBe(true);
    expect(b.id).toBeGreaterThan(a.id);
    expect(new Date(a.createdAt).toISOString()).toBe(a.createdAt);
    expect(b).toMatchObject({ name: 'b', global: true, actionType: 'receive' });
    expect(res.body.errors.map((e: any) => [e.index, e.name, e.statusCode])).toEqual([
      [3, 'no-url', 400],
      [4, 'bad-event', 400],
      [5, 'bad-action', 400],
      [6, 'bad-global', 400],
      [9, null, 400],
    ]);
    expect(res.body.errors[0].message).toMatch(/url/);
    expect(res.body.errors[1].message).toContain('noSuchEvent');
    // Only the valid ones exist.
    const list = await h.call('GET', '/webhooks', ADMIN);
    expect(list.body.map((w: any) => w.name)).toEqual(['a', 'bad-url', 'b', 'empty-types', 'extra']);
    expect(list.body.find((w: any) => w.name === 'extra')).not.toHaveProperty('colour');
  });

  it('every field the interface marks required is required, each on its own (400 for that item); secret is optional', async () => {
    const full = hook('http://127.0.0.1:1/r', { name: 'r' });
    for (const field of ['url', 'name', 'global', 'notificationType', 'actionType']) {
      const item: Record<string, unknown> = { ...full };
      delete item[field];
      const res = await h.call('POST', '/webhooks', ADMIN, { webhooks: [item] });
      expect(res.status).toBe(200);
      expect(res.body.createdWebhooks, field).toEqual([]);
      expect(res.body.errors, field).toHaveLength(1);
      expect(res.body.errors[0]).toMatchObject({ index: 0, statusCode: 400 });
      expect(res.body.errors[0].message).toContain(field);
    }
    const withoutSecret = await h.call('POST', '/webhooks', ADMIN, { webhooks: [full] });
    expect(withoutSecret.body.errors).toEqual([]);
    expect(withoutSecret.body.createdWebhooks).toHaveLength(1);
    expect((await h.call('GET', '/webhooks', ADMIN)).body).toHaveLength(1);
  });

  it('the string fields (url, name, and secret when given) must be strings: 400 for that item (interface 4.3)', async () => {
    const full = hook('http://127.0.0.1:1/t', { name: 't' });
    for (const [field, value] of [['url', 42], ['name', true], ['secret', 1234], ['secret', { value: 'x' }]] as const) {
      const res = await h.call('POST', '/webhooks', ADMIN, { webhooks: [{ ...full, [field]: value }] });
      expect(res.status).toBe(200);
      expect(res.body.createdWebhooks, field).toEqual([]);
      expect(res.body.errors[0], field).toMatchObject({ index: 0, statusCode: 400 });
      expect(res.body.errors[0].message).toContain(field);
    }
    expect((await h.call('GET', '/webhooks', ADMIN)).body).toEqual([]);
  });

  it('400 with an error body when the body is not an object holding a webhooks array', async () => {
    for (const body of [{}, { webhooks: 'x' }, [hook('http://127.0.0.1:1/')], 'null']) {
      const res = await h.call('POST', '/webhooks', ADMIN, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: expect.any(String), message: expect.any(String) });
    }
    expect((await h.call('GET', '/webhooks', ADMIN)).body).toEqual([]);
  });

  it('non-admins may subscribe to access-request and activity events only; global and ALL_NOTIFICATIONS are admin-only', async () => {
    const res = await h.call('POST', '/webhooks', ALICE, {
      webhooks: [
        hook('http://127.0.0.1:1/ok', { name: 'ok', notificationType: ['modelAccessRequested', 'modelCommentCreated'] }),
        hook('http://127.0.0.1:1/sys', { name: 'system', notificationType: ['modelCreated'] }),
        hook('http://127.0.0.1:1/all', { name: 'all', notificationType: ['ALL_NOTIFICATIONS'] }),
        hook('http://127.0.0.1:1/glob', { name: 'global', global: true }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.createdWebhooks.map((w: any) => [w.name, w.createdBy])).toEqual([['ok', IDS.alice]]);
    expect(res.body.errors.map((e: any) => [e.index, e.name, e.statusCode])).toEqual([
      [1, 'system', 403],
      [2, 'all', 403],
      [3, 'global', 403],
    ]);
    expect(res.body.errors[0].message).toContain('modelCreated');
    // The same items are fine for an administrator.
    const adm = await h.call('POST', '/webhooks', ADMIN, {
      webhooks: [hook('http://127.0.0.1:1/sys', { notificationType: ['modelCreated'] }), hook('http://127.0.0.1:1/g', { global: true })],
    });
    expect(adm.body.errors).toEqual([]);
    expect(adm.body.createdWebhooks).toHaveLength(2);
  });
});

describe('GET /webhooks, GET /webhooks/{id}, DELETE /webhooks/{id}', () => {
  it('administrators see every webhook, other users only their own', async () => {
    const [adm] = await createHooks(h, ADMIN, [hook('http://127.0.0.1:1/adm', { name: 'adm', secret: 'sek-a' })]);
    const [al] = await createHooks(h, ALICE, [hook('http://127.0.0.1:1/al', { name: 'al', secret: 'sek-b' })]);
    const [bo] = await createHooks(h, BOB, [hook('http://127.0.0.1:1/bo', { name: 'bo' })]);

    const all = await h.call('GET', '/webhooks', ADMIN);
    expect(all.status).toBe(200);
    expect(all.body.map((w: any) => w.id)).toEqual([adm.id, al.id, bo.id]);
    for (const w of all.body) expect(Object.keys(w).sort()).toEqual(VIEW_KEYS);
    expect(all.body[1]).toEqual({
      id: al.id,
      name: 'al',
      url: 'http://127.0.0.1:1/al',
      notificationType: ['modelAccessRequested'],
      global: false,
      createdBy: IDS.alice,
    });
    expect(JSON.stringify(all.body)).not.toMatch(/sek-/);
    expect((await h.call('GET', '/webhooks', ALICE)).body.map((w: any) => w.id)).toEqual([al.id]);
    expect((await h.call('GET', '/webhooks', BOB)).body.map((w: any) => w.id)).toEqual([bo.id]);

    const one = await h.call('GET', `/webhooks/${al.id}`, ALICE);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all.body[1]);
    expect((await h.call('GET', `/webhooks/${al.id}`, ADMIN)).status).toBe(200);
    const hidden = await h.call('GET', `/webhooks/${al.id}`, BOB);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toMatchObject({ statusCode: 404, message: expect.stringContaining(String(al.id)) });
    expect((await h.call('GET', `/webhooks/${adm.id}`, ALICE)).status).toBe(404);
  });

  it('404 for unknown ids, 400 for non-integer ids', async () => {
    expect((await h.call('GET', '/webhooks/999', ADMIN)).status).toBe(404);
    expect((await h.call('DELETE', '/webhooks/999', ADMIN)).status).toBe(404);
    const bad = await h.call('GET', '/webhooks/abc', ADMIN);
    expect(bad.status).toBe(400);
    expect(bad.body.statusCode).toBe(400);
  });

  it('DELETE returns the deleted webhook and removes it; users may delete only their own', async () => {
    const [al] = await createHooks(h, ALICE, [hook('http://127.0.0.1:1/al', { name: 'al', secret: 'sek-del' })]);
    const [bo] = await createHooks(h, BOB, [hook('http://127.0.0.1:1/bo', { name: 'bo' })]);
    expect((await h.call('DELETE', `/webhooks/${al.id}`, BOB)).status).toBe(404);
    expect((await h.call('GET', `/webhooks/${al.id}`, ALICE)).status).toBe(200);

    const del = await h.call('DELETE', `/webhooks/${al.id}`, ALICE);
    expect(del.status).toBe(200);
    expect(del.body).toEqual(al);
    expect(Object.keys(del.body).sort()).toEqual(SUMMARY_KEYS);
    expect(JSON.stringify(del.body)).not.toContain('sek-del');
    expect((await h.call('GET', `/webhooks/${al.id}`, ALICE)).status).toBe(404);
    expect((await h.call('DELETE', `/webhooks/${al.id}`, ALICE)).status).toBe(404);
    // Administrators may delete anyone's.
    expect((await h.call('DELETE', `/webhooks/${bo.id}`, ADMIN)).body.id).toBe(bo.id);
    expect((await h.call('GET', '/webhooks', ADMIN)).body).toEqual([]);
  });

  it('ids keep increasing after a delete', async () => {
    const [a] = await createHooks(h, ADMIN, [hook('http://127.0.0.1:1/a')]);
    await h.call('DELETE', `/webhooks/${a.id}`, ADMIN);
    const [b] = await createHooks(h, ADMIN, [hook('http://127.0.0.1:1/b')]);
    expect(b.id).toBe(a.id + 1);
  });
});

describe('GET /webhooks/actions', () => {
  it('lists ALL_NOTIFICATIONS and every event of part 6, for any user', async () => {
    for (const token of [ADMIN, ALICE]) {
      const res = await h.call('GET', '/webhooks/actions', token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(['ALL_NOTIFICATIONS', ...EVENT_NAMES]);
    }
    expect((await h.call('GET', '/webhooks/actions', undefined)).status).toBe(401);
  });
});
