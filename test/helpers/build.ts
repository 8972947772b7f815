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
import { readFileSync, rmSync } from 'node:fs';
import { STAMP, buildIsFresh } from '../../scripts/build-fresh.mjs';

export { STAMP, buildIsFresh, newestMtime } from '../../scripts/build-fresh.mjs';

/**
 * The steps of package.json's `build` script (`tsc -p tsconfig.json && node scripts/X.mjs && ...`), as node
 * arguments: the suite builds exactly what `npm run build` builds (without npm's start-up).
 */
export function buildSteps(script: string): string[][] {
  return script.split('&&').map((part) => {
    const words = part.trim().split(/\s+/);
    if (words[0] === 'tsc') return ['node_modules/typescript/bin/tsc', ...words.slice(1)];
    if (words[0] === 'node' && words.length >= 2) return words.slice(1);
    throw new Error(`package.json build: a step the suite cannot run without npm: ${part.trim()}`);
  });
}

function step(args: string[]): void {
  const res = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`build failed (${args[0]} exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
}

export default function setup(): void {
  if (process.env.GOVOPS_TEST_REBUILD !== '1' && buildIsFresh()) return;
  const startedAt = new Date();
  rmSync(STAMP, { force: true });
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { build: string } };
  for (const args of buildSteps(pkg.scripts.build)) {
    // the last step stamps the build with the time it started: a source saved during the build is newer, so it is
    // built next time
    step(args[0] === 'scripts/build-done.mjs' ? [...args, startedAt.toISOString()] : args);
  }
}
