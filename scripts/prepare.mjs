#!/usr/bin/env node
// `prepare`: build, unless the last build is newer than every source. npm runs `prepare` on `npm install` and
// `npm ci`, and again on the first `npx govops` in a clone (npx links the clone into its cache to find the bin,
// and the link's `prepare` runs): that one finds the build of `npm install` fresh and starts at once.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildIsFresh } from './build-fresh.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
if (buildIsFresh(root)) {
  console.error('govops: dist/ is newer than every source, not rebuilt (npm run build forces a build)');
} else {
  const npm = process.env.npm_execpath;
  const r = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  process.exit(r.status ?? 1);
}
