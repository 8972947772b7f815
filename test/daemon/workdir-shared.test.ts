/**
 * One work folder, one daemon. docs/environments.md runs one daemon per environment; on one host with their state
 * files in one folder (`--state /srv/govops/dev.json`, `--state /srv/govops/prod.json`) both took the default work
 * folder beside them (`/srv/govops/work`), and each removed the other's revision folders (it keeps only its own): the
 * other's resyncs then failed ("cannot read the revision folder ...: ENOENT") while /status said in-sync.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, spawnRun } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('govops run: a work folder another live daemon uses (real processes)', () => {
  it("a second daemon of another state is refused at start, naming the folder and the state; the first one's own restart is not", async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    cleanup.add(() => sandbox.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    await repo.commit({ 'env/readme.txt': 'x\n' });
    const home = await cleanup.tmp('govops-shared-work-');
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const args = (state: string, branch = 'main') => [
      '--repo', repo.bare, '--branch', branch, '--path', 'env', '--interval', '10m', '--resync', '10m',
      '--listen', '127.0.0.1:0', '--state', join(home, state), '--grace', '5s',
    ];
    const dev = spawnRun(cleanup, args('dev.json'), { cwd: home, env, stopSignal: 'SIGKILL' });
    await Promise.race([dev.url, dev.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${dev.out()}`)))]);

    const prod = spawnRun(cleanup, args('prod.json'), { cwd: home, env, stopSignal: 'SIGKILL' });
    const ended = await Promise.race([prod.exit, prod.url.then(() => 'started' as const)]);
    expect(ended, prod.out()).toBe(1);
    expect(prod.out()).toContain(`the work folder ${join(home, 'work')} is in use by another govops run (process ${dev.child.pid}`);
    expect(prod.out()).toContain(join(home, 'dev.json'));
    expect(prod.out()).toContain('--workdir');

    // the same daemon started again (its earlier process killed) takes its folder back
    dev.child.kill('SIGKILL');
    await dev.exit;
    const again = spawnRun(cleanup, args('dev.json'), { cwd: home, env, stopSignal: 'SIGKILL' });
    await Promise.race([again.url, again.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${again.out()}`)))]);
  });
});
