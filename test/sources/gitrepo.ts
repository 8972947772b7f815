/** Real Git repositories in temp dirs for tests: a bare "remote" and a working clone that commits. */
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
    },
  }).trim();
}

export interface TestRepo {
  base: string;
  bare: string;
  work: string;
  /** Write files (path → content; null deletes), commit and push. Returns the commit SHA. */
  commit(files: Record<string, string | null>, message?: string, branch?: string): Promise<string>;
  cleanup(): Promise<void>;
}

export async function createRepo(): Promise<TestRepo> {
  const base = await mkdtemp(join(tmpdir(), 'govops-git-'));
  const bare = join(base, 'remote.git');
  const work = join(base, 'work');
  git(base, 'init', '--bare', '--initial-branch=main', bare);
  git(base, 'init', '--initial-branch=main', work);
  git(work, 'remote', 'add', 'origin', bare);
  return {
    base,
    bare,
    work,
    async commit(files, message = 'change', branch = 'main') {
      const current = git(work, 'symbolic-ref', '--short', 'HEAD');
      if (current !== branch) git(work, 'checkout', '-B', branch);
      for (const [path, content] of Object.entries(files)) {
        const full = join(work, path);
        if (content === null) await rm(full, { force: true });
        else {
          await mkdir(dirname(full), { recursive: true });
          await writeFile(full, content);
        }
      }
      git(work, 'add', '-A');
      git(work, 'commit', '--allow-empty', '-q', '-m', message);
      git(work, 'push', '-q', 'origin', `HEAD:refs/heads/${branch}`);
      return git(work, 'rev-parse', 'HEAD');
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
