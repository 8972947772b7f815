/**
 * Git facts for `govops preview`, through the one Git adapter (src/util/git.ts): the revision, the
 * merge-base with a base ref, the files changed between it and HEAD, uncommitted files, and a read-only
 * copy of a commit's manifest files in a temp folder, made from Git objects through a private index
 * file (the repository's index, HEAD and work tree are never touched). The commands that check out or compare
 * work-tree content (checkout-index, status) run with every filter driver configured on the host emptied
 * (`noFilters`): a pull request's .gitattributes selects none (git-lfs would fetch from its .lfsconfig's host).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UserError } from '../errors.js';
import { GitError, runGit, type GitResult } from '../util/git.js';

export type { GitResult };

/** Preview's git commands: a minute each at most. */
const PREVIEW_GIT_TIMEOUT_MS = 60_000;

export async function git(args: string[], opts: { cwd: string; env?: Record<string, string>; input?: string; noFilters?: boolean }): Promise<GitResult> {
  try {
    return await runGit(args, {
      cwd: opts.cwd,
      timeoutMs: PREVIEW_GIT_TIMEOUT_MS,
      noFilters: opts.noFilters === true,
      ...(opts.env ? { extraEnv: opts.env } : {}),
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
  } catch (err) {
    if (err instanceof GitError && err.reason === 'spawn') throw new UserError(err.message, 'install git, or run without --base');
    throw err instanceof GitError ? new UserError(err.message) : err;
  }
}

/** Checks out or compares work-tree content: see `noFilters`. */
const CONTENT_COMMANDS = new Set(['checkout-index', 'status', 'merge-tree']);

async function gitOk(args: string[], cwd: string, env?: Record<string, string>, input?: string): Promise<string> {
  const r = await git(args, { cwd, noFilters: CONTENT_COMMANDS.has(args[0]!), ...(env ? { env } : {}), ...(input !== undefined ? { input } : {}) });
  if (r.code !== 0) throw new UserError(`git ${args[0]} failed: ${r.stderr.trim().split('\n')[0] ?? ''}`);
  return r.stdout;
}

export interface RepoInfo {
  /** Absolute top folder of the work tree. */
  top: string;
  /** Short SHA of HEAD (absent in a repository without commits). */
  head?: string;
}

/** The work tree `cwd` is in, or undefined when it is not in one (or git is missing). */
export async function repoInfo(cwd: string): Promise<RepoInfo | undefined> {
  let top: GitResult;
  try {
    top = await git(['rev-parse', '--show-toplevel'], { cwd });
  } catch {
    return undefined;
  }
  if (top.code !== 0) return undefined;
  const head = await git(['rev-parse', '--short', 'HEAD'], { cwd });
  const info: RepoInfo = { top: top.stdout.trim() };
  if (head.code === 0) info.head = head.stdout.trim();
  return info;
}

/** Full SHA of the merge-base of HEAD and `ref`. */
export async function mergeBase(cwd: string, ref: string): Promise<string> {
  if (ref.startsWith('-')) throw new UserError(`--base: "${ref}" is not a revision`);
  const verify = await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd });
  if (verify.code !== 0) throw new UserError(`--base: unknown revision "${ref}"`, 'fetch it first (e.g. git fetch origin main, or checkout with fetch-depth: 0)');
  const r = await git(['merge-base', 'HEAD', verify.stdout.trim()], { cwd });
  if (r.code !== 0) throw new UserError(`--base: HEAD and "${ref}" have no common ancestor`, 'fetch more history (fetch-depth: 0)');
  return r.stdout.trim();
}

/**
 * The tree of merging `tip` into `head`, computed from Git objects only (`git merge-tree --write-tree`, Git 2.38+:
 * no work tree, index or ref is touched): `tree` is its id and `conflicts` the paths (relative to the top) that
 * conflict (their content in the tree has conflict markers). Undefined when this git cannot do it.
 */
export async function mergedTree(top: string, head: string, tip: string): Promise<{ tree: string; conflicts: string[] } | undefined> {
  const r = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', head, tip], { cwd: top, noFilters: true });
  // 0: clean, 1: conflicts; anything else (an older git's usage error): not available
  if (r.code !== 0 && r.code !== 1) return undefined;
  const [tree, ...conflicts] = r.stdout.split('\0').filter((p) => p !== '');
  if (tree === undefined || !/^[0-9a-f]{40,64}$/.test(tree)) return undefined;
  return { tree, conflicts: [...new Set(conflicts)] };
}

export interface ChangedFile {
  /** A, M, D, R (renamed: `from` is the old name), C, T. */
  status: string;
  file: string;
  from?: string;
}

/** Files under `pathspecs` (relative to the top) that differ between the commits `from` and `to`. */
export async function changedFiles(top: string, from: string, to: string, pathspecs: string[]): Promise<ChangedFile[]> {
  const out = await gitOk(['diff', '--name-status', '-z', '-M', '--no-ext-diff', '--no-textconv', from, to, '--', ...pathspecs], top);
  const parts = out.split('\0').filter((p) => p !== '');
  const files: ChangedFile[] = [];
  for (let i = 0; i < parts.length; ) {
    const status = parts[i++]!;
    const letter = status[0]!;
    if (letter === 'R' || letter === 'C') {
      const from = parts[i++]!;
      files.push({ status: letter, from, file: parts[i++]! });
    } else files.push({ status: letter, file: parts[i++]! });
  }
  return files;
}

/** Files under `pathspecs` with uncommitted changes (staged, unstaged or untracked), relative to the top. */
export async function uncommittedFiles(top: string, pathspecs: string[]): Promise<string[]> {
  const out = await gitOk(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', '--', ...pathspecs], top);
  return out
    .split('\0')
    .filter((p) => p.length > 3)
    .map((p) => p.slice(3))
    .sort();
}

/**
 * Check out the files of `rev` under `pathspecs` into a new temp folder (mirroring the repository
 * layout) using a private index. Returns the folder; call `cleanup` when done.
 */
export async function checkoutTree(
  top: string,
  rev: string,
  pathspecs: string[],
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'govops-preview-'));
  const cleanup = () => rm(tmp, { recursive: true, force: true });
  try {
    const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
    const dir = path.join(tmp, 'tree');
    await mkdir(dir);
    await gitOk(['read-tree', rev], top, env);
    const list = await gitOk(['ls-files', '-z', '--', ...pathspecs], top, env);
    if (list) await gitOk(['checkout-index', '-z', '--stdin', `--prefix=${dir}${path.sep}`], top, env, list);
    return { dir, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Full SHA of a commit-ish (`HEAD`), or a UserError. */
export async function commitOf(cwd: string, rev: string): Promise<string> {
  const r = await git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd });
  if (r.code !== 0) throw new UserError(`no commit at ${rev}`, 'commit the manifests first: the preview reads commits, not the work tree');
  return r.stdout.trim();
}
