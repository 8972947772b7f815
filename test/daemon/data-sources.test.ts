/**
 * `govops run --dir` as a real process with DataSource manifests (issue #17): created with their integration in
 * one revision, prefixes added and removed, deletion of the integration with its data sources (order),
 * `/status` and `/metrics` counting them; adoption, a prefix outside the location rejected (nothing sent), drift
 * healed, the mass-deletion guard; and a service without data sources reported once.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { ServiceClient } from '../../src/api/client.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';
import { Cleanup, getJson, spawnRun, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function runDaemon(args: string[], sandbox: SandboxHandle, cwd: string): { url: Promise<string>; logs: () => string } {
  const d = spawnRun(cleanup, ['--listen', '127.0.0.1:0', '--debounce', '50ms', ...args], {
    cwd,
    env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken },
  });
  return { url: d.url, logs: d.out };
}

async function setup(behaviours: string[] = []): Promise<{ sandbox: SandboxHandle; dir: string; home: string }> {
  const sandbox = await startSandbox({ port: 0, transitionMs: 30, behaviours });
  cleanup.add(() => sandbox.close());
  const home = await cleanup.tmp('govops-run-ds-');
  const dir = join(home, 'manifests');
  await mkdir(dir);
  return { sandbox, dir, home };
}

const metricLine = (text: string, kind: string, state: string): number | undefined => {
  const m = new RegExp(`^govops_resources\\{kind="${kind}",sync_state="${state}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

describe('govops run with data sources (directory source, real process)', () => {
  it('creates, adds, removes and deletes data sources with their integration; /status and /metrics count them', async () => {
    const { sandbox, dir, home } = await setup();
    await writeFile(join(dir, 'store.yaml'), store('raw', 's3://raw.example.com/'));
    await writeFile(join(dir, 'ds.yaml'), [source('events', 'raw', 's3://raw.example.com/events'), source('logs', 'raw', 's3://raw.example.com/logs')].join('---\n'));
    const d = runDaemon(['--dir', dir, '--prune', '--max-deletes', '5', '--allow-empty'], sandbox, home);
    const url = await d.url;

    // one revision: the integration, then its two data sources in one request
    await until(() => sandbox.dataSources.size === 2, 20_000, 'data sources created');
    const status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.resourceCounts?.DataSource?.synced === 2 ? s : undefined;
    }, 20_000, 'status counts the data sources');
    expect(status.resourceCounts).toEqual({ Integration: { synced: 1 }, DataSource: { synced: 2 }, Webhook: {} });
    expect(status.dataSources).toMatchObject({ supported: true });
    expect(status.resources.filter((r: { kind: string }) => r.kind === 'DataSource').map((r: { name: string; syncState: string }) => `${r.name}:${r.syncState}`)).toEqual([
      'events:synced',
      'logs:synced',
    ]);
    const posts = sandbox.requests().filter((r) => r.method === 'POST' && !r.query.dryRun).map((r) => r.path);
    expect(posts).toEqual(['/integrations', '/native-s3/handler']);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metricLine(metrics, 'data_source', 'synced')).toBe(2);
    expect(metricLine(metrics, 'object_store', 'synced')).toBe(1);

    // a new revision: one prefix added, one removed
    await writeFile(join(dir, 'ds.yaml'), [source('events', 'raw', 's3://raw.example.com/events'), source('audit', 'raw', 's3://raw.example.com/audit')].join('---\n'));
    await until(
      () => sandbox.dataSources.list().map((x) => x.dataSourceName).sort().join(',') === 'audit,events',
      20_000,
      'audit added and logs removed',
    );

    // the integration and its data sources removed: data sources deleted first, then the integration
    sandbox.clearRequests();
    await rm(join(dir, 'ds.yaml'));
    await rm(join(dir, 'store.yaml'));
    await until(() => sandbox.integrations.size === 0, 20_000, 'integration deleted');
    const deletes = sandbox.requests().filter((r) => r.method === 'DELETE' && !r.query.dryRun).map((r) => r.path.replace(/\d+$/, 'N'));
    expect(deletes).toEqual(['/dataSource/N', '/dataSource/N', '/dataSource/N', '/dataSource/N', '/integrations/N']);
    expect(sandbox.dataSources.size).toBe(0);
    const after = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.resources?.length === 0 ? s : undefined;
    }, 20_000, 'status empty');
    expect(after.resourceCounts).toEqual({ Integration: {}, DataSource: {}, Webhook: {} });
  });

  it('adopts an existing data source, rejects a prefix outside the location, re-creates one deleted out of band, and the guard holds back mass deletes', async () => {
    const { sandbox, dir, home } = await setup();
    await writeFile(join(dir, 'store.yaml'), store('raw', 's3://raw.example.com/'));
    const d = runDaemon(['--dir', dir, '--prune', '--self-heal', '--resync', '1s'], sandbox, home);
    const url = await d.url;
    const client = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries: 0 });
    cleanup.add(() => client.close());
    const live = await until(async () => (await client.listIntegrations()).find((i) => i.status === 'enabled'), 20_000, 'integration enabled');
    const integrationId = live!.id;
    // registered outside govops: a manifest for it is an adoption (no create request)
    const [existing] = await client.createDataSources(integrationId, [{ dataSourceName: 'manual', prefix: 's3://raw.example.com/manual' }]);
    sandbox.clearRequests();
    await writeFile(join(dir, 'manual.yaml'), source('manual', 'raw', 's3://raw.example.com/manual'));
    const adopted = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.resources?.find((r: { kind: string; name: string; syncState: string }) => r.kind === 'DataSource' && r.name === 'manual' && r.syncState === 'synced') ? s : undefined;
    }, 20_000, 'manual adopted');
    expect(adopted.resourceCounts.DataSource).toEqual({ synced: 1 });
    expect(sandbox.requests().filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const state = JSON.parse(await readFile(join(home, '.govops', 'state.json'), 'utf8'));
    expect(state.resources.find((r: { name: string }) => r.name === 'manual')).toMatchObject({ kind: 'DataSource', id: existing!.id, origin: 'adopted' });

    // a prefix outside the location: the revision is rejected at file:line:col, nothing is sent
    sandbox.clearRequests();
    await writeFile(join(dir, 'bad.yaml'), source('bad', 'raw', 's3://elsewhere.example.com/x'));
    const rejected = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.revision?.rejected && s.revision.rejected === s.revision.latest ? s : undefined;
    }, 20_000, 'revision rejected');
    expect(rejected.lastError.result).toBe('invalid');
    expect(rejected.lastError.message).toMatch(/bad\.yaml:8:11: DataSource\/bad: prefix `s3:\/\/elsewhere\.example\.com\/x` is not under the cloudLocationPath/);
    expect(sandbox.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    await rm(join(dir, 'bad.yaml'));

    // drift: deleted out of band (both DELETEs: for good), created again under --self-heal
    await client.deleteDataSource(existing!.id);
    await until(() => sandbox.dataSources.list().some((x) => x.prefix === 's3://raw.example.com/manual' && String(x.id) !== existing!.id && !x.deletedAt), 20_000, 'manual re-created');

    // the integration and its data source removed at once, over the mass-deletion share: held back
    sandbox.clearRequests();
    await writeFile(join(dir, 'other.yaml'), store('cold', 's3://cold.example.com/'));
    await rm(join(dir, 'manual.yaml'));
    await rm(join(dir, 'store.yaml'));
    const guarded = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.deletionGuard?.refused === 2 ? s : undefined;
    }, 20_000, 'deletes refused');
    expect(guarded.deletionGuard.message).toMatch(/--max-deletes 2/);
    expect(sandbox.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(sandbox.dataSources.list().filter((x) => !x.deletedAt)).toHaveLength(1);
  });

  it('a service without data sources: logged once, blocked in /status and /metrics, integrations still applied', async () => {
    const { sandbox, dir, home } = await setup(['no-data-sources']);
    await writeFile(join(dir, 'store.yaml'), store('raw', 's3://raw.example.com/'));
    await writeFile(join(dir, 'ds.yaml'), source('events', 'raw', 's3://raw.example.com/events'));
    const d = runDaemon(['--dir', dir, '--resync', '1s'], sandbox, home);
    const url = await d.url;
    await until(() => sandbox.integrations.size === 1, 20_000, 'integration created');
    // several reconciles later (the resync runs every second), the warning is still there once
    await until(() => sandbox.requests().filter((r) => r.path === '/native-s3/handler').length >= 3, 20_000, 'three reconciles');
    const status = (await getJson(`${url}/status`)).body;
    expect(status.dataSources).toMatchObject({ supported: false, message: expect.stringMatching(/^data sources not supported by this service \(GET \/native-s3\/handler answered 404\)/) });
    expect(status.resources.find((r: { kind: string }) => r.kind === 'DataSource')).toMatchObject({
      name: 'events',
      syncState: 'blocked',
      error: expect.stringMatching(/the service has no data-source endpoints/),
    });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metricLine(metrics, 'data_source', 'blocked')).toBe(1);
    const warnings = d.logs().split('\n').filter((l) => l.includes('data sources not supported by this service'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, code: 'GOVOPS_DATA_SOURCES_UNSUPPORTED' });
  });
});
