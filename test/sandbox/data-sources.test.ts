/**
 * Object-store data source endpoints over real HTTP (interface 2.3 payload; endpoints per docs/decisions.md):
 * create several at once, list, get, delete (soft then hard), the validation the interface implies, removal
 * with the integration, and the behaviours that apply (string ids, metadata records, shuffle, extra fields,
 * no data sources at all).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bodyFor, call, settle, start } from './harness.js';

const BASE = '/native-s3/handler';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 30 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => {
  sb.reset();
  sb.setBehaviours([]);
});

/** An enabled object_store integration with location s3://bucket-n/; returns its numeric id. */
async function store(n = 1): Promise<number> {
  const r = await call(sb, 'POST', '/integrations', { body: bodyFor('object_store', n) });
  expect(r.status).toBe(200);
  expect(await settle(sb, r.body.id)).toBe('enabled');
  return Number(r.body.id);
}

const register = (integrationId: unknown, dataSources: unknown, type: unknown = 'object_store') =>
  call(sb, 'POST', BASE, { body: { type, integrationId, dataSources } });

describe('create', () => {
  it('registers several prefixes in one request; the response has dataSourceId (integer), prefix, dataSourceName', async () => {
    const id = await store();
    const r = await register(id, [
      { dataSourceName: 'raw', prefix: 's3://bucket-1/raw' },
      { dataSourceName: 'curated', prefix: 's3://bucket-1/curated/*' },
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { dataSourceId: expect.any(Number), prefix: 's3://bucket-1/raw', dataSourceName: 'raw' },
      { dataSourceId: expect.any(Number), prefix: 's3://bucket-1/curated/*', dataSourceName: 'curated' },
    ]);
    expect(Number.isInteger(r.body[0].dataSourceId)).toBe(true);
    const list = await call(sb, 'GET', BASE);
    expect(list.body).toEqual([
      { dataSourceId: r.body[0].dataSourceId, dataSourceName: 'raw', prefix: 's3://bucket-1/raw', integrationId: id, deleted: false },
      { dataSourceId: r.body[1].dataSourceId, dataSourceName: 'curated', prefix: 's3://bucket-1/curated/*', integrationId: id, deleted: false },
    ]);
    const one = await call(sb, 'GET', `${BASE}/${r.body[1].dataSourceId}`);
    expect(one.body).toEqual(list.body[1]);
  });

  it.each([
    ['no body', undefined, /request body must be an object/],
    ['type missing', { integrationId: 1, dataSources: [] }, /type is required/],
    ['type of another kind', { type: 'lakehouse', integrationId: 1, dataSources: [] }, /type must be object_store/],
    ['integrationId a string', { type: 'object_store', integrationId: '1', dataSources: [] }, /integrationId must be a number/],
    ['dataSources missing', { type: 'object_store', integrationId: 1 }, /dataSources is required/],
    ['dataSources not an array', { type: 'object_store', integrationId: 1, dataSources: {} }, /dataSources must be an array/],
    ['item without prefix', { type: 'object_store', integrationId: 1, dataSources: [{ dataSourceName: 'a' }] }, /dataSources\[0\]\.prefix is required/],
    ['item name a number', { type: 'object_store', integrationId: 1, dataSources: [{ dataSourceName: 1, prefix: 'p' }] }, /dataSources\[0\]\.dataSourceName must be a string/],
  ])('400 for %s (interface 2.3: types and required fields)', async (_what, body, message) => {
    await store();
    const r = await call(sb, 'POST', BASE, { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(message) });
  });

  it('404 when the integration does not exist; 400 when it is not an object_store', async () => {
    expect((await register(99, [{ dataSourceName: 'a', prefix: 's3://x/a' }])).status).toBe(404);
    const lake = await call(sb, 'POST', '/integrations', { body: bodyFor('distributed_sql') });
    await settle(sb, lake.body.id);
    const r = await register(Number(lake.body.id), [{ dataSourceName: 'a', prefix: 's3://x/a' }]);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/distributed_sql integration/);
  });

  it('409 until the integration is enabled', async () => {
    sb.setStuckTransitions(true);
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor('object_store') });
    const early = await register(Number(r.body.id), [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }]);
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/is creating: data sources can be registered once it is enabled/);
    sb.setStuckTransitions(false);
    expect(await settle(sb, r.body.id)).toBe('enabled');
    expect((await register(Number(r.body.id), [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }])).status).toBe(200);
  });

  it('400 for a prefix outside the cloudLocationPath; nothing of the request is created', async () => {
    const id = await store();
    const r = await register(id, [
      { dataSourceName: 'ok', prefix: 's3://bucket-1/ok' },
      { dataSourceName: 'out', prefix: 's3://bucket-10/x' },
    ]);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/dataSources\[1\]\.prefix s3:\/\/bucket-10\/x is not under the integration's cloudLocationPath s3:\/\/bucket-1\//);
    expect((await call(sb, 'GET', BASE)).body).toEqual([]);
  });

  it('409 for a name or a prefix taken in the integration (or twice in the request); fine in another integration', async () => {
    const one = await store(1);
    const two = await store(2);
    expect((await register(one, [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }])).status).toBe(200);
    const sameName = await register(one, [{ dataSourceName: 'a', prefix: 's3://bucket-1/b' }]);
    expect(sameName.status).toBe(409);
    expect(sameName.body.message).toMatch(/named a already exists in integration/);
    const samePrefix = await register(one, [{ dataSourceName: 'b', prefix: 's3://bucket-1/a' }]);
    expect(samePrefix.status).toBe(409);
    expect(samePrefix.body.message).toMatch(/Prefix s3:\/\/bucket-1\/a is already registered/);
    const twice = await register(one, [
      { dataSourceName: 'c', prefix: 's3://bucket-1/c' },
      { dataSourceName: 'c', prefix: 's3://bucket-1/d' },
    ]);
    expect(twice.status).toBe(409);
    expect((await register(two, [{ dataSourceName: 'a', prefix: 's3://bucket-2/a' }])).status).toBe(200);
    expect((await call(sb, 'GET', BASE)).body).toHaveLength(2);
  });

  it('needs the administrator token in the Authorization header, as integration endpoints', async () => {
    const id = await store();
    expect((await call(sb, 'POST', BASE, { token: null, body: { type: 'object_store', integrationId: id, dataSources: [] } })).status).toBe(401);
    expect((await call(sb, 'GET', BASE, { token: sb.userToken })).status).toBe(403);
  });
});

