/**
 * The daemon, in Git and directory modes, refuses what a manifest author must not reach: a manifest
 * that is a symlink out of the repository, a secret file behind such a link, govops' own variables,
 * variables outside the prefix. The revision is rejected whole with the file named in /status, nothing
 * of the target shows anywhere, and the directory source's snapshots never hold a secret file.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning, type RunSettings } from '../../src/daemon/run.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, until, runSettings } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const OUTSIDE = 'outside-content-6a5b4c3d';
const FILE_SECRET = 'file-secret-value-77aa88bb';

async function daemon(source: Partial<RunSettings>) {
  const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
  cleanup.add(() => sandbox.close());
  const home = await cleanup.tmp('govops-home-');
  const settings = runSettings(home, {
    env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN, GOVOPS_TOKEN: sandbox.adminToken },
    ...source,
  });
  const running = await startRunning(settings, silentLogger(), (onRequest) =>
    new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
  );
  cleanup.add(() => running.shutdown(2000));
  const status = async () => (await getJson(`${running.daemon.url}/status`)).body;
  return { sandbox, running, status, home, url: running.daemon.url };
}

/** Every file under a folder, with its content (symlinks as their target text). */
async function allFiles(dir: string): Promise<string> {
  let out = '';
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = join(e.parentPath, e.name);
    if (e.isFile()) out += `${full}\n${await readFile(full, 'utf8')}\n`;
    else if (e.isSymbolicLink()) out += `${full} -> link\n`;
  }
  return out;
}

