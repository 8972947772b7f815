/**
 * DataSource manifests through the built CLI against the sandbox (issue #17, "Done when"): a prefix outside
 * the location rejected offline, create with the integration in one revision, add and remove prefixes,
 * adoption, prune, deletion of the integration with its data sources (order), and a service without data
 * sources (reported once, not a crash, not a silent no-op), also at a configured path.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, requestsBeyondLists, type Harness } from './harness.js';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe('govops validate / plan / apply with data sources', () => {
  let h: Harness;
  const write = (file: string, text: string) => h.writeManifest(file, text);
  const remove = (file: string) => rm(path.join(h.dir, 'manifests', file));
  beforeAll(async () => {
    h = await harness({ transitionMs: 30 });
    await mkdir(path.join(h.dir, 'manifests'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('validate: a prefix outside the integration location is an error at file:line:col, offline', async () => {
    await write('store.yaml', store('raw', 's3://raw.example.com/base/'));
    await write('events.yaml', source('events', 'raw', 's3://elsewhere/events'));
    const r = await h.govops(['validate', 'manifests']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(
      /^manifests\/events\.yaml:8:11: DataSource\/events: prefix `s3:\/\/elsewhere\/events` is not under the cloudLocationPath `s3:\/\/raw\.example\.com\/base\/` of Integration\/raw/m,
    );
    const plan = await h.govops(['plan', 'manifests']);
    expect(plan.code).toBe(1);
    expect(requestsBeyondLists(h.sandbox)).toEqual([]);
  });

  it('apply: the integration and its data sources in one revision; the data sources in one request once it is enabled', async () => {
    await write('events.yaml', source('events', 'raw', 's3://raw.example.com/base/events'));
    await write('logs.yaml', source('logs', 'raw', 's3://raw.example.com/base/logs/*', 'Raw logs'));
    const plan = await h.govops(['plan', 'manifests']);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/\+ Integration\/raw \(object_store\)[\s\S]*\+ DataSource\/events \(in Integration\/raw\)\n\s+\+ integration = "raw"\n\s+\+ dataSourceName = "events"\n\s+\+ prefix = "s3:\/\/raw\.example\.com\/base\/events"\n\s+# registered once Integration\/raw is created and enabled/);
    h.sandbox.clearRequests();
    const r = await h.govops(['apply', 'manifests']);
    expect(r.code, r.stderr).toBe(0);
    const writes = requestLines(h.sandbox).filter((l) => !l.startsWith('GET') && !l.includes('dryRun'));
    expect(writes).toEqual(['POST /integrations', 'POST /native-s3/handler']);
    const lines = requestLines(h.sandbox);
    const lastPoll = lines.map((l, i) => (l.startsWith('GET /integrations/1/status') ? i : -1)).filter((i) => i >= 0).pop()!;
    expect(lines.indexOf('POST /native-s3/handler')).toBeGreaterThan(lastPoll);
    expect(h.sandbox.dataSources.list().map((d) => [d.dataSourceName, d.prefix])).toEqual([
      ['events', 's3://raw.example.com/base/events'],
      ['Raw logs', 's3://raw.example.com/base/logs/*'],
    ]);
    const again = await h.govops(['plan', 'manifests', '--detailed-exitcode']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/No changes/);
  });

  it('add a prefix and remove one: the removal waits for --prune', async () => {
    await write('audit.yaml', source('audit', 'raw', 's3://raw.example.com/base/audit'));
    await remove('logs.yaml');
    const plan = await h.govops(['plan', 'manifests', '--detailed-exitcode']);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toMatch(/Warning: DataSource\/logs is managed by govops but has no manifest: run with --prune to delete it/);
    expect(plan.stdout).toMatch(/\+ DataSource\/audit \(in Integration\/raw\)/);
    const md = await h.govops(['plan', 'manifests', '-o', 'markdown']);
    expect(md.stdout).toMatch(/\| `\+` \| DataSource\/audit \| data source in Integration\/raw \| will be created \|/);
    const apply = await h.govops(['apply', 'manifests', '--prune', '--max-deletes', '1']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(h.sandbox.dataSources.list().map((d) => d.dataSourceName)).toEqual(['events', 'audit']);
    expect((await h.state()).resources.filter((r) => r.kind === 'DataSource').map((r) => r.name).sort()).toEqual(['audit', 'events']);
  });

  it('adopts a data source made outside govops, and prunes it later like its own', async () => {
    await h.client().createDataSources('1', [{ dataSourceName: 'manual', prefix: 's3://raw.example.com/base/manual' }]);
    await write('manual.yaml', source('manual', 'raw', 's3://raw.example.com/base/manual'));
    h.sandbox.clearRequests();
    const apply = await h.govops(['apply', 'manifests']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/<= DataSource\/manual/);
    expect(requestLines(h.sandbox).filter((l) => !l.startsWith('GET'))).toEqual([]);
    expect((await h.state()).resources.find((r) => r.name === 'manual')).toMatchObject({ kind: 'DataSource', origin: 'adopted' });
    await remove('manual.yaml');
    const prune = await h.govops(['apply', 'manifests', '--prune', '--max-deletes', '1']);
    expect(prune.code, prune.stderr).toBe(0);
    expect(h.sandbox.dataSources.list().map((d) => d.dataSourceName)).toEqual(['events', 'audit']);
  });

  it('deleting the integration with its data sources: their deletes go first, then the integration', async () => {
    await remove('store.yaml');
    await remove('events.yaml');
    await remove('audit.yaml');
    h.sandbox.clearRequests();
    const plan = await h.govops(['plan', 'manifests', '--prune', '--max-deletes', '3', '--allow-empty']);
    expect(plan.stdout).toMatch(/- Integration\/raw[\s\S]*- DataSource\/audit \(in Integration\/raw\)[\s\S]*- DataSource\/events \(in Integration\/raw\)/);
    const apply = await h.govops(['apply', 'manifests', '--prune', '--max-deletes', '3', '--allow-empty']);
    expect(apply.code, apply.stderr).toBe(0);
    const deletes = requestLines(h.sandbox).filter((l) => l.startsWith('DELETE'));
    expect(deletes.slice(0, 4).every((l) => l.startsWith('DELETE /dataSource/'))).toBe(true);
    expect(deletes.slice(4)).toEqual(['DELETE /integrations/1?dryRun=true', 'DELETE /integrations/1']);
    expect(h.sandbox.dataSources.size).toBe(0);
    expect((await h.state()).resources).toEqual([]);
  });

  it('a service without data sources: reported once, integrations still applied, exit 1 (refused), no crash', async () => {
    h.sandbox.setBehaviours(['no-data-sources']);
    await write('store.yaml', store('cur', 's3://cur.example.com/'));
    await write('events.yaml', source('events', 'cur', 's3://cur.example.com/events'));
    await write('logs.yaml', source('logs', 'cur', 's3://cur.example.com/logs'));
    const plan = await h.govops(['plan', 'manifests']);
    expect(plan.code).toBe(0);
    const out = plan.stdout + plan.stderr;
    expect(count(out, 'data sources not supported by this service')).toBe(1);
    expect(plan.stdout).toMatch(
      /Warning: data sources not supported by this service \(GET \/native-s3\/handler answered 404\); set --data-sources-path if the service has them elsewhere: 2 DataSource manifests not applied/,
    );
    expect(plan.stdout).toMatch(/\+ DataSource\/events[\s\S]*! blocked: the service has no data-source endpoints \(see the warning\)/);
    const json = JSON.parse((await h.govops(['plan', 'manifests', '-o', 'json'])).stdout);
    expect(json.dataSourcesUnsupported).toMatch(/^data sources not supported by this service/);
    const apply = await h.govops(['apply', 'manifests']);
    expect(apply.code).toBe(1);
    expect(count(apply.stdout + apply.stderr, 'data sources not supported by this service')).toBe(1);
    expect(h.sandbox.integrations.size).toBe(1);
    expect((await h.state()).resources.map((r) => `${r.kind}/${r.name}`)).toEqual(['Integration/cur']);
  });

  it('--data-sources-path / GOVOPS_DATA_SOURCES_PATH: a path without data sources is "not supported" naming it', async () => {
    h.sandbox.setBehaviours([]);
    const plan = await h.govops(['plan', 'manifests', '--data-sources-path', '/api/v2/s3']);
    expect(plan.stdout).toMatch(/Warning: data sources not supported by this service \(GET \/api\/v2\/s3 answered 404\)/);
    const env = await h.govops(['plan', 'manifests'], { GOVOPS_DATA_SOURCES_PATH: '/api/v3/s3' });
    expect(env.stdout).toMatch(/GET \/api\/v3\/s3 answered 404/);
    const bad = await h.govops(['plan', 'manifests', '--data-sources-path', 'https://elsewhere/x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--data-sources-path: "https:\/\/elsewhere\/x" is not a path on the service/);
    // back at the default path, the data sources are created
    const apply = await h.govops(['apply', 'manifests']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(h.sandbox.dataSources.list().map((d) => d.dataSourceName).sort()).toEqual(['events', 'logs']);
  });
});
