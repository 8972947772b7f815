/**
 * What a repository's author writes cannot make the Git source run a program or hand out the Git token
 * (security finding: the token reached a git-lfs server named in the repository). Filter drivers and hooks
 * are configured here the way a host configures them (a global config file, the operator's GIT_CONFIG_* pairs);
 * each would write its environment to a log folder if it ran. None may run, on any git command govops runs,
 * and GOVOPS_GIT_TOKEN is in the environment of `git fetch` only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitSource } from '../../src/sources/git.js';
import { silentLogger } from '../../src/log.js';
import { createRepo } from './gitrepo.js';

const TOKEN = 'ghp_filterT0kenValue9';
let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const POINTER = 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12\n';

/** A commit whose attributes select filter drivers for its manifests (directly, through a macro, as LFS does). */
async function hostileRepo() {
  const repo = await createRepo();
  cleanups.push(repo.cleanup);
  const sha = await repo.commit({
    '.gitattributes': '[attr]lfsmacro filter=lfs diff=lfs merge=lfs -text\nm/*.yaml filter=evil\nm/evil.yaml filter=lfs\nm/macro.yaml lfsmacro\n',
    '.lfsconfig': '[lfs]\n\turl = http://127.0.0.1:9/lfs\n',
    'm/a.yaml': 'a: 1\n',
    'm/evil.yaml': POINTER,
    'm/macro.yaml': POINTER,
  });
  return { repo, sha };
}

/** A work folder with a log folder and a global config whose filter driver and hooks would record their environment. */
async function hostileHost() {
  const dir = await mkdtemp(join(tmpdir(), 'govops-gitfilter-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const log = join(dir, 'log');
  const hooks = join(dir, 'hooks');
  await mkdir(log);
  await mkdir(hooks);
  const record = (what: string) => `env > '${log}/${what}-'$$`;
  for (const hook of ['post-checkout', 'reference-transaction', 'pre-auto-gc']) {
    await writeFile(join(hooks, hook), `#!/bin/sh\n${record(hook)}\nexit 0\n`);
    await chmod(join(hooks, hook), 0o755);
  }
  const global = join(dir, 'gitconfig');
  await writeFile(global, [
    '[core]', `\thooksPath = ${hooks}`,
    // (quoted: `;` starts a comment in a config file)
    '[filter "lfs"]', `\tsmudge = "${record('lfs-smudge')}; cat"`, `\tclean = "${record('lfs-clean')}; cat"`, '\trequired = true',
  ].join('\n') + '\n');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    GIT_CONFIG_GLOBAL: global,
    GIT_CONFIG_NOSYSTEM: '1',
    GOVOPS_GIT_TOKEN: TOKEN,
    // The operator's pairs (passed through by the adapter): another driver, by another name.
    GIT_CONFIG_COUNT: '3',
    GIT_CONFIG_KEY_0: 'filter.evil.smudge',
    GIT_CONFIG_VALUE_0: `${record('evil-smudge')}; cat`,
    GIT_CONFIG_KEY_1: 'filter.evil.clean',
    GIT_CONFIG_VALUE_1: `${record('evil-clean')}; cat`,
    GIT_CONFIG_KEY_2: 'filter.evil.required',
    GIT_CONFIG_VALUE_2: 'true',
  };
  return { dir, log, env };
}

describe('GitSource against a repository selecting filter drivers', () => {
  it('checks out the committed bytes: no filter driver or hook runs, nothing sees the token', async () => {
    const { repo, sha } = await hostileRepo();
    const host = await hostileHost();
    const source = new GitSource({ url: repo.bare, workdir: join(host.dir, 'w'), intervalMs: 60_000, logger: silentLogger(), env: host.env });
    cleanups.push(() => source.stop());
    await source.start();
    const rev = source.current();
    expect(rev?.id).toBe(sha);
    const ran = await readdir(host.log);
    const leaked = (await Promise.all(ran.map((f) => readFile(join(host.log, f), 'utf8')))).some((e) => e.includes(TOKEN));
    expect({ ran, leaked }).toEqual({ ran: [], leaked: false });
    expect(await readFile(join(rev!.root, 'm/evil.yaml'), 'utf8')).toBe(POINTER);
    expect(await readFile(join(rev!.root, 'm/macro.yaml'), 'utf8')).toBe(POINTER);
    expect(await readFile(join(rev!.root, 'm/a.yaml'), 'utf8')).toBe('a: 1\n');

    // A new commit (fetch into the existing cache, a second worktree): still nothing runs.
    await repo.commit({ 'm/a.yaml': 'a: 2\n' });
    await source.refresh();
    expect(await readFile(join(source.current()!.root, 'm/a.yaml'), 'utf8')).toBe('a: 2\n');
    expect(await readdir(host.log)).toEqual([]);
  });

  it('puts the token and the ask-pass script in the environment of git fetch only', async () => {
    const { repo, sha } = await hostileRepo();
    const host = await hostileHost();
    // A `git` first on PATH that records each command govops runs and whether it carried the token.
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = join(host.dir, 'bin');
    const calls = join(host.dir, 'calls.txt');
    await mkdir(bin);
    await writeFile(join(bin, 'git'), `#!/bin/sh\nprintf '%s token=%s askpass=%s\\n' "$1" "\${GOVOPS_GIT_TOKEN:+yes}" "\${GIT_ASKPASS:+yes}" >> '${calls}'\nexec '${realGit}' "$@"\n`);
    await chmod(join(bin, 'git'), 0o755);
    const source = new GitSource({
      url: repo.bare,
      workdir: join(host.dir, 'w'),
      intervalMs: 60_000,
      logger: silentLogger(),
      env: { ...host.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
    cleanups.push(() => source.stop());
    await source.start();
    expect(source.current()?.id).toBe(sha);
    const lines = (await readFile(calls, 'utf8')).trim().split('\n');
    expect(lines).toContain('fetch token=yes askpass=yes');
    expect(lines.some((l) => l.startsWith('worktree '))).toBe(true);
    expect(lines.filter((l) => !l.startsWith('fetch ')).filter((l) => !l.endsWith(' token= askpass='))).toEqual([]);
  });
});
