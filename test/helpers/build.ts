/**
 * vitest globalSetup: make dist/ match src/ before the suite, so CLI tests run the real `govops` binary built
 * from the current sources (never a stale build). A compile error fails the run.
 *
 * The build is skipped only when a successful build is newer than every source: `npm run build` (and so
 * `npm install`'s `prepare`) and this setup write `dist/.build-stamp` after a build that passed, and the stamp
 * is fresh while no file or folder under src/ (an edit, an added, removed or renamed file) and no tsconfig.json
 * is newer than it. A failed build removes the stamp, so the next run builds (and fails) again.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP = 'dist/.build-stamp';

/** The newest mtime (ms) of a folder, everything below it, and the extra files. */
export function newestMtime(dir: string, extra: readonly string[] = []): number {
  let newest = 0;
  const visit = (p: string): void => {
    const st = statSync(p);
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
  };
  visit(dir);
  for (const f of extra) newest = Math.max(newest, statSync(f).mtimeMs);
  return newest;
}

/** Is the last successful build at least as new as every source? */
export function buildIsFresh(root = '.'): boolean {
  let stamp: number;
  try {
    stamp = statSync(join(root, STAMP)).mtimeMs;
  } catch {
    return false;
  }
  return newestMtime(join(root, 'src'), [join(root, 'tsconfig.json')]) <= stamp;
}

export default function setup(): void {
  if (process.env.GOVOPS_TEST_REBUILD !== '1' && buildIsFresh()) return;
  const startedAt = new Date();
  rmSync(STAMP, { force: true });
  const res = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], {
    encoding: 'utf8',
  });
  if (res.status !== 0) {
    throw new Error(`build failed (tsc exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
  }
  // Stamped with the time the build started: a source saved during the build is newer, so it is built next time.
  writeFileSync(STAMP, '');
  utimesSync(STAMP, startedAt, startedAt);
}
