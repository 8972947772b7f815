/**
 * One work folder, one daemon. docs/environments.md runs one daemon per environment; on one host with their state
 * files in one folder (`--state /srv/govops/dev.json`, `--state /srv/govops/prod.json`) both took the default work
 * folder beside them (`/srv/govops/work`), and each removed the other's revision folders (it keeps only its own): the
 * other's resyncs then failed ("cannot read the revision folder ...: ENOENT") while /status said in-sync.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { claimWorkdir, WORKDIR_CLAIM } from '../../src/daemon/workdir-claim.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { ManualClock } from '../helpers/clock.js';
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

describe('the work-folder claim is exclusive (two daemons started at the same moment)', () => {
  // Two daemons of two states on this host, told apart by their pids (both alive); the pid of a crashed one is dead.
  const live = new Set([4_000_001, 4_000_002, 4_000_003]);
  const alive = (pid: number): boolean => live.has(pid);

  it('two claims racing for one folder: exactly one wins, the other is refused naming it', async () => {
    for (let round = 0; round < 10; round++) {
      const work = await cleanup.tmp('govops-claim-race-');
      const results = await Promise.allSettled([
        claimWorkdir(work, join(work, '..', 'dev.json'), { pid: 4_000_001, alive }),
        claimWorkdir(work, join(work, '..', 'prod.json'), { pid: 4_000_002, alive }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled'), `round ${round}`).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect((refused.reason as Error).message).toMatch(/is in use by another govops run \(process 400000[12]/);
      // what the folder records is the winner's, and only it
      const winner = results.indexOf(results.find((r) => r.status === 'fulfilled')!);
      expect(JSON.parse(await readFile(join(work, WORKDIR_CLAIM), 'utf8'))).toMatchObject({ pid: 4_000_001 + winner });
      expect((await readdir(work)).filter((f) => f.startsWith(WORKDIR_CLAIM))).toEqual([WORKDIR_CLAIM]);
    }
  });

  it("a crashed daemon's record is taken over by one of two claims racing for it, not both", async () => {
    for (let round = 0; round < 10; round++) {
      const work = await cleanup.tmp('govops-claim-stale-');
      await writeFile(join(work, WORKDIR_CLAIM), `${JSON.stringify({ pid: 4_999_999, hostname: hostname(), state: '/gone.json' })}\n`);
      const results = await Promise.allSettled([
        claimWorkdir(work, join(work, '..', 'dev.json'), { pid: 4_000_001, alive }),
        claimWorkdir(work, join(work, '..', 'prod.json'), { pid: 4_000_002, alive }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled'), `round ${round}`).toHaveLength(1);
    }
  });

  it('released at shutdown: the next daemon of another state claims the folder; the same state takes its own back', async () => {
    const work = await cleanup.tmp('govops-claim-release-');
    const release = await claimWorkdir(work, join(work, '..', 'dev.json'), { pid: 4_000_001, alive });
    await expect(claimWorkdir(work, join(work, '..', 'prod.json'), { pid: 4_000_002, alive })).rejects.toThrow(/in use/);
    // the same state again (a second replica of it on this host, or its restart): taken
    const again = await claimWorkdir(work, join(work, '..', 'dev.json'), { pid: 4_000_003, alive });
    await release(); // not the record of 4000001 any more: left alone
    await expect(claimWorkdir(work, join(work, '..', 'prod.json'), { pid: 4_000_002, alive })).rejects.toThrow(/process 4000003/);
    await again();
    const prod = await claimWorkdir(work, join(work, '..', 'prod.json'), { pid: 4_000_002, alive });
    await prod();
    expect(await readdir(work)).toEqual([]);
  });

  it("a lock and a record left by a predecessor with this process's own pid (a container restart) are taken over at once", async () => {
    // In a container the daemon has the same pid at every start, so "is the lock's process alive" said yes for its own
    // dead predecessor: every start after a crash that left `.govops-daemon.lock` waited 5 s before taking it over.
    const work = await cleanup.tmp('govops-claim-samepid-');
    const clock = new ManualClock();
    const gone = (state: string): string => `${JSON.stringify({ pid: 4_000_001, hostname: hostname(), state })}\n`;
    await writeFile(join(work, WORKDIR_CLAIM), gone('/prod.json')); // not a live daemon of another state: our pid
    await writeFile(join(work, `${WORKDIR_CLAIM}.lock`), gone('/prod.json'));
    const t0 = clock.monotonic();
    const release = await clock.runUntil(claimWorkdir(work, join(work, '..', 'dev.json'), { pid: 4_000_001, alive, clock }));
    expect(clock.monotonic() - t0).toBe(0);
    expect(JSON.parse(await readFile(join(work, WORKDIR_CLAIM), 'utf8'))).toMatchObject({ pid: 4_000_001, state: join(work, '..', 'dev.json') });
    await clock.runUntil(release());
    expect(await readdir(work)).toEqual([]);
  });

  it("the lock of a daemon that crashed holding it, taken over by another meanwhile, is not removed under it", async () => {
    // Taking over a stale lock was read-then-remove: daemon A removed the crashed lock and created its own, then B, which
    // had read the crashed lock before, removed A's and created its own; both held the lock and both claimed the folder.
    const work = await cleanup.tmp('govops-claim-takeover-');
    const clock = new ManualClock();
    const lock = join(work, `${WORKDIR_CLAIM}.lock`);
    const record = (pid: number, state: string): string => `${JSON.stringify({ pid, hostname: hostname(), state })}\n`;
    await writeFile(join(work, WORKDIR_CLAIM), record(4_999_999, '/gone.json'));
    await writeFile(lock, record(4_999_999, '/gone.json'));
    let raced = false;
    const aliveB = (pid: number): boolean => {
      if (pid === 4_999_999 && !raced) {
        raced = true; // B has read the crashed lock and judged it stale; before B acts, A takes it over
        rmSync(lock);
        writeFileSync(lock, record(4_000_001, '/dev.json'));
      }
      return alive(pid);
    };
    const b = claimWorkdir(work, join(work, '..', 'prod.json'), { pid: 4_000_002, alive: aliveB, clock });
    const first = await Promise.race([b.then(() => 'claimed', () => 'refused'), clock.untilTimer().then(() => 'waiting')]);
    expect(raced).toBe(true);
    expect(first).toBe('waiting'); // for A's lock
    // A claims the folder (its record replaces the crashed one's) and lets the lock go: B then finds A's record
    writeFileSync(join(work, WORKDIR_CLAIM), record(4_000_001, '/dev.json'));
    rmSync(lock);
    await expect(clock.runUntil(b)).rejects.toThrow(/in use by another govops run \(process 4000001/);
  });

  it('a crash while taking a crashed lock over (its guard left) is taken over too, at once', async () => {
    const work = await cleanup.tmp('govops-claim-guard-');
    const clock = new ManualClock();
    const text = `${JSON.stringify({ pid: 4_999_999, hostname: hostname(), state: '/gone.json', token: 't1' })}\n`;
    await writeFile(join(work, WORKDIR_CLAIM), text);
    await writeFile(join(work, `${WORKDIR_CLAIM}.lock`), text);
    const id = createHash('sha256').update(text).digest('hex').slice(0, 32);
    await writeFile(join(work, `${WORKDIR_CLAIM}.unlock.${id}`), `${JSON.stringify({ pid: 4_999_998, hostname: hostname(), state: '/gone.json', token: 't2' })}\n`);
    const release = await clock.runUntil(claimWorkdir(work, join(work, '..', 'dev.json'), { pid: 4_000_001, alive, clock }));
    expect(clock.monotonic()).toBe(Date.parse('2026-01-01T00:00:00.000Z'));
    await clock.runUntil(release());
    // the crashed guard is gone with the takeover it guarded
    expect(await readdir(work)).toEqual([]);
  });
});
