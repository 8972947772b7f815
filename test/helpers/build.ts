/**
 * vitest globalSetup: compile src/ to dist/ (and the schemas to validators) before the suite, so CLI tests run
 * the real `govops` binary built from the current sources (never a stale build). A compile error fails the run.
 *
 * The build is skipped only when a successful build is newer than every source: `npm run build` (and so
 * `npm install`'s `prepare`) and this setup write `dist/.build-stamp` after a build that passed, and the stamp
 * is fresh while no file or folder under src/ or schemas/ (an edit, an added, removed or renamed file), no
 * tsconfig.json and no build script is newer than it. A failed build removes the stamp, so the next run builds
 * (and fails) again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP = 'dist/.build-stamp';
/** What the build reads besides src/: the schemas (generated validators), its config and its scripts. */
const SOURCES = ['src', 'schemas', 'tsconfig.json', 'scripts/build-validators.mjs', 'scripts/build-done.mjs'];

/** The newest mtime (ms) of the paths and everything below them (a missing path counts as nothing). */
export function newestMtime(paths: readonly string[]): number {
  let newest = 0;
  const visit = (p: string): void => {
    const st = statSync(p);
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
  };
  for (const p of paths) if (existsSync(p)) visit(p);
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
  return newestMtime(SOURCES.map((p) => join(root, p))) <= stamp;
}

function step(args: string[], what: string): void {
  const res = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`build failed (${what} exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
}

export default function setup(): void {
  if (process.env.GOVOPS_TEST_REBUILD !== '1' && buildIsFresh()) return;
  const startedAt = new Date();
  rmSync(STAMP, { force: true });
  step(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], 'tsc');
  // the schemas as generated validators, then the bin made executable and the stamp (as `npm run build` does);
  // stamped with the time the build started: a source saved during the build is newer, so it is built next time.
  step(['scripts/build-validators.mjs'], 'scripts/build-validators.mjs');
  step(['scripts/build-done.mjs', startedAt.toISOString()], 'scripts/build-done.mjs');
}
