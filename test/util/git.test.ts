/** The one Git adapter: environment allow-list, timeout, abort, exit codes as results, redacted stderr. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitError, gitEnv, gitOk, runGit } from '../../src/util/git.js';
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
});
