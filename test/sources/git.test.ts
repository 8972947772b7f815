import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { GitSource } from '../../src/sources/git.js';
import { registerSecrets } from '../../src/util/redact.js';
import { redactText, redactUrl } from '../../src/sources/redact.js';
import { jittered } from '../../src/sources/timer.js';
import type { Revision } from '../../src/sources/types.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { createRepo } from './gitrepo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setup(opts: { intervalMs?: number; path?: string; url?: string; env?: NodeJS.ProcessEnv } = {}) {
  const repo = await createRepo();
  cleanups.push(repo.cleanup);
  const workdir = await mkdtemp(join(tmpdir(), 'govops-gitwork-'));
  cleanups.push(() => rm(workdir, { recursive: true, force: true }));
  const fetches: boolean[] = [];
  const revisions: Revision[] = [];
  const logs: string[] = [];
  const sink = new Writable({ write(chunk, _e, cb) { logs.push(String(chunk)); cb(); } });
  const source = new GitSource({
    url: opts.url ?? repo.bare,
    branch: 'main',
    path: opts.path ?? '.',
    workdir,
    intervalMs: opts.intervalMs ?? 60_000,
    logger: createLogger({ destination: sink, level: 'debug' }),
    env: opts.env,
    hooks: { onFetch: (_s, ok) => void fetches.push(ok) },
  });
  source.onRevision((r) => revisions.push(r));
  cleanups.push(() => source.stop());
  return { repo, source, workdir, fetches, revisions, logs };
}

