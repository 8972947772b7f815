/**
 * Data sources with the operator controls, through the real CLI against the sandbox: `govops state
 * list|show|forget|adopt` of a data source, `--only DataSource/...` (and a data source targeted without its new
 * integration), `govops/suspend` on a data source, and a saved plan (`plan --out`, `apply FILE`) with data
 * sources, refused when the live data source changed since.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from '../apply/harness.js';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';

/** Writes (dry runs left out): what changed the service. */
const writes = (h: Harness): string[] => requestLines(h.sandbox).filter((l) => !l.startsWith('GET ') && !l.includes('dryRun'));
const suspended = (manifest: string): string => manifest.replace(/^( {2}name: .*)$/m, `$1\n  annotations:\n    govops/suspend: "true"`);

describe('data sources with the operator controls', () => {
  let h: Harness;
  const run = (args: string[]) => h.govops(args);
  const idOf = async (name: string): Promise<string> => (await h.state()).resources.find((r) => r.kind === 'DataSource' && r.name === name)!.id;

  beforeAll(async () => {
    h = await harness({ transitionMs: 20 });
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('store.yaml', store('raw', 's3://raw.example.com/'));
    await h.writeManifest('a.yaml', source('a', 'raw', 's3://raw.example.com/a'));
    await h.writeManifest('b.yaml', source('b', 'raw', 's3://raw.example.com/b'));
    const r = await run(['apply', 'manifests']);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await h.close();
  });

  it('state list and show name data sources as such (kind, id, type)', async () => {
    const list = await run(['state', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`DataSource/a\\s+${await idOf('a')}\\s+data source\\s+created`));
    expect(list.stdout).not.toMatch(/DataSource\/\S+\s+\S+\s+webhook/);
    const show = JSON.parse((await run(['state', 'show', 'DataSource/b', '-o', 'json'])).stdout);
    expect(show).toMatchObject({ kind: 'DataSource', name: 'b', id: await idOf('b'), origin: 'created' });
    const unknown = await run(['state', 'show', 'Bucket/b']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/write Integration\/NAME, DataSource\/NAME or Webhook\/NAME/);
  });

  it('state forget, then state adopt --id: the data source is adopted by that id; another prefix is refused', async () => {
    const a = await idOf('a');
    const b = await idOf('b');
    expect((await run(['state', 'forget', 'DataSource/a'])).code).toBe(0);
    const wrong = await run(['state', 'adopt', 'DataSource/a', 'manifests', '--id', b]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(new RegExp(`data source ${b} has the prefix s3://raw\\.example\\.com/b, the manifest DataSource/a s3://raw\\.example\\.com/a`));
    const missing = await run(['state', 'adopt', 'DataSource/a', 'manifests', '--id', '98765']);
    expect(missing.stderr).toMatch(/no data source with id 98765 in the service/);
    const ok = await run(['state', 'adopt', 'DataSource/a', 'manifests', '--id', a]);
    expect(ok.code, ok.stderr).toBe(0);
    // recorded with its identity (integration, prefix): the stale-record check holds the id to it
    const rawId = (await h.state()).resources.find((r) => r.kind === 'Integration' && r.name === 'raw')!.id;
    expect((await h.state()).resources.find((r) => r.name === 'a')).toMatchObject({ explicitAdopt: true, identity: `${rawId}|s3://raw.example.com/a` });
    const plan = await run(['plan', 'manifests']);
    expect(plan.stdout).toMatch(new RegExp(`<= DataSource/a[\\s\\S]*adopted explicitly \\(govops state adopt --id ${a}\\)`));
    h.sandbox.clearRequests();
    expect((await run(['apply', 'manifests'])).code).toBe(0);
    expect(writes(h)).toEqual([]);
    expect((await h.state()).resources.find((r) => r.name === 'a')).toMatchObject({ kind: 'DataSource', id: a, origin: 'adopted' });
  });

  it('--only DataSource/NAME applies that data source alone; one under a new integration left out is blocked, naming the pattern', async () => {
    await h.writeManifest('c.yaml', source('c', 'raw', 's3://raw.example.com/c'));
    await h.writeManifest('d.yaml', source('d', 'raw', 's3://raw.example.com/d'));
    await h.writeManifest('store2.yaml', store('cold', 's3://cold.example.com/'));
    await h.writeManifest('e.yaml', source('e', 'cold', 's3://cold.example.com/e'));
    h.sandbox.clearRequests();
    const only = await run(['apply', 'manifests', '--only', 'DataSource/c']);
    expect(only.code, only.stderr).toBe(0);
    expect(writes(h)).toEqual(['POST /native-s3/handler']);
    expect(h.sandbox.dataSources.list().map((d) => d.prefix)).toContain('s3://raw.example.com/c');
    expect(h.sandbox.dataSources.list().map((d) => d.prefix)).not.toContain('s3://raw.example.com/d');

    const blocked = await run(['plan', 'manifests', '--only', 'DataSource/e']);
    expect(blocked.stdout).toMatch(/! blocked: waits for Integration\/cold \(create\), which this targeted plan leaves out: add --only Integration\/cold/);
    const both = await run(['apply', 'manifests', '--only', 'Integration/cold', '--only', 'DataSource/e']);
    expect(both.code, both.stderr).toBe(0);
    expect(h.sandbox.dataSources.list().map((d) => d.prefix)).toContain('s3://cold.example.com/e');
    expect(h.sandbox.dataSources.list().map((d) => d.prefix)).not.toContain('s3://raw.example.com/d');
  });

  it('govops/suspend on a data source: its rename is not applied, and without its manifest it is never pruned', async () => {
    const b = await idOf('b');
    await h.writeManifest('b.yaml', suspended(source('b', 'raw', 's3://raw.example.com/b', 'renamed-b')));
    h.sandbox.clearRequests();
    const apply = await run(['apply', 'manifests', '--only', 'DataSource/b']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/suspended \(govops\/suspend: "true"\): govops leaves it alone; otherwise it would be replaced \(dataSourceName\)/);
    expect(writes(h)).toEqual([]);
    expect((await h.state()).resources.find((r) => r.name === 'b')).toMatchObject({ id: b, suspended: true });
    await rm(path.join(h.dir, 'manifests', 'b.yaml'));
    const prune = await run(['apply', 'manifests', '--prune', '--only', 'DataSource/b']);
    expect(prune.code, prune.stderr).toBe(0);
    expect(writes(h)).toEqual([]);
    const live = h.sandbox.dataSources.list().find((d) => String(d.id) === b);
    expect(live).toMatchObject({ dataSourceName: 'b' });
    expect(live!.deletedAt).toBeUndefined();
  });

  it('a saved plan with data sources: applied exactly; refused when the live data source changed since', async () => {
    await h.writeManifest('b.yaml', source('b', 'raw', 's3://raw.example.com/b'));
    const saved = await run(['plan', 'manifests', '--out', 'ds.plan']);
    expect(saved.code, saved.stderr).toBe(0);
    h.sandbox.clearRequests();
    const applied = await run(['apply', 'ds.plan']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(writes(h)).toEqual(['POST /native-s3/handler']);
    expect(h.sandbox.dataSources.list().map((d) => d.prefix)).toContain('s3://raw.example.com/d');

    await h.writeManifest('d.yaml', source('d', 'raw', 's3://raw.example.com/d', 'dee'));
    const again = await run(['plan', 'manifests', '--out', 'rename.plan']);
    expect(again.code, again.stderr).toBe(0);
    const d = await idOf('d');
    expect(await h.client().deleteDataSource(d)).toBe(true);
    h.sandbox.clearRequests();
    const stale = await run(['apply', 'rename.plan']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(new RegExp(`DataSource/d \\(id ${d}\\) is gone from the service`));
    expect(writes(h)).toEqual([]);
  });
});
