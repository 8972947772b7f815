/**
 * The client's data-source methods: against the sandbox (real HTTP, each behaviour that applies), against
 * small scripted services for the shapes the interface does not show (wrappers, handler metadata, a single
 * record, ids left out), the "not supported" answer, soft and hard deletes, and a create that may have
 * landed (never blindly re-sent).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { toCreatedDataSources, toDataSourceList } from '../../src/api/data-sources.js';
import { DataSourcesUnsupportedError, ErrorCode } from '../../src/errors.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { sendJson, startServer, type TestServer } from './server.js';

const FAST = { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10 };
let sandbox: SandboxHandle | undefined;
let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await sandbox?.close();
  await server?.close();
  client = sandbox = server = undefined;
});

async function withSandbox(behaviours: string[] = []): Promise<{ api: ServiceClient; integrationId: string }> {
  sandbox = await startSandbox({ port: 0, transitionMs: 5, behaviours });
  client = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, retryPolicy: FAST });
  const created = await client.createIntegration({
    type: 'object_store',
    autoBootstrap: false,
    config: { name: 's', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: 's3://b/base', authenticationType: 'auto' },
  });
  while ((await client.getIntegrationStatus(created.id)).status !== 'enabled') await new Promise((r) => setTimeout(r, 5));
  return { api: client, integrationId: created.id };
}

describe('against the sandbox', () => {
  it.each([[[]], [['string-ids']], [['numeric-ids']], [['data-source-metadata']], [['extra-fields', 'shuffle']], [['hard-delete']]])(
    'create several, list, get, delete for good (behaviours %j)',
    async (behaviours) => {
      const { api, integrationId } = await withSandbox(behaviours);
      const created = await api.createDataSources(integrationId, [
        { dataSourceName: 'raw', prefix: 's3://b/base/raw' },
        { dataSourceName: 'cur', prefix: 's3://b/base/cur' },
      ]);
      expect(created).toEqual([
        { id: expect.stringMatching(/^\d+$/), integrationId, dataSourceName: 'raw', prefix: 's3://b/base/raw' },
        { id: expect.stringMatching(/^\d+$/), integrationId, dataSourceName: 'cur', prefix: 's3://b/base/cur' },
      ]);
      const listed = await api.listDataSources();
      expect([...listed].sort((a, b) => a.prefix.localeCompare(b.prefix))).toEqual([created[1], created[0]]);
      expect(await api.getDataSource(created[0]!.id)).toEqual(created[0]);
      expect(await api.deleteDataSource(created[0]!.id)).toBe(true);
      expect(await api.listDataSources()).toEqual([created[1]]);
      expect(sandbox!.dataSources.size).toBe(1); // removed for good, not only disabled
      expect(await api.deleteDataSource(created[0]!.id)).toBe(false);
    },
  );

  it('sends type object_store, integrationId as a number and the items, with the integration token scheme', async () => {
    const seen: unknown[] = [];
    server = await startServer((req, res) => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body: req.body ? JSON.parse(req.body) : undefined });
      sendJson(res, 200, [{ dataSourceId: 7, prefix: 's3://b/base/x', dataSourceName: 'x' }]);
    });
    client = new ServiceClient({ baseUrl: server.url, token: 'tok', retryPolicy: FAST });
    await client.createDataSources('42', [{ dataSourceName: 'x', prefix: 's3://b/base/x' }]);
    expect(seen).toEqual([
      { method: 'POST', url: '/native-s3/handler', auth: 'tok', body: { type: 'object_store', integrationId: 42, dataSources: [{ dataSourceName: 'x', prefix: 's3://b/base/x' }] } },
    ]);
  });

  it('"not supported": a 404 on the list is a typed, terminal error naming the path', async () => {
    const { api } = await withSandbox(['no-data-sources']);
    const err = await api.listDataSources().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataSourcesUnsupportedError);
    expect((err as DataSourcesUnsupportedError).code).toBe(ErrorCode.dataSourcesUnsupported);
    expect((err as DataSourcesUnsupportedError).failureClass).toBe('terminal');
    expect((err as Error).message).toBe(
      'data sources not supported by this service (GET /native-s3/handler answered 404); set --data-sources-path if the service has them elsewhere',
    );
  });
});

describe('configured paths', () => {
  it('--data-sources-path and --data-source-delete-path move every call', async () => {
    const seen: string[] = [];
    server = await startServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.method === 'GET') return sendJson(res, 200, { hits: [{ id: 3, name: 'a', metadata: { prefix: 'p', integrationId: '9' } }] });
      if (req.method === 'POST') return sendJson(res, 200, { dataSourceId: 3, prefix: 'p', dataSourceName: 'a' });
      return seen.filter((s) => s.startsWith('DELETE')).length === 1 ? sendJson(res, 200, {}) : sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: 'gone' });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, dataSourcesPath: 'api/s3/sources/', dataSourceDeletePath: '/api/ds' });
    expect(await client.listDataSources()).toEqual([{ id: '3', integrationId: '9', dataSourceName: 'a', prefix: 'p' }]);
    expect(await client.createDataSources('9', [{ dataSourceName: 'a', prefix: 'p' }])).toEqual([{ id: '3', integrationId: '9', dataSourceName: 'a', prefix: 'p' }]);
    expect(await client.deleteDataSource('3')).toBe(true);
    expect(seen).toEqual(['GET /api/s3/sources', 'POST /api/s3/sources', 'DELETE /api/ds/3', 'DELETE /api/ds/3']);
  });

  it('405 on the list is "not supported" too; other errors are not', async () => {
    server = await startServer((req, res) =>
      req.url.startsWith('/native-s3/handler')
        ? sendJson(res, 405, { statusCode: 405, error: 'Method Not Allowed', message: 'POST only' })
        : sendJson(res, 403, { statusCode: 403, error: 'Forbidden', message: 'no' }),
    );
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    await expect(client.listDataSources()).rejects.toBeInstanceOf(DataSourcesUnsupportedError);
    const other = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST, dataSourcesPath: '/x' });
    try {
      await expect(other.listDataSources()).rejects.toMatchObject({ code: ErrorCode.apiAuth });
    } finally {
      await other.close();
    }
  });
});

describe('shapes', () => {
  it('reads bare arrays, wrappers, flat and metadata records, number and string ids; leaves soft-deleted records out', () => {
    const rec = { dataSourceId: 1, dataSourceName: 'a', prefix: 'p', integrationId: 5, extra: { x: 1 } };
    expect(toDataSourceList([rec], 'GET', '/p')).toEqual([{ id: '1', integrationId: '5', dataSourceName: 'a', prefix: 'p' }]);
    for (const key of ['dataSources', 'hits', 'records', 'items', 'data']) {
      expect(toDataSourceList({ count: 1, [key]: [rec] }, 'GET', '/p')).toHaveLength(1);
    }
    expect(toDataSourceList([{ id: '2', name: 'b', metadata: { prefix: 'q', integrationId: '6', dataSourceName: 'b' } }], 'GET', '/p')).toEqual([
      { id: '2', integrationId: '6', dataSourceName: 'b', prefix: 'q' },
    ]);
    expect(toDataSourceList([{ ...rec, deleted: true }, { ...rec, dataSourceId: 2, deleted: false }], 'GET', '/p').map((d) => d.id)).toEqual(['2']);
    expect(toDataSourceList([{ dataSourceName: 'no id' }, rec], 'GET', '/p')).toHaveLength(1);
    expect(() => toDataSourceList({ nothing: true }, 'GET', '/p')).toThrow(/expected a list of data sources/);
  });

  it('matches create answers to what was sent by prefix, else by position; reports ids left out', () => {
    const sent = [
      { dataSourceName: 'a', prefix: 'p/a' },
      { dataSourceName: 'b', prefix: 'p/b' },
    ];
    expect(toCreatedDataSources([{ dataSourceId: 2, prefix: 'p/b' }, { dataSourceId: 1, prefix: 'p/a' }], '5', sent)).toEqual({
      found: [
        { id: '1', integrationId: '5', dataSourceName: 'a', prefix: 'p/a' },
        { id: '2', integrationId: '5', dataSourceName: 'b', prefix: 'p/b' },
      ],
      missing: [],
    });
    expect(toCreatedDataSources({ dataSources: [{ id: 1 }, { id: 2 }] }, '5', sent).found.map((d) => d.id)).toEqual(['1', '2']);
    expect(toCreatedDataSources({ dataSourceId: 1, prefix: 'p/a' }, '5', sent)).toEqual({
      found: [{ id: '1', integrationId: '5', dataSourceName: 'a', prefix: 'p/a' }],
      missing: [sent[1]],
    });
  });

  it('matches as a pass over every record per item sent does (random prefixes, repeats, records without a prefix or an id)', () => {
    /** The matching as first written: for each item, a pass over the records for the first unused one of its prefix. */
    const byScan = (records: Array<{ id: string; prefix: string } | undefined>, sent: Array<{ prefix: string }>) => {
      const used = new Set<number>();
      return sent.map((item, i) => {
        let at = records.findIndex((r, j) => r !== undefined && !used.has(j) && r.prefix === item.prefix);
        if (at < 0 && records[i] !== undefined && records[i]!.prefix === '' && !used.has(i)) at = i;
        if (at < 0 || !records[at]) return undefined;
        used.add(at);
        return records[at]!.id;
      });
    };
    const prefix = fc.constantFrom('', 'p/a', 'p/b', 'p/c');
    fc.assert(
      fc.property(fc.array(fc.record({ prefix, id: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) }), { maxLength: 10 }), fc.array(prefix, { maxLength: 10 }), (bodies, prefixes) => {
        const sent = prefixes.map((p, i) => ({ dataSourceName: `d${i}`, prefix: p }));
        const body = bodies.map((b) => ({ ...(b.id !== undefined ? { dataSourceId: b.id } : {}), ...(b.prefix ? { prefix: b.prefix } : {}) }));
        const got = toCreatedDataSources(body, '5', sent);
        const records = body.map((b) => (b.dataSourceId === undefined ? undefined : { id: String(b.dataSourceId), prefix: b.prefix ?? '' }));
        const expected = byScan(records, sent);
        expect(got.found.map((d) => d.id)).toEqual(expected.filter((x) => x !== undefined));
        expect(got.missing).toEqual(sent.filter((_, i) => expected[i] === undefined));
      }),
      { numRuns: 2000 },
    );
  });

  it('a create answer without ids: the data sources are looked up by integration and prefix', async () => {
    server = await startServer((req, res) => {
      if (req.method === 'POST') return sendJson(res, 200, { ok: true });
      return sendJson(res, 200, [{ dataSourceId: 11, dataSourceName: 'a', prefix: 'p/a', integrationId: 5 }]);
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    expect(await client.createDataSources('5', [{ dataSourceName: 'a', prefix: 'p/a' }])).toEqual([{ id: '11', integrationId: '5', dataSourceName: 'a', prefix: 'p/a' }]);
    server.seen.length = 0;
    await expect(client.createDataSources('5', [{ dataSourceName: 'b', prefix: 'p/b' }])).rejects.toMatchObject({ code: ErrorCode.apiInvalidResponse });
  });
});

