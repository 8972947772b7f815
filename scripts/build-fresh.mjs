// Is the last successful build newer than every source? `npm run build` writes dist/.build-stamp after a build
// that passed (scripts/build-done.mjs); the stamp is fresh while no file or folder under src/ or schemas/ (an
// edit, an added, removed or renamed file), no tsconfig.json and no build script is newer than it.
// Used by `prepare` (scripts/prepare.mjs) and the tests' build (test/helpers/build.ts).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP = 'dist/.build-stamp';
/** What the build reads besides src/: the schemas (generated validators), its config and its scripts. */
export const SOURCES = ['src', 'schemas', 'tsconfig.json', 'package.json', 'scripts/build-validators.mjs', 'scripts/build-bin.mjs', 'scripts/import-meta-url.js', 'scripts/build-main.mjs', 'scripts/build-code-cache.mjs', 'scripts/code-cache-record.mjs', 'scripts/build-done.mjs'];

/** The newest mtime (ms) of the paths and everything below them (a missing path counts as nothing). */
export function newestMtime(paths) {
  let newest = 0;
  const visit = (p) => {
    const st = statSync(p);
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
  };
  for (const p of paths) if (existsSync(p)) visit(p);
  return newest;
}

/** Is the last successful build at least as new as every source? */
export function buildIsFresh(root = '.') {
  let stamp;
  try {
    stamp = statSync(join(root, STAMP)).mtimeMs;
  } catch {
    return false;
  }
  return newestMtime(SOURCES.map((p) => join(root, p))) <= stamp;
}
