/**
 * Without --secrets-dir a `fromFile` reference is read relative to its manifest's folder: the same text names another
 * file once the manifest moves. A pull request that moves the manifest of an integration whose host it can read (a dev
 * database) into the folder of another one keeps `fromFile: pw` and so names that one's password file: `govops preview`
 * must not dry-run it, with that password, to the dev host.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { git, initRepo } from '../helpers/git.js';

const sql = (name: string, host: string, database = 'gov') => `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: sql_analytics
  autoBootstrap: true
  config:
    host: ${host}
    database: ${database}
    schema: secure
    username: govops
    password: { fromFile: pw }
`;

describe('govops preview: a fromFile reference that names another file after a move is not dry-run', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  let stateDir: string;
  const live = () => ({ GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken });

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-pr-moved-ref-'));
    stateDir = await mkdtemp(path.join(tmpdir(), 'govops-pr-moved-ref-state-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm', 'dev'), { recursive: true });
    await mkdir(path.join(repo, 'm', 'prod'), { recursive: true });
    await writeFile(path.join(repo, 'm', 'dev', 'db.yaml'), sql('dev', 'dev.example.com'));
    await writeFile(path.join(repo, 'm', 'prod', 'db.yaml'), sql('prod', 'prod.example.com'));
    await writeFile(path.join(repo, '.gitignore'), 'pw\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    // the CI job writes each password beside its manifest (not committed)
    await writeFile(path.join(repo, 'm', 'dev', 'pw'), 'dev-pw-SECRET-1111');
    await writeFile(path.join(repo, 'm', 'prod', 'pw'), 'prod-pw-SECRET-2222');
    const applied = await runGovops(['apply', 'm', '--state', path.join(stateDir, 'state.json')], { cwd: repo, env: live() });
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });

  it('changed in place, the same file: dry-run as before', async () => {
    git(repo, 'checkout', '-q', '-B', 'inplace', 'main');
    await writeFile(path.join(repo, 'm', 'dev', 'db.yaml'), sql('dev', 'dev.example.com').replace('username: govops', 'username: govops2'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'inplace');
    const r = await runGovops(['preview', 'm', '--base', 'main', '-o', 'json'], { cwd: repo, env: live() });
    const doc = JSON.parse(r.stdout) as { resources: Array<{ name: string; dryRun?: { status: string } }> };
    expect(doc.resources.find((x) => x.name === 'dev')?.dryRun, r.stdout).toMatchObject({ status: 'passed' });
  });

  it("the dev integration's manifest moved beside prod's password: skipped, nothing sent to dev's host", async () => {
    git(repo, 'checkout', '-q', '-B', 'move', 'main');
    await rename(path.join(repo, 'm', 'dev', 'db.yaml'), path.join(repo, 'm', 'prod', 'dev.yaml'));
    await writeFile(path.join(repo, 'm', 'prod', 'dev.yaml'), sql('dev', 'dev.example.com').replace('username: govops', 'username: govops2'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'move');
    sandbox.clearRequests();
    const r = await runGovops(['preview', 'm', '--base', 'main', '-o', 'json'], { cwd: repo, env: live() });
    const doc = JSON.parse(r.stdout) as { resources: Array<{ name: string; dryRun?: { status: string; reason?: string } }> };
    const dev = doc.resources.find((x) => x.name === 'dev');
    expect(dev?.dryRun, r.stdout).toMatchObject({ status: 'skipped', reason: expect.stringContaining('fromFile') });
    expect(sandbox.requests().filter((q) => q.method !== 'GET' && q.query.dryRun !== undefined)).toEqual([]);
  });
});
