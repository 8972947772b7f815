/**
 * The Git revision of the manifests a CLI `plan`/`apply` reads, recorded in the plan and the state:
 * `git rev-parse HEAD` of the work tree holding them, with `-dirty` appended when a manifest file
 * (`*.yaml`/`*.yml`, `.govopsignore`) under the given paths has uncommitted changes or is untracked
 * (ignored files don't count: the state file, generated secrets...). Unknown (undefined) when the
 * paths are not in one Git work tree, the repository has no commit yet, or git is not installed.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { runGit } from '../util/git.js';

const GIT_TIMEOUT_MS = 10_000;

/** stdout, or undefined when git failed or is missing (the revision is then unknown). Through the one Git adapter. */
async function git(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    // `status` may hash work-tree files: with every filter driver of the host emptied (the adapter's `noFilters`).
    const r = await runGit(args, { cwd, timeoutMs: GIT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, extraEnv: { GIT_OPTIONAL_LOCKS: '0' }, noFilters: args[0] === 'status' });
    return r.code === 0 ? r.stdout : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a `git status` path is one the manifest loader reads. */
export function isManifestPath(p: string): boolean {
  return /\.ya?ml$/i.test(p) || path.posix.basename(p) === '.govopsignore';
}

/** Paths named by `git status --porcelain=v1 -z` output (both sides of a rename). */
export function statusPaths(porcelainZ: string): string[] {
  const out: string[] = [];
  const parts = porcelainZ.split('\0').filter((p) => p !== '');
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!;
    out.push(entry.slice(3));
    if (entry[0] === 'R' || entry[0] === 'C') out.push(parts[++i] ?? '');
  }
  return out.filter((p) => p !== '');
}

async function dirOf(p: string): Promise<string | undefined> {
  try {
    return (await stat(p)).isDirectory() ? p : path.dirname(p);
  } catch {
    return undefined;
  }
}

export async function gitRevision(root: string, paths: readonly string[]): Promise<string | undefined> {
  const abs: string[] = [];
  for (const p of paths.length ? paths : ['.']) {
    const real = await realpath(path.resolve(root, p)).catch(() => undefined);
    if (!real) return undefined;
    abs.push(real);
  }
  const tops = new Set<string>();
  for (const p of abs) {
    const dir = await dirOf(p);
    if (!dir) return undefined;
    const top = (await git(dir, ['rev-parse', '--show-toplevel']))?.trim();
    if (!top) return undefined;
    tops.add(top);
  }
  if (tops.size !== 1) return undefined;
  const top = [...tops][0]!;
  const head = (await git(top, ['rev-parse', '--verify', '--quiet', 'HEAD']))?.trim();
  if (!head || !/^[0-9a-f]{40,64}$/.test(head)) return undefined;
  const status = await git(top, [
    'status', '--porcelain=v1', '-z', '--untracked-files=all', '--', ...abs,
  ]);
  if (status === undefined) return head;
  return statusPaths(status).some(isManifestPath) ? `${head}-dirty` : head;
}

/**
 * The revision a CLI `plan`/`apply` of `paths` records: `--revision` when given, else the manifests' Git revision
 * from the working directory. The commands ask for it as they start, so its git calls run while their modules load
 * (the process would otherwise wait for git with nothing to do).
 */
export function revisionFor(paths: readonly string[], flag: string | undefined, root = process.cwd()): Promise<string | undefined> {
  const given = flag?.trim();
  return given ? Promise.resolve(given) : gitRevision(root, paths.length ? paths : ['.']);
}