describe('directory mode', () => {
  it('rejects a revision with an escaping manifest symlink or a forbidden reference; snapshots hold no secret file', async () => {
    const outside = await cleanup.tmp('govops-outside-');
    await writeFile(join(outside, 'shadow'), `root:${OUTSIDE}:0:0\n`);
    const dir = await cleanup.tmp('govops-watched-');
    await mkdir(join(dir, 'secrets'));
    await writeFile(join(dir, 'secrets', 'lake-token'), `${FILE_SECRET}\n`);
    await writeFile(
      join(dir, 'lake.yaml'),
      lakehouse('lake', '/sql/1').replace('{ fromEnv: GOVOPS_SECRET_TEST_LAKE_TOKEN }', '{ fromFile: secrets/lake-token }'),
    );
    const d = await daemon({ dir });
    const api = new ServiceClient({ baseUrl: d.sandbox.url, token: d.sandbox.adminToken });
    cleanup.add(() => api.close());
    // The secret file is read from the watched folder, never copied.
    await until(async () => (await d.status()).revision.lastApplied, 20_000, 'first revision applied');
    expect(d.sandbox.integrations.size).toBe(1);
    const work = await allFiles(join(d.home, 'work'));
    expect(work).toContain('lake.yaml');
    const names = (await readdir(join(d.home, 'work'), { recursive: true })).map(String);
    expect(names.filter((n) => n.includes('lake-token') || n.includes('secrets'))).toEqual([]);
    expect(work).not.toContain(FILE_SECRET);
    const good = (await d.status()).revision.lastApplied as string;

    // Attack: a manifest linked to a file outside, and one reading govops' own token.
    await symlink(join(outside, 'shadow'), join(dir, 'x.yaml'));
    await writeFile(join(dir, 'steal.yaml'), lakehouse('steal', '/sql/9', 'steal.example.com').replace('GOVOPS_SECRET_TEST_LAKE_TOKEN', 'GOVOPS_TOKEN'));
    const s = await until(async () => {
      const st = await d.status();
      return st.revision.rejected ? st : undefined;
    }, 20_000, 'attack rejected');
    expect(s.revision.lastApplied).toBe(good);
    const files = (s.lastError.diagnostics as Array<{ at: string; message: string }>).map((x) => `${x.at} ${x.message}`).join('\n');
    expect(files).toMatch(/x\.yaml:1:1 a symbolic link leading outside/);
    expect(files).toMatch(/steal\.yaml:\d+:\d+ .*GOVOPS_TOKEN is one of govops' own configuration variables/);
    expect(JSON.stringify(s)).not.toContain(OUTSIDE);
    expect(JSON.stringify(s)).not.toContain(d.sandbox.adminToken);
    expect(d.sandbox.integrations.size).toBe(1);
    expect(await allFiles(join(d.home, 'work'))).not.toContain(OUTSIDE);
  });
});

describe('Git mode', () => {
  it('rejects a commit with a manifest symlink out of the repository, a secret file behind one, and a variable outside the prefix', async () => {
    const outside = await cleanup.tmp('govops-outside-');
    await writeFile(join(outside, 'shadow'), `root:${OUTSIDE}:0:0\n`);
    await writeFile(join(outside, 'token'), OUTSIDE);
    const repo = await createRepo();
    cleanup.add(repo.cleanup);
    const sha1 = await repo.commit({ 'manifests/lake.yaml': lakehouse('lake', '/sql/1') });
    const d = await daemon({ repo: repo.bare, path: 'manifests', intervalMs: 200 });
    await until(async () => (await d.status()).revision.lastApplied === sha1, 20_000, 'first commit applied');

    // Links committed to Git: a manifest to a file outside, a secret file to a file outside.
    await mkdir(join(repo.work, 'manifests', 'secrets'), { recursive: true });
    await symlink(join(outside, 'shadow'), join(repo.work, 'manifests', 'x.yaml'));
    await symlink(join(outside, 'token'), join(repo.work, 'manifests', 'secrets', 'token'));
    const sha2 = await repo.commit({
      'manifests/file.yaml': lakehouse('file', '/sql/2', 'file.example.com').replace('{ fromEnv: GOVOPS_SECRET_TEST_LAKE_TOKEN }', '{ fromFile: secrets/token }'),
      'manifests/env.yaml': lakehouse('env', '/sql/3', 'env.example.com').replace('GOVOPS_SECRET_TEST_LAKE_TOKEN', 'HOME'),
    });
    const s = await until(async () => {
      const st = await d.status();
      return st.revision.rejected === sha2 ? st : undefined;
    }, 20_000, 'attack commit rejected');
    expect(s.revision.lastApplied).toBe(sha1);
    const text = (s.lastError.diagnostics as Array<{ at: string; message: string }>).map((x) => `${x.at} ${x.message}`).join('\n');
    expect(text).toMatch(/manifests\/x\.yaml:1:1 a symbolic link leading outside/);
    expect(text).toMatch(/manifests\/file\.yaml:\d+:\d+ .*secrets\/token is a symbolic link .* leading out of the secrets root/);
    expect(text).toMatch(/manifests\/env\.yaml:\d+:\d+ .*HOME is outside the secret scope.*--secret-env-prefix/);
    expect(JSON.stringify(s)).not.toContain(OUTSIDE);
    expect(d.sandbox.integrations.size).toBe(1);
  });

  it('reports a submodule instead of silently skipping it', async () => {
    const sub = await createRepo();
    cleanup.add(sub.cleanup);
    await sub.commit({ 'x.yaml': lakehouse('in-sub', '/sql/s') });
    const repo = await createRepo();
    cleanup.add(repo.cleanup);
    await repo.commit({ 'manifests/lake.yaml': lakehouse('lake', '/sql/1') });
    execFileSync('git', ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.bare, 'manifests/vendor'], {
      cwd: repo.work,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
    });
    const sha = await repo.commit({}, 'add a submodule');
    const d = await daemon({ repo: repo.bare, path: 'manifests' });
    const s = await until(async () => {
      const st = await d.status();
      return st.revision.rejected === sha ? st : undefined;
    }, 20_000, 'submodule reported');
    expect(s.lastError.message).toMatch(/manifests\/vendor:1:1: a Git submodule/);
  });
});
