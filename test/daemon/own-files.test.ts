/**
 * The daemon never reads what it writes: `govops run --dir DIR --state DIR/state.yaml` (a real process) puts its
 * work folder at DIR/work, its snapshots under it, and its state, journal and lock in DIR; none of them is loaded
 * as a manifest, and their writes make no revision. A watched folder inside the work folder is refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readdir, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning } from '../../src/daemon/run.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, runSettings, spawnRun, until, webhook } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('govops run: its own files inside the watched folder', () => {
  it('--state DIR/state.yaml: the work folder, snapshots, state, journal and lock are never manifests nor revisions', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    const dir = await cleanup.tmp('govops-ownfiles-');
    await writeFile(join(dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    await writeFile(join(dir, 'hook.yaml'), webhook('hook1', 'https://hooks.example.com/a'));
    const d = spawnRun(
      cleanup,
      // a state file named like a manifest, in the watched folder: the worst case
      ['--dir', dir, '--state', join(dir, 'state.yaml'), '--interval', '500ms', '--resync', '10m', '--listen', '127.0.0.1:0', '--debounce', '100ms'],
      { cwd: dir, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN } },
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    const status = async () => (await getJson(`${url}/status`)).body;
    const first = await until(async () => {
      const s = await status();
      return s.revision.lastApplied && s.revision.lastApplied === s.revision.latest && !s.running ? s : undefined;
    }, 20_000, 'first revision applied');
    expect(existsSync(join(dir, 'state.yaml'))).toBe(true);
    expect((await readdir(join(dir, 'work', 'snapshots'))).length).toBeGreaterThan(0);

    // an edit: applied as the second revision (its state writes, journal and lock come and go meanwhile)
    // written whole (to a file that is not a manifest, then renamed): a rescan never sees it half written, which
    // would be a revision of its own
    await writeFile(join(dir, 'lake.yaml.next'), lakehouse('lake', '/sql/2'));
    await rename(join(dir, 'lake.yaml.next'), join(dir, 'lake.yaml'));
    const second = await until(async () => {
      const s = await status();
      return s.revision.lastApplied !== first.revision.lastApplied && s.revision.lastApplied === s.revision.latest && !s.running ? s : undefined;
    }, 20_000, 'edit applied');
    // a few rescans (every 500ms) later, nothing else became a revision
    const revisions = () => d.stdout().split('\n').filter((l) => l.includes('new directory revision')).length;
    await until(() => /"msg":"reconcile finished"/.test(d.stdout()), 5_000);
    const seen = revisions();
    await new Promise((r) => setTimeout(r, 1500));
    expect(revisions()).toBe(seen);
    expect(seen).toBe(2);
    const s = await status();
    expect(s.revision.latest).toBe(second.revision.latest);
    expect(s.revision.rejected).toBeUndefined();
    expect(s.lastError).toBeUndefined();
    expect(s.resources.map((r: { kind: string; name: string }) => `${r.kind}/${r.name}`).sort()).toEqual(['Integration/lake', 'Webhook/hook1']);
    expect((await api.listIntegrations()).map((i) => i.config.httpPath)).toEqual(['/sql/2']);
    expect(d.out()).not.toMatch(/duplicate name|work\/snapshots\/.*work\/snapshots/);
  });

  it('--repo CLONE --state CLONE/state.yaml: only committed files are read; its own files in the clone never are', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    const sha1 = await repo.commit({ 'lake.yaml': lakehouse('lake', '/sql/1') });
    // the daemon fetches from the working clone itself, its state and work folder inside that clone
    const settings = runSettings(repo.work, {
      repo: repo.work,
      intervalMs: 200,
      statePath: join(repo.work, 'state.yaml'),
      workdir: join(repo.work, 'work'),
      env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN },
    });
    const running = await startRunning(settings, silentLogger(), (onRequest) =>
      new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
    );
    cleanup.add(() => running.shutdown(2000));
    const status = async () => (await getJson(`${running.daemon.url}/status`)).body;
    await until(async () => (await status()).revision.lastApplied === sha1, 20_000, 'first commit applied');
    expect(existsSync(join(repo.work, 'state.yaml'))).toBe(true);
    // a second commit (made with `git add -A` in the clone, the state file and work folder git-ignored as they should be)
    await writeFile(join(repo.work, '.gitignore'), 'state.yaml*\nwork/\n');
    const sha2 = await repo.commit({ 'lake.yaml': lakehouse('lake', '/sql/2') });
    const s = await until(async () => {
      const b = await status();
      return b.revision.lastApplied === sha2 && !b.running ? b : undefined;
    }, 20_000, 'second commit applied');
    expect(s.revision.rejected).toBeUndefined();
    expect(s.lastError).toBeUndefined();
    expect(s.resources.map((r: { kind: string; name: string }) => `${r.kind}/${r.name}`)).toEqual(['Integration/lake']);
  });

  it('refuses a watched folder inside its work folder before it listens, saying which flag to change', async () => {
    const home = await cleanup.tmp('govops-ownfiles-');
    const dir = join(home, 'm');
    const d = spawnRun(cleanup, ['--dir', dir, '--workdir', home, '--state', join(home, 'state.json'), '--listen', '127.0.0.1:0'], {
      cwd: home,
      env: { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 'x' },
    });
    expect(await d.exit).not.toBe(0);
    expect(d.out()).toContain(`the watched folder ${dir} is govops' own work folder ${home} or inside it`);
    expect(d.out()).toContain('--workdir');
    // refused before it serves anything: the old code bound --listen and logged "govops daemon listening" first
    expect(d.out()).not.toContain('listening');
  });
});