describe('a create that may have landed', () => {
  it('after a reset once the first item was created, only the missing one is sent again', async () => {
    const live: Array<Record<string, unknown>> = [];
    let posts = 0;
    server = await startServer((req, res, { socket }) => {
      if (req.method === 'GET') return sendJson(res, 200, live);
      posts++;
      const body = JSON.parse(req.body) as { integrationId: number; dataSources: Array<{ dataSourceName: string; prefix: string }> };
      const made = body.dataSources.map((d, i) => ({ dataSourceId: 100 + live.length + i, ...d, integrationId: body.integrationId }));
      if (posts === 1) {
        live.push(made[0]!); // the service created the first, then the connection broke
        return void socket.destroy();
      }
      live.push(...made);
      return sendJson(res, 200, made.map(({ dataSourceId, prefix, dataSourceName }) => ({ dataSourceId, prefix, dataSourceName })));
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    const out = await client.createDataSources('5', [
      { dataSourceName: 'a', prefix: 'p/a' },
      { dataSourceName: 'b', prefix: 'p/b' },
    ]);
    expect(out.map((d) => [d.id, d.prefix])).toEqual([
      ['100', 'p/a'],
      ['101', 'p/b'],
    ]);
    const bodies = server.seen.filter((s) => s.method === 'POST').map((s) => (JSON.parse(s.body) as { dataSources: unknown[] }).dataSources);
    expect(bodies).toEqual([
      [
        { dataSourceName: 'a', prefix: 'p/a' },
        { dataSourceName: 'b', prefix: 'p/b' },
      ],
      [{ dataSourceName: 'b', prefix: 'p/b' }],
    ]);
  });
});

describe('a service whose data-source list names no integration (docs/decisions.md, "Reading bodies")', () => {
  it('a create whose answer was lost is found by its prefix, never sent twice; a create answered without ids too', async () => {
    const live: Array<Record<string, unknown>> = [];
    let posts = 0;
    server = await startServer((req, res, { socket }) => {
      // the list's records carry id, name and prefix, not the integration
      if (req.method === 'GET') return sendJson(res, 200, live.map(({ dataSourceId, dataSourceName, prefix }) => ({ dataSourceId, dataSourceName, prefix })));
      posts++;
      const body = JSON.parse(req.body) as { integrationId: number; dataSources: Array<{ dataSourceName: string; prefix: string }> };
      if (body.dataSources.some((d) => live.some((l) => l.prefix === d.prefix))) return sendJson(res, 409, { statusCode: 409, error: 'Conflict', message: 'prefix already registered' });
      const made = body.dataSources.map((d, i) => ({ dataSourceId: 100 + live.length + i, ...d, integrationId: body.integrationId }));
      live.push(...made);
      if (posts === 1) return void socket.destroy(); // created, then the answer is lost
      return sendJson(res, 200, { ok: true }); // accepted, no ids
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    expect(await client.createDataSources('5', [{ dataSourceName: 'a', prefix: 's3://b/base/a' }])).toEqual([{ id: '100', integrationId: '5', dataSourceName: 'a', prefix: 's3://b/base/a' }]);
    expect(posts).toBe(1);
    expect(await client.createDataSources('5', [{ dataSourceName: 'b', prefix: 's3://b/base/b' }])).toEqual([{ id: '101', integrationId: '5', dataSourceName: 'b', prefix: 's3://b/base/b' }]);
    expect(posts).toBe(2);
  });
});

describe('a lost create answer, a list naming no integration, nested locations (docs/decisions.md, "Reading bodies")', () => {
  it("never takes another integration's data source at the same prefix for the one it created", async () => {
    // ours: integration 5 at s3://b/base; another team's: integration 6 at s3://b/base/team, holding data source 50 at
    // s3://b/base/team/x. govops registers the same prefix under 5 (the identity is integration and prefix).
    const live: Array<Record<string, unknown>> = [{ dataSourceId: 50, dataSourceName: 'theirs', prefix: 's3://b/base/team/x', integrationId: 6 }];
    let posts = 0;
    server = await startServer((req, res, { socket }) => {
      // newest first, and without the integration
      if (req.method === 'GET') return sendJson(res, 200, [...live].reverse().map(({ dataSourceId, dataSourceName, prefix }) => ({ dataSourceId, dataSourceName, prefix })));
      posts++;
      const body = JSON.parse(req.body) as { integrationId: number; dataSources: Array<{ dataSourceName: string; prefix: string }> };
      live.push(...body.dataSources.map((d, i) => ({ dataSourceId: 100 + i, ...d, integrationId: body.integrationId })));
      return void socket.destroy(); // created, then the answer is lost
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retryPolicy: FAST });
    // the apply passes the ids the plan listed (src/reconcile/apply-stage.ts)
    expect(await client.createDataSources('5', [{ dataSourceName: 'ours', prefix: 's3://b/base/team/x' }], { preexisting: new Set(['50']) })).toEqual([
      { id: '100', integrationId: '5', dataSourceName: 'ours', prefix: 's3://b/base/team/x' },
    ]);
    expect(posts).toBe(1);
  });
});