describe('delete', () => {
  it('the first DELETE disables (still listed, deleted: true, name free again), the second removes', async () => {
    const id = await store();
    const [ds] = (await register(id, [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }])).body;
    const first = await call(sb, 'DELETE', `/dataSource/${ds.dataSourceId}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ dataSourceId: ds.dataSourceId, deleted: true });
    expect((await call(sb, 'GET', BASE)).body).toEqual([expect.objectContaining({ dataSourceId: ds.dataSourceId, deleted: true })]);
    expect((await register(id, [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }])).status).toBe(200);
    expect((await call(sb, 'DELETE', `/dataSource/${ds.dataSourceId}`)).status).toBe(200);
    expect((await call(sb, 'DELETE', `/dataSource/${ds.dataSourceId}`)).status).toBe(404);
    expect((await call(sb, 'GET', `${BASE}/${ds.dataSourceId}`)).status).toBe(404);
    expect((await call(sb, 'GET', BASE)).body).toEqual([expect.objectContaining({ dataSourceName: 'a', deleted: false })]);
  });

  it('behaviour hard-delete: one DELETE removes', async () => {
    sb.setBehaviours(['hard-delete']);
    const id = await store();
    const [ds] = (await register(id, [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }])).body;
    expect((await call(sb, 'DELETE', `/dataSource/${ds.dataSourceId}`)).status).toBe(200);
    expect((await call(sb, 'GET', BASE)).body).toEqual([]);
  });

  it('the data sources of a deleted integration disappear with it', async () => {
    const one = await store(1);
    const two = await store(2);
    await register(one, [
      { dataSourceName: 'a', prefix: 's3://bucket-1/a' },
      { dataSourceName: 'b', prefix: 's3://bucket-1/b' },
    ]);
    await register(two, [{ dataSourceName: 'a', prefix: 's3://bucket-2/a' }]);
    expect((await call(sb, 'DELETE', `/integrations/${one}`)).status).toBe(200);
    expect((await call(sb, 'GET', BASE)).body).toHaveLength(3); // still deleting
    expect(await settle(sb, one)).toBe('removed');
    expect((await call(sb, 'GET', BASE)).body).toEqual([expect.objectContaining({ integrationId: two, prefix: 's3://bucket-2/a' })]);
  });

  it('404 for an unknown or malformed id', async () => {
    expect((await call(sb, 'DELETE', '/dataSource/12')).status).toBe(404);
    expect((await call(sb, 'DELETE', '/dataSource/x1')).status).toBe(404);
  });
});

describe('behaviours', () => {
  it('string-ids: ids and integrationId are strings', async () => {
    sb.setBehaviours(['string-ids']);
    const id = await store();
    const r = await register(id, [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }]);
    expect(typeof r.body[0].dataSourceId).toBe('string');
    expect((await call(sb, 'GET', BASE)).body[0]).toMatchObject({ dataSourceId: r.body[0].dataSourceId, integrationId: String(id) });
  });

  it('data-source-metadata: records come as handler metadata', async () => {
    sb.setBehaviours(['data-source-metadata']);
    const id = await store();
    const r = await register(id, [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }]);
    expect((await call(sb, 'GET', BASE)).body).toEqual([
      { id: r.body[0].dataSourceId, name: 'a', deleted: false, metadata: { prefix: 's3://bucket-1/a', integrationId: id, dataSourceName: 'a' } },
    ]);
  });

  it('extra-fields and shuffle', async () => {
    sb.setBehaviours(['extra-fields', 'shuffle']);
    const id = await store();
    const items = Array.from({ length: 12 }, (_, i) => ({ dataSourceName: `d${i}`, prefix: `s3://bucket-1/d${i}` }));
    const r = await register(id, items);
    expect(r.body[0]).toMatchObject({ integrationId: id, createdAt: expect.any(String) });
    const orders = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const list = (await call(sb, 'GET', BASE)).body as Array<Record<string, unknown>>;
      expect(list[0]).toMatchObject({ blobHandlerType: 'Native S3' });
      orders.add(list.map((d) => d.dataSourceName).join(','));
    }
    expect(orders.size).toBeGreaterThan(1);
  });

  it('no-data-sources: every data-source endpoint answers 404', async () => {
    sb.setBehaviours(['no-data-sources']);
    const id = await store();
    for (const [method, path] of [['GET', BASE], ['POST', BASE], ['GET', `${BASE}/1`], ['DELETE', '/dataSource/1']] as const) {
      const r = await call(sb, method, path, method === 'POST' ? { body: { type: 'object_store', integrationId: id, dataSources: [] } } : {});
      expect(r.status).toBe(404);
    }
  });
});

describe('persistence', () => {
  it('data sources are saved with the data file and come back on restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'govops-sb-ds-'));
    try {
      const file = join(dir, 'data.json');
      const a = await start({ dataFile: file, transitionMs: 10 });
      const created = await call(a, 'POST', '/integrations', { body: bodyFor('object_store') });
      await settle(a, created.body.id);
      await call(a, 'POST', BASE, { body: { type: 'object_store', integrationId: Number(created.body.id), dataSources: [{ dataSourceName: 'a', prefix: 's3://bucket-1/a' }] } });
      await a.close();
      const b = await start({ dataFile: file });
      try {
        expect((await call(b, 'GET', BASE)).body).toEqual([expect.objectContaining({ dataSourceName: 'a', integrationId: Number(created.body.id) })]);
      } finally {
        await b.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