describe('GitSource', () => {
  it('clones, checks out origin/<branch> detached per commit, and sees a new commit on refresh()', async () => {
    const { repo, source, revisions, fetches } = await setup({ path: 'manifests' });
    const sha1 = await repo.commit({ 'manifests/a.yaml': 'one\n' });
    await source.start();
    expect(revisions.map((r) => r.id)).toEqual([sha1]);
    expect(revisions[0]!.paths).toEqual(['manifests']);
    expect(await readFile(join(revisions[0]!.root, 'manifests/a.yaml'), 'utf8')).toBe('one\n');
    await source.refresh(); // nothing new: no new revision
    expect(revisions).toHaveLength(1);
    const sha2 = await repo.commit({ 'manifests/a.yaml': 'two\n' });
    await source.refresh();
    expect(revisions.map((r) => r.id)).toEqual([sha1, sha2]);
    // The old revision's folder is still there (the daemon may still need it) until retain() drops it.
    expect(await readFile(join(revisions[0]!.root, 'manifests/a.yaml'), 'utf8')).toBe('one\n');
    expect(await readFile(join(revisions[1]!.root, 'manifests/a.yaml'), 'utf8')).toBe('two\n');
    await source.retain([sha2]);
    expect(existsSync(revisions[0]!.root)).toBe(false);
    expect(existsSync(revisions[1]!.root)).toBe(true);
    expect(source.current()?.id).toBe(sha2);
    expect(fetches.every(Boolean)).toBe(true);
  });

  it('a checkout that fails after a good fetch is a failed fetch (govops_git_fetch_failures_total counts it, the alert on it fires)', async () => {
    const { repo, source, workdir, fetches, revisions } = await setup();
    await repo.commit({ 'a.yaml': 'one' });
    await source.start();
    await repo.commit({ 'a.yaml': 'two' });
    // the revisions' folder made a file: `git worktree add` fails (as on a full disk), the fetch itself went through
    await rm(join(workdir, 'revs'), { recursive: true, force: true });
    await writeFile(join(workdir, 'revs'), 'not a folder');
    await source.refresh();
    expect(revisions).toHaveLength(1);
    expect(source.health().ok).toBe(false);
    expect(fetches).toEqual([true, false]);
  });

  it('keeps a retained older revision while newer ones come and go', async () => {
    const { repo, source, revisions } = await setup();
    const good = await repo.commit({ 'a.yaml': 'good' });
    await source.start();
    await repo.commit({ 'a.yaml': 'bad1' });
    await source.refresh();
    await repo.commit({ 'a.yaml': 'bad2' });
    await source.refresh();
    await source.retain([good]);
    const left = await readdir(join(revisions[0]!.root, '..'));
    expect(left.sort()).toEqual([good, revisions[2]!.id].sort());
  });

  it('a checkout cut short (its git command killed at the timeout) is checked out again, never published half empty nor refused as a locked worktree', async () => {
    const { repo, source, workdir, revisions } = await setup();
    await repo.commit({ 'a.yaml': 'one\n' });
    await source.start();
    const sha2 = await repo.commit({ 'a.yaml': 'two\n', 'b.yaml': 'b\n' });
    // What a `worktree add` killed after it registered the folder leaves: the folder's .git, none of the files.
    const cache = join(workdir, 'repo.git');
    execFileSync('git', ['fetch', '-q', 'origin', '+refs/heads/main:refs/remotes/origin/main'], { cwd: cache });
    execFileSync('git', ['worktree', 'add', '-q', '--no-checkout', '--detach', join(workdir, 'revs', sha2), sha2], { cwd: cache });
    // and its registration still locked as "initializing" (git removes that lock only when the add finishes)
    await writeFile(join(cache, 'worktrees', sha2, 'locked'), 'initializing');
    await source.refresh();
    expect(revisions.at(-1)?.id).toBe(sha2);
    expect(await readFile(join(revisions.at(-1)!.root, 'a.yaml'), 'utf8')).toBe('two\n');
    expect(await readFile(join(revisions.at(-1)!.root, 'b.yaml'), 'utf8')).toBe('b\n');
  });

  it('a fetch cut short while it updated the branch ref (its lock file left behind) does not block every later fetch', async () => {
    const { repo, source, workdir, revisions } = await setup();
    await repo.commit({ 'a.yaml': 'one\n' });
    await source.start();
    const sha2 = await repo.commit({ 'a.yaml': 'two\n' });
    const cache = join(workdir, 'repo.git');
    // What a `git fetch` killed at its timeout while updating refs leaves: the ref's lock, the packed-refs lock.
    await writeFile(join(cache, 'refs', 'remotes', 'origin', 'main.lock'), '');
    await writeFile(join(cache, 'packed-refs.lock'), '');
    await source.refresh();
    expect(source.error()).toBeUndefined();
    expect(revisions.at(-1)?.id).toBe(sha2);
  });

  it('fetches the branch tip alone (no history), and follows a new commit and a rewind to a commit it never fetched', async () => {
    const { repo, source, workdir, revisions } = await setup();
    const first = await repo.commit({ 'a.yaml': '1\n' });
    await repo.commit({ 'a.yaml': '2\n' });
    const third = await repo.commit({ 'a.yaml': '3\n' });
    await source.start();
    const cache = join(workdir, 'repo.git');
    const inCache = (...args: string[]): string => execFileSync('git', args, { cwd: cache, encoding: 'utf8' }).trim();
    // A repository with years of history: its first fetch (and the cache on disk) is the tip's tree, not every commit.
    expect(inCache('rev-parse', '--is-shallow-repository')).toBe('true');
    expect(inCache('rev-list', '--count', 'refs/remotes/origin/main')).toBe('1');
    expect(revisions.map((r) => r.id)).toEqual([third]);
    const fourth = await repo.commit({ 'a.yaml': '4\n' });
    await source.refresh();
    expect(revisions.at(-1)?.id).toBe(fourth);
    // A force-push back to the first commit, which the cache never had.
    execFileSync('git', ['push', '-q', '-f', 'origin', `${first}:refs/heads/main`], { cwd: repo.work });
    await source.refresh();
    expect(source.error()).toBeUndefined();
    expect(revisions.at(-1)?.id).toBe(first);
    expect(await readFile(join(revisions.at(-1)!.root, 'a.yaml'), 'utf8')).toBe('1\n');
  });

  it('fetches on its interval', async () => {
    const { repo, source, revisions } = await setup({ intervalMs: 100 });
    await repo.commit({ 'a.yaml': '1' });
    await source.start();
    const sha = await repo.commit({ 'a.yaml': '2' });
    const end = Date.now() + 5000;
    while (source.current()?.id !== sha && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(revisions.at(-1)?.id).toBe(sha);
  });

  it('coalesces concurrent refresh() calls', async () => {
    const { repo, source, fetches } = await setup();
    await repo.commit({ 'a.yaml': '1' });
    await source.start();
    const before = fetches.length;
    const calls = [source.refresh(), source.refresh(), source.refresh(), source.refresh()];
    await Promise.all(calls);
    expect(fetches.length - before).toBe(1); // one look for the four calls, and it did happen
    expect(new Set(calls).size).toBe(1);
    // Calls made while a look is under way join one more look (whenever the first one finishes).
    const first = source.refresh();
    await new Promise((r) => setImmediate(r));
    const later = [source.refresh(), source.refresh(), source.refresh()];
    await Promise.all([first, ...later]);
    expect(fetches.length - before).toBe(3);
    expect(fetches.every(Boolean)).toBe(true);
  });

  it('a failed fetch is reported (metric hook, log) without credentials, and retried', async () => {
    const { source, fetches, logs } = await setup({
      url: 'https://user:s3cr3t-t0ken@127.0.0.1:1/org/repo.git',
      env: { ...process.env, GOVOPS_GIT_TOKEN: 'another-s3cr3t' },
    });
    await source.start();
    expect(fetches).toEqual([false]);
    expect(source.current()).toBeUndefined();
    expect(source.error()).toBeTruthy();
    const text = logs.join('');
    expect(text).toContain('git fetch failed');
    expect(text).not.toContain('s3cr3t');
    expect(JSON.stringify(source.describe())).not.toContain('s3cr3t');
    await source.refresh();
    expect(fetches).toEqual([false, false]);
  });
});

describe('redaction and jitter', () => {
  it('removes userinfo from URLs and known secrets from text', () => {
    expect(redactUrl('https://x-access-token:abc@github.com/o/r.git')).toBe('https://***@github.com/o/r.git');
    expect(redactUrl('git@github.com:o/r.git')).toBe('git@github.com:o/r.git');
    // a password holding an unencoded `@`: the userinfo ends at the last `@` before the host (WHATWG URL), so all of it goes
    expect(redactUrl('https://user:p@ss@host/repo')).toBe('https://***@host/repo');
    expect(redactUrl('https://user:p@s@s@host')).toBe('https://***@host');
    // a password holding an unencoded `/` (no parser reads it so; git prints the URL as it is): dropped too
    expect(redactUrl('https://user:pa/ss@host/repo')).toBe('https://***@host/repo');
    expect(redactText("fatal: unable to access 'https://user:pa/ss@127.0.0.1:9/x.git/': URL using bad/illegal format")).toBe(
      "fatal: unable to access 'https://***@127.0.0.1:9/x.git/': URL using bad/illegal format",
    );
    // a password of digits only (above 65535: no port) before its `/`, and without a host at all: git prints both as they are
    expect(redactUrl('https://user:123456/pa@host/repo')).toBe('https://***@host/repo');
    expect(redactUrl('https://user:123456/path')).toBe('https://***@/path');
    expect(redactText("fatal: unable to access 'https://user:123456/pa@127.0.0.1:9/x.git/': URL using bad/illegal format or missing URL")).toBe(
      "fatal: unable to access 'https://***@127.0.0.1:9/x.git/': URL using bad/illegal format or missing URL",
    );
    expect(redactText("fatal: unable to access 'https://user:123456/path/': URL using bad/illegal format or missing URL")).toBe(
      "fatal: unable to access 'https://***@/path/': URL using bad/illegal format or missing URL",
    );
    expect(redactText("fatal: unable to access 'https://user:p@ss@host/r/'")).toBe("fatal: unable to access 'https://***@host/r/'");
    expect(redactText("fatal: unable to access 'https://u:p@h/r/': refused")).toBe("fatal: unable to access 'https://***@h/r/': refused");
    registerSecrets('tok3n');
    expect(redactText('auth tok3n failed')).toBe('auth [redacted] failed');
  });

  it('jitters the interval by ±10%', () => {
    expect(jittered(1000, () => 0)).toBe(900);
    expect(jittered(1000, () => 1)).toBe(1100);
    expect(jittered(1000, () => 0.5)).toBe(1000);
  });
});

void silentLogger;
