#!/usr/bin/env node
// Build step after tsc: dist/cli/main.cjs, the command line (src/cli/main.ts and every module of ours it imports,
// statically or on demand) as one CommonJS file, which the `govops` command (src/cli/bin.ts) runs with the compiled
// code scripts/build-code-cache.mjs records for it (src/cli/code-cache.ts). Why: Node 20 has no compile cache of its
// own for ES modules, and compiling our modules again in every process was a third to a half of a short command's
// CPU (docs/decisions.md "The command line runs from compiled code").
// - Each module keeps its own `import.meta.url`: the URL of the file tsc writes for it under dist/, so a path a
//   module reads beside itself (../../schemas/, ./validators/..., ../govops.cjs) resolves as it does from there.
// - Packages stay packages, required from node_modules, except those Node can only import (ES modules without a
//   `require` entry: p-queue, chokidar, @octokit/rest...): required from CommonJS, their default export would be
//   their namespace, so they are bundled, and esbuild does the interop. So is a package the bundle would not find as
//   the same file from dist/cli/ (nested under another package's node_modules).
// - Any warning fails the build (an `import.meta` left over would be empty in CommonJS).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');

/**
 * Whether `specifier`, imported from `importer`, resolves for require() to a CommonJS file that the bundle, in
 * dist/cli/, requires as the same file (a package nested under another package's node_modules is not found from
 * there: it is bundled).
 */
function requirable(specifier, importer) {
  let file;
  try {
    file = createRequire(importer).resolve(specifier);
    if (createRequire(join(root, 'dist/cli/main.cjs')).resolve(specifier) !== file) return false;
  } catch {
    return false;
  }
  if (!file.startsWith('/')) return true; // a built-in module
  if (file.endsWith('.mjs')) return false;
  if (/\.(cjs|json|node)$/.test(file)) return true;
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    return pkg.type !== 'module';
  }
  return true;
}

const packagesAsPackages = {
  name: 'packages-as-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point' || args.path.startsWith('node:')) return undefined;
      return requirable(args.path, args.importer) ? { path: args.path, external: true } : undefined;
    });
  },
};

const ownModuleUrls = {
  name: 'own-module-urls',
  setup(b) {
    b.onLoad({ filter: /\/src\/.*\.ts$/ }, (args) => {
      const rel = relative(src, args.path).split(sep).join('/').replace(/\.ts$/, '.js');
      const text = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', `__govopsModuleUrl(${JSON.stringify(rel)})`);
      return { contents: text, loader: 'ts' };
    });
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/main.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  plugins: [packagesAsPackages, ownModuleUrls],
  banner: {
    js:
      '// Built by scripts/build-main.mjs from src/cli/main.ts. Do not edit.\n' +
      "var __govopsModuleUrl = (rel) => require('node:url').pathToFileURL(require('node:path').join(__dirname, '..', rel)).href;",
  },
  legalComments: 'none',
  logLevel: 'silent',
});
for (const w of result.warnings) console.error(`build-main: ${w.text} (${w.location?.file}:${w.location?.line})`);
if (result.warnings.length) process.exit(1);
