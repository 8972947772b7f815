/**
 * vitest globalSetup: compile src/ to dist/ (and the schemas to validators) before the suite, so CLI tests run the real `govops` binary built
 * from the current sources (never a stale build). A compile error fails the run.
 */
import { spawnSync } from 'node:child_process';

export default function setup(): void {
  const res = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], {
    encoding: 'utf8',
  });
  if (res.status !== 0) {
    throw new Error(`build failed (tsc exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
  }
  // the schemas as generated validators (as `npm run build` does)
  const gen = spawnSync(process.execPath, ['scripts/build-validators.mjs'], { encoding: 'utf8' });
  if (gen.status !== 0) {
    throw new Error(`build failed (scripts/build-validators.mjs exit ${gen.status}):\n${gen.stdout}\n${gen.stderr}`);
  }
}
