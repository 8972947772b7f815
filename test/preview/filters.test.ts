/**
 * `govops preview` of a pull request whose attributes select filter drivers configured on the CI host (as
 * git-lfs does once installed): the preview reads the committed bytes and no driver runs, neither the smudge
 * of the copies it checks out nor the clean of the work tree's files `git status` compares.
 */
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGovops } from '../helpers/cli.js';
import { gitIn, initRepo } from '../helpers/git.js';
import { lakehouseManifest } from '../helpers/manifests.js';

const OPERATOR = 'operator-api-token-filters-7c6b';

/** A lakehouse named `name` at https://<name>.example.com, its token from GOVOPS_SECRET_LAKE. */
const lake = (name: string): string => lakehouseManifest({ name, host: `${name}.example.com`, httpPath: '/sql/1', tokenEnv: 'GOVOPS_SECRET_LAKE' });

/** git without the machine's system configuration (the test sets up its own filters). */
const git = (dir: string, ...args: string[]): string => gitIn(dir, args, { ...process.env, GIT_CONFIG_NOSYSTEM: '1' });

describe('govops preview with filter drivers on the host', () => {
  let dir: string;
  let repo: string;
  let log: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'govops-preview-filters-'));
    repo = path.join(dir, 'repo');
    log = path.join(dir, 'log');
    await mkdir(path.join(repo, 'm'), { recursive: true });
    await mkdir(log);
    initRepo(repo, git);
    await writeFile(path.join(repo, 'm', 'base.yaml'), lake('base'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    // The pull request: its attributes select drivers (one by a macro), and an LFS configuration names a host.
    await writeFile(path.join(repo, '.gitattributes'), '[attr]lfsmacro filter=lfs -text\nm/*.yaml filter=evil\nm/pr.yaml lfsmacro\n');
    await writeFile(path.join(repo, '.lfsconfig'), '[lfs]\n\turl = http://127.0.0.1:9/lfs\n');
    await writeFile(path.join(repo, 'm', 'pr.yaml'), lake('pr'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
    // Stat-dirty work-tree files: `git status` must compare their content (through the clean filter, if any).
    const old = new Date('2001-01-01T00:00:00Z');
    for (const f of ['base.yaml', 'pr.yaml']) await utimes(path.join(repo, 'm', f), old, old);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the committed bytes; no smudge or clean filter runs', async () => {
    const record = (what: string) => `env > '${log}/${what}-'$$; cat`;
    const global = path.join(dir, 'gitconfig');
    await writeFile(global, `[filter "lfs"]\n\tsmudge = "${record('lfs-smudge')} | sed 's/pr.example.com/smudged.example.com/'"\n\tclean = "${record('lfs-clean')}"\n\trequired = true\n`);
    const r = await runGovops(['preview', 'm', '--base', 'main'], {
      cwd: repo,
      env: {
        GOVOPS_URL: undefined,
        GOVOPS_TOKEN: OPERATOR,
        HOME: dir,
        GIT_CONFIG_GLOBAL: global,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_COUNT: '3',
        GIT_CONFIG_KEY_0: 'filter.evil.smudge',
        GIT_CONFIG_VALUE_0: `${record('evil-smudge')} | sed 's/base.example.com/smudged.example.com/'`,
        GIT_CONFIG_KEY_1: 'filter.evil.clean',
        GIT_CONFIG_VALUE_1: record('evil-clean'),
        GIT_CONFIG_KEY_2: 'filter.evil.required',
        GIT_CONFIG_VALUE_2: 'true',
      },
    });
    expect(await readdir(log)).toEqual([]);
    expect(r.code, r.stderr + r.stdout).toBe(2); // the pull request adds an integration
    expect(r.stdout).toContain('pr.example.com');
    expect(r.stdout).not.toContain('smudged.example.com');
    expect(r.stdout + r.stderr).not.toContain(OPERATOR);
  });
});
