/**
 * vitest globalSetup: compile src/ to dist/ (and the schemas to validators) before the suite, so CLI tests run
 * the real `govops` binary built from the current sources (never a stale build). A compile error fails the run.
 *
 * The build is skipped only when a successful build is newer than every source (scripts/build-fresh.mjs, as
 * `prepare` does): `npm run build` (and so
 * `npm install`'s `prepare`) and this setup write `dist/.build-stamp` after a build that passed, and the stamp
 * is fresh while no file or folder under src/ or schemas/ (an edit, an added, removed or renamed file), no
 * tsconfig.json and no build script is newer than it. A failed build removes the stamp, so the next run builds
 * (and fails) again.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { STAMP, buildIsFresh } from '../../scripts/build-fresh.mjs';

export { STAMP, buildIsFresh, newestMtime } from '../../scripts/build-fresh.mjs';

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
