/** A real Git repository in a test's temp folder: git run there (throws on failure), and a repository made ready. */
import { spawnSync } from 'node:child_process';

/** Run git in `dir`; its trimmed stdout. `env`, when given, is the whole environment of the command. */
export function gitIn(dir: string, args: readonly string[], env?: NodeJS.ProcessEnv): string {
  const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8', ...(env ? { env } : {}) });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Run git in `dir` (the environment of the test process). */
export function git(dir: string, ...args: string[]): string {
  return gitIn(dir, args);
}

/** `git init` on branch main, with a committer identity (a CI machine may have none). */
export function initRepo(dir: string, run: (dir: string, ...args: string[]) => string = git): void {
  run(dir, 'init', '-q', '-b', 'main');
  run(dir, 'config', 'user.email', 'ci@example.com');
  run(dir, 'config', 'user.name', 'ci');
}

/**
 * A new repository in a temp folder (`prefix`) whose `main` holds a manifests folder `m` with a README only: the base
 * a pull request's manifests are previewed against.
 */
export async function manifestsBaseRepo(prefix: string): Promise<string> {
  const { mkdir, mkdtemp, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const repo = await mkdtemp(path.join(tmpdir(), prefix));
  initRepo(repo);
  await mkdir(path.join(repo, 'm'));
  await writeFile(path.join(repo, 'm', 'README.md'), 'manifests\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  return repo;
}
