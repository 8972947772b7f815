/**
 * `govops preview --base main` with DataSource manifests: a pull request adding a data source, renaming
 * another manifest (same integration and prefix: a rename, not a delete and a create), and removing one;
 * the live actions from the plan, no dry run for data sources (said so), read-only requests; and the
 * "not supported" warning once.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';
import { git, initRepo } from '../helpers/git.js';

interface Resource {
  resourceKind: string;
  name: string;
  change?: string;
  renamedFrom?: string;
  live?: { action: string; id?: string; blocked?: string };
  dryRun?: { status: string; reason?: string };
}

describe('govops preview with data sources', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  const write = (file: string, text: string) => writeFile(path.join(repo, 'm', file), text);
  const env = () => ({ GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken });

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-pr-ds-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm'));
    await write('store.yaml', store('raw', 's3://raw.example.com/'));
    await write('events.yaml', source('events', 'raw', 's3://raw.example.com/events'));
    await write('logs.yaml', source('logs', 'raw', 's3://raw.example.com/logs'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    const applied = await runGovops(['apply', 'm', '--state', path.join(repo, '..', `${path.basename(repo)}-state.json`)], { cwd: repo, env: env() });
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    expect(sandbox.dataSources.size).toBe(2);
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(`${repo}-state.json`, { force: true });
  });

  it('an added, a renamed and a removed data source; no dry run for them; read-only', async () => {
    git(repo, 'checkout', '-q', '-B', 'pr', 'main');
    await write('audit.yaml', source('audit', 'raw', 's3://raw.example.com/audit'));
    await rm(path.join(repo, 'm', 'events.yaml'));
    await write('events2.yaml', source('raw-events', 'raw', 's3://raw.example.com/events', 'events'));
    await rm(path.join(repo, 'm', 'logs.yaml'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
    sandbox.clearRequests();
    const r = await runGovops(['preview', 'm', '--base', 'main', '--prune', '-o', 'json'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(2);
    const doc = JSON.parse(r.stdout) as { mode: string; resources: Resource[]; warnings: Array<{ message: string }> };
    expect(doc.mode).toBe('live');
    const byName = new Map(doc.resources.map((x) => [`${x.resourceKind}/${x.name}`, x]));
    expect([...byName.keys()]).toEqual(['DataSource/audit', 'DataSource/logs', 'DataSource/raw-events']);
    expect(byName.get('DataSource/audit')).toMatchObject({
      change: 'added',
      live: { action: 'create' },
      dryRun: { status: 'skipped', reason: 'data sources have no dry run (the service interface shows none)' },
    });
    expect(byName.get('DataSource/raw-events')).toMatchObject({ change: 'renamed', renamedFrom: 'events', live: { action: 'noop' } });
    expect(byName.get('DataSource/logs')).toMatchObject({ change: 'removed', live: { action: 'delete' } });
    expect(sandbox.requests().map((q) => `${q.method} ${q.path}`).sort()).toEqual(['GET /integrations', 'GET /native-s3/handler', 'GET /webhooks']);
    const md = await runGovops(['preview', 'm', '--base', 'main', '--prune'], { cwd: repo, env: env() });
    expect(md.stdout).toMatch(/DataSource\/audit/);
    expect(md.stdout).toMatch(/data sources have no dry run/);
  });

  it('a service without data sources: the preview says so once and still shows the resources', async () => {
    sandbox.setBehaviours(['no-data-sources']);
    try {
      const r = await runGovops(['preview', 'm', '--base', 'main', '-o', 'json'], { cwd: repo, env: env() });
      const doc = JSON.parse(r.stdout) as { resources: Resource[]; warnings: Array<{ message: string }> };
      expect(doc.warnings.filter((w) => w.message.includes('data sources not supported by this service'))).toHaveLength(1);
      expect(doc.resources.find((x) => x.name === 'audit')!.live).toMatchObject({ action: 'create', blocked: 'the service has no data-source endpoints (see the warning)' });
    } finally {
      sandbox.setBehaviours([]);
    }
  });
});
