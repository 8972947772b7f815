/**
 * `govops preview --base main` when main moved on after the pull request branched (GitLab's default merge-request
 * pipeline checks out the branch head, not a merge commit): what main changed since, and the daemon applied, is
 * neither drift nor a change merging makes. The comment agrees with `govops plan` on the merged result.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { lakehouseManifest } from '../helpers/manifests.js';
import { git, initRepo } from '../helpers/git.js';

const SECRETS = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-SECRET-tok-5151' };
const lake = (name: string, httpPath: string) => lakehouseManifest({ name, host: `${name}.example.com`, httpPath, tokenEnv: 'GOVOPS_SECRET_LAKE_TOKEN' });

interface PreviewJson {
  exitCode: number;
  changed: boolean;
  base: { ref: string; mergeBase: string; files: Array<{ status: string; file: string }> };
  resources: Array<{ name: string; change?: string; fields: Array<{ path: string }>; live?: { action: string; changes: Array<{ path: string; after?: unknown; fromPr: boolean }> } }>;
  drift: Array<{ name: string }>;
  warnings: Array<{ kind: string; message: string }>;
  markdown: string;
}

describe('govops preview when the base branch moved since the pull request branched', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  let stateDir: string;
  const live = () => ({ GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_LAKE_TOKEN: undefined });
  const write = (file: string, text: string) => writeFile(path.join(repo, 'm', file), text);
  const commit = (msg: string) => {
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', msg);
  };
  const apply = async () => {
    const r = await runGovops(['apply', 'm', '--state', path.join(stateDir, 'state.json')], { cwd: repo, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, ...SECRETS } });
    expect(r.code, r.stderr + r.stdout).toBe(0);
  };
  const preview = async (args: string[] = [], base = 'main'): Promise<PreviewJson> => {
    const r = await runGovops(['preview', 'm', '--base', base, '-o', 'json', ...args], { cwd: repo, env: live() });
    return JSON.parse(r.stdout) as PreviewJson;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-moved-'));
    stateDir = await mkdtemp(path.join(tmpdir(), 'govops-moved-state-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm'));
    await write('a.yaml', lake('a', '/sql/1'));
    await write('b.yaml', lake('b', '/sql/1'));
    commit('base');
    await apply();
    // the pull request branches here and changes b
    git(repo, 'checkout', '-q', '-b', 'pr');
    await write('b.yaml', lake('b', '/sql/pr'));
    commit('pr: b');
    // main moves on: a changes, and the daemon applies it
    git(repo, 'checkout', '-q', 'main');
    await write('a.yaml', lake('a', '/sql/main'));
    commit('main: a');
    await apply();
    git(repo, 'checkout', '-q', 'pr');
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });

  it('what main changed since is not drift, and merging does not revert it', async () => {
    const p = await preview();
    // the pull request's own change only
    expect(p.resources.map((r) => [r.name, r.change, r.live?.action])).toEqual([['b', 'changed', 'update']]);
    expect(p.base.files.map((f) => f.file)).toEqual(['m/b.yaml']);
    // a is at /sql/main in the service and in the merged result: nothing to do, no drift
    expect(p.drift).toEqual([]);
    expect(p.markdown).toContain('| **Drift** | none: the service matches the base revision |');
    expect(p.markdown).not.toContain('Integration/a: update');
    expect(p.markdown).toContain(`; moved on since: merged onto \`${git(repo, 'rev-parse', '--short=7', 'main')}\``);
    expect(p.base.mergeBase).toBe(git(repo, 'merge-base', 'pr', 'main'));
    expect(p.warnings.filter((w) => w.kind === 'base-moved')).toEqual([]);
    expect(p.exitCode).toBe(2);
    // nothing of the repository was touched: still on the branch, clean
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('pr');
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('a pull request that conflicts with main in a manifest: compared with the merge-base, and the comment says so', async () => {
    git(repo, 'checkout', '-q', '-b', 'pr-conflict', 'pr');
    await write('a.yaml', lake('a', '/sql/other'));
    commit('pr: a too');
    try {
      const p = await preview();
      expect(p.base.mergeBase).toBe(git(repo, 'merge-base', 'pr-conflict', 'main'));
      expect(p.warnings.filter((w) => w.kind === 'base-moved').map((w) => w.message)).toEqual([
        'main moved on since this branch left it, and merging it conflicts in m/a.yaml: compared with the merge-base instead, so what main changed since may show as drift or as changes merging reverts (merge or rebase onto main to preview the merged result)',
      ]);
      expect(p.resources.map((r) => [r.name, r.change])).toEqual([['a', 'changed'], ['b', 'changed']]);
      expect(p.markdown).not.toContain('merged onto');
    } finally {
      git(repo, 'checkout', '-q', 'pr');
    }
  });

  it('a removed resource the service does not have: not "stays in the service", with or without --prune', async () => {
    // the base declares `ghost`, never applied (the daemon has not run yet, or its create failed)
    git(repo, 'checkout', '-q', '-b', 'with-ghost', 'main');
    await write('ghost.yaml', lake('ghost', '/sql/1'));
    commit('ghost, not applied');
    git(repo, 'checkout', '-q', '-b', 'pr-ghost');
    await rm(path.join(repo, 'm', 'ghost.yaml'));
    commit('pr: remove ghost');
    try {
      for (const args of [[], ['--prune']]) {
        const p = await preview(args, 'with-ghost');
        expect(p.resources.map((r) => [r.name, r.change, r.live?.action])).toEqual([['ghost', 'removed', 'none']]);
        expect(p.warnings.filter((w) => w.kind === 'not-pruned')).toEqual([]);
        expect(p.markdown).not.toContain('stays in the service');
        expect(p.exitCode).toBe(0);
      }
    } finally {
      git(repo, 'checkout', '-q', 'pr');
    }
  });
});
