#!/usr/bin/env node
// Last build step: the CLI's bin made executable (npx caches its link to it and does not set the mode again
// on a later build, e.g. in a new clone at the same path), then dist/.build-stamp, which says a build passed
// (test/helpers/build.ts rebuilds only when a source is newer). An optional ISO time dates the stamp.
import { chmodSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
for (const bin of Object.values(pkg.bin ?? {})) chmodSync(`${root}${bin}`, 0o755);
const stamp = `${root}dist/.build-stamp`;
writeFileSync(stamp, '');
if (process.argv[2]) {
  const at = new Date(process.argv[2]);
  utimesSync(stamp, at, at);
}
