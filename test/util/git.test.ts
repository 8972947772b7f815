/** The one Git adapter: environment allow-list, timeout, abort, exit codes as results, redacted stderr. */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RenderError, runRender } from '../../src/sources/render.js';
import { GitError, absoluteEntries, filterDrivers, gitEnv, gitOk, mergeDrivers, noFilterConfig, noMergeDriverConfig, runGit, withConfig } from '../../src/util/git.js';
import { registerSecrets } from '../../src/util/redact.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'govops-gitadapter-'));
  dirs.push(d);
  return d;
};

describe('runGit', () => {
  it('passes only allowed variables to git and what it runs (no GOVOPS_TOKEN, no cloud credentials)', async () => {
    const cwd = await tmp();
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, GOVOPS_TOKEN: 'operator-token', AWS_SECRET_ACCESS_KEY: 'aws', GOVOPS_GIT_TOKEN: 'git-token', HTTPS_PROXY: 'http://proxy:3128' };
    const r = await runGit(['-c', 'alias.showenv=!env', 'showenv'], { cwd, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('HTTPS_PROXY=http://proxy:3128');
    expect(r.stdout).toContain('GIT_TERMINAL_PROMPT=0');
    for (const name of ['GOVOPS_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'GOVOPS_GIT_TOKEN']) expect(r.stdout).not.toContain(`${name}=`);
    // What a caller adds on purpose gets through (the Git source's ask-pass token).
    const withToken = await runGit(['-c', 'alias.showenv=!env', 'showenv'], { cwd, env, extraEnv: { GOVOPS_GIT_TOKEN: 'git-token' } });
    expect(withToken.stdout).toContain('GOVOPS_GIT_TOKEN=git-token');
    expect(gitEnv({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a', GIT_CONFIG_VALUE_0: 'b', EDITOR: 'vim' })).toEqual({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a', GIT_CONFIG_VALUE_0: 'b' });
  });

  it('finds git and the render command in the absolute PATH folders only: a program a commit put in the working folder is never run', async () => {
    const cwd = await tmp();
    for (const name of ['git', 'render-tool']) {
      await writeFile(join(cwd, name), '#!/bin/sh\necho FROM-THE-REPOSITORY\n');
      await chmod(join(cwd, name), 0o755);
    }
    const env = { PATH: `.:${process.env.PATH}::bin`, HOME: process.env.HOME };
    expect(gitEnv(env).PATH).toBe(process.env.PATH);
    expect(absoluteEntries(`:.:bin:/usr/bin::/bin:`)).toBe('/usr/bin:/bin');
    const r = await runGit(['--version'], { cwd, env });
    expect(r.stdout).toMatch(/^git version/);
    const rendered = await runRender({ argv: ['render-tool'], timeoutMs: 10_000 }, cwd, { env }).then(
      (out) => out,
      (err: unknown) => err,
    );
    expect(rendered).toBeInstanceOf(RenderError);
    expect((rendered as RenderError).message).toMatch(/ENOENT/);
  });

  it('a render folder missing from the revision is named as such, not reported as a render command that is not installed', async () => {
    const cwd = await tmp();
    const err = await runRender({ argv: ['sh', '-c', 'true'], timeoutMs: 10_000 }, join(cwd, 'overlays', 'prod')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).message).toMatch(/overlays\/prod.* does not exist/);
    expect((err as RenderError).message).not.toMatch(/spawn sh ENOENT/);
  });

  it('a non-zero exit is a result; gitOk turns it into a GitError with the first stderr line', async () => {
    const cwd = await tmp();
    const r = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd });
    expect(r.code).not.toBe(0);
    await expect(gitOk(['rev-parse', 'HEAD'], { cwd })).rejects.toMatchObject({ name: 'GitError', reason: 'exit', message: expect.stringMatching(/^git rev-parse failed \(exit \d+\): fatal: not a git repository/) });
  });

  it('kills a command that runs past its timeout, and one whose signal aborts', async () => {
    const cwd = await tmp();
    await expect(runGit(['-c', 'alias.wait=!sleep 5', 'wait'], { cwd, timeoutMs: 200 })).rejects.toMatchObject({ reason: 'timeout' });
    const abort = new AbortController();
    const p = runGit(['-c', 'alias.wait=!sleep 5', 'wait'], { cwd, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    await expect(p).rejects.toBeInstanceOf(GitError);
  });

  it('a timeout or an abort kills what git started too (a remote helper waiting on a server that never answers is not left behind)', async () => {
    const cwd = await tmp();
    await runGit(['init', '--bare', '--quiet'], { cwd });
    const sockets: Socket[] = [];
    const server = createServer((s) => void sockets.push(s)); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hung.git`;
    const running = async (marker: string): Promise<boolean> => {
      for (const pid of await readdir('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (cmdline.includes(marker)) return true;
      }
      return false;
    };
    // The group is sent SIGKILL and the command ends at once (its pipes closed, not waited for); the kernel ends the
    // processes a moment later (on a busy machine, after the check): gone within a bound, far below the 31 s sleep.
    const goneSoon = async (marker: string): Promise<boolean> => {
      const until = performance.now() + 10_000;
      while (await running(marker)) {
        if (performance.now() > until) return false;
        await new Promise((r) => setTimeout(r, 20));
      }
      return true;
    };
    try {
      await expect(runGit(['fetch', url, '+refs/heads/main:refs/x'], { cwd, timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'timeout' });
      expect(await goneSoon(url)).toBe(true);
      const abort = new AbortController();
      const p = runGit(['-c', 'alias.wait=!sleep 31.4159', 'wait'], { cwd, signal: abort.signal });
      setTimeout(() => abort.abort(), 300);
      await expect(p).rejects.toMatchObject({ reason: 'aborted' });
      expect(await goneSoon('31.4159')).toBe(true);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it('a process that left the group holding the output open (ssh ControlPersist, a setsid helper): the timeout still ends the command', async () => {
    // The group kill missed it and the command waited for its pipes to close, for as long as it lived: the Git source
    // (one command at a time) stopped fetching for good.
    const cwd = await tmp();
    const pids = async (marker: string): Promise<number[]> => {
      const found: number[] = [];
      for (const pid of await readdir('/proc')) {
        if (/^\d+$/.test(pid) && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes(marker)) found.push(Number(pid));
      }
      return found;
    };
    try {
      const guard = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 20_000).unref());
      const started = Date.now();
      const err = await Promise.race([runGit(['-c', 'alias.escape=!setsid sleep 271.828 & sleep 60', 'escape'], { cwd, timeoutMs: 1000 }).catch((e: unknown) => e), guard]);
      expect(err).toMatchObject({ name: 'GitError', reason: 'timeout' });
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      for (const pid of await pids('271.828')) process.kill(pid, 'SIGKILL');
    }
  }, 30_000);

  it('output past the limit stops git and says so (reason output, not "cannot run git")', async () => {
    const cwd = await tmp();
    const err = await runGit(['-c', "alias.flood=!head -c 200000 /dev/zero", 'flood'], { cwd, maxBuffer: 10_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'GitError', reason: 'output', message: 'git -c: wrote more than 10000 bytes (stopped)' });
  });

  it('stderr and error messages pass the one redactor (tokens in URLs, registered secrets)', async () => {
    const cwd = await tmp();
    registerSecrets('registered-git-secret');
    const r = await runGit(['ls-remote', 'https://user:url-token-123@127.0.0.1:1/registered-git-secret.git'], { cwd, timeoutMs: 20_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).not.toContain('url-token-123');
    expect(r.stderr).not.toContain('registered-git-secret');
    await expect(gitOk(['ls-remote', 'https://user:url-token-123@127.0.0.1:1/x.git'], { cwd })).rejects.toSatisfy(
      (e: Error) => !e.message.includes('url-token-123'),
    );
  });

  it('appends its configuration after the operator\'s GIT_CONFIG_* pairs (later pairs win); a count that is not a number is refused', async () => {
    expect(withConfig({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'x' }, [['c.d', 'y']])).toEqual({
      GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'x', GIT_CONFIG_KEY_1: 'c.d', GIT_CONFIG_VALUE_1: 'y',
    });
    expect(withConfig({}, [['c.d', '']])).toEqual({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'c.d', GIT_CONFIG_VALUE_0: '' });
    expect(() => withConfig({ GIT_CONFIG_COUNT: ' 1' }, [])).toThrow(/GIT_CONFIG_COUNT is not a number/);
    // The operator's own hooksPath is overridden: no hook runs.
    const cwd = await tmp();
    const r = await runGit(['-c', 'alias.cfg=!git config core.hooksPath; git config core.fsmonitor', 'cfg'], {
      cwd, env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: '/operator/hooks' },
    });
    expect(r.stdout).toBe('/dev/null\nfalse\n');
  });

  it('names every configured filter driver (a name may hold dots) and empties each', () => {
    expect(filterDrivers('filter.lfs.process\0filter.lfs.required\0filter.a.b=c.smudge\0filter.x\0')).toEqual(['lfs', 'a.b=c']);
    expect(filterDrivers('')).toEqual([]);
    expect(noFilterConfig(['lfs'])).toEqual([
      ['filter.lfs.clean', ''], ['filter.lfs.smudge', ''], ['filter.lfs.process', ''], ['filter.lfs.required', 'false'],
    ]);
  });

  it('names every configured merge driver (not merge.<setting>) and makes each run false', () => {
    expect(mergeDrivers('merge.ours.driver\0merge.ours.name\0merge.renameLimit\0merge.a.b.driver\0filter.lfs.process\0')).toEqual(['ours', 'a.b']);
    expect(noMergeDriverConfig(['ours'])).toEqual([['merge.ours.driver', 'false']]);
  });

  it('noFilters: a merge-tree runs no merge driver the host configures, whatever the attributes select', async () => {
    const d = await tmp();
    const log = join(d, 'ran');
    const env = { PATH: process.env.PATH, HOME: d, GIT_CONFIG_NOSYSTEM: '1' };
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: d, env, encoding: 'utf8' }).trim();
    git('init', '-q', '--initial-branch=main');
    await writeFile(join(d, 'a.yaml'), 'a\nb\nc\n');
    git('add', '-A');
    git('commit', '-qm', 'base');
    git('checkout', '-q', '-b', 'pr');
    // the pull request selects a merge driver by name, and changes the file
    await writeFile(join(d, '.gitattributes'), 'a.yaml merge=host\n');
    await writeFile(join(d, 'a.yaml'), 'a\nb\nc-pr\n');
    git('add', '-A');
    git('commit', '-qm', 'pr');
    git('checkout', '-q', 'main');
    await writeFile(join(d, 'a.yaml'), 'a-main\nb\nc\n');
    git('commit', '-qam', 'main');
    git('checkout', '-q', 'pr'); // the pull request's checkout: its .gitattributes are the work tree's
    // a driver of that name configured on the host (the operator's pairs)
    const withDriver = { ...env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'merge.host.driver', GIT_CONFIG_VALUE_0: `echo ran >> '${log}'; cp %B %A` };
    const safe = await runGit(['merge-tree', '--write-tree', 'pr', 'main'], { cwd: d, env: withDriver, noFilters: true });
    expect(safe.code).toBe(1); // the driver ran `false`: a conflict, nothing of the host's ran
    await expect(readFile(log, 'utf8')).rejects.toThrow(/ENOENT/);
    // Without it the host's driver runs (what the test would miss otherwise).
    expect((await runGit(['merge-tree', '--write-tree', 'pr', 'main'], { cwd: d, env: withDriver })).code).toBe(0);
    expect(await readFile(log, 'utf8')).toContain('ran');
  });

  it('noFilters: a checkout runs no driver the host configures, in any scope, whatever the attributes select', async () => {
    const d = await tmp();
    const log = join(d, 'ran');
    const env = { PATH: process.env.PATH, HOME: d, GIT_CONFIG_NOSYSTEM: '1' };
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: d, env });
    git('init', '-q');
    await writeFile(join(d, '.gitattributes'), 'a.yaml filter=one\nb.yaml filter=two.dotted\n');
    await writeFile(join(d, 'a.yaml'), 'a\n');
    await writeFile(join(d, 'b.yaml'), 'b\n');
    git('add', '-A');
    git('commit', '-qm', 'x');
    // A driver in the repository's configuration, another in the operator's pairs (a process filter, by a dotted name).
    git('config', 'filter.one.smudge', `echo one >> '${log}'; cat`);
    git('config', 'filter.one.required', 'true');
    const withDrivers = { ...env, GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'filter.two.dotted.process', GIT_CONFIG_VALUE_0: `sh -c "echo two >> '${log}'; exit 1"`, GIT_CONFIG_KEY_1: 'filter.two.dotted.required', GIT_CONFIG_VALUE_1: 'true' };
    const out = join(d, 'out');
    await mkdir(out);
    await gitOk(['checkout-index', '-a', `--prefix=${out}/`], { cwd: d, env: withDrivers, noFilters: true });
    expect(await readFile(join(out, 'a.yaml'), 'utf8')).toBe('a\n');
    expect(await readFile(join(out, 'b.yaml'), 'utf8')).toBe('b\n');
    await expect(readFile(log, 'utf8')).rejects.toThrow(/ENOENT/);
    // Without it the drivers run (what the test would miss otherwise).
    await rm(out, { recursive: true });
    await runGit(['checkout-index', '-a', `--prefix=${out}/`], { cwd: d, env: withDrivers });
    expect(await readFile(log, 'utf8')).toContain('one');
  });
});
