#!/usr/bin/env node
// Build step after tsc: the `govops` command, dist/cli/govops.cjs (package.json `bin`), from src/cli/bin.ts.
// One CommonJS file holding bin.ts and the root's help (src/cli/root-help.ts and its imports), so that
// `govops --help` / `--version` load no ES module (docs/decisions.md "The govops command is one CommonJS file").
// Packages (commander) stay packages, required from node_modules; main.js stays the ES module tsc built, imported
// when any other command runs. import.meta.url is this file's URL: it sits in dist/cli/ as the modules it holds
// did (version.ts reads ../../package.json, commander.ts requires from there), and a test checks the output.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({
  absWorkingDir: root,
  entryPoints: ['src/cli/bin.ts'],
  outfile: 'dist/cli/govops.cjs',
  bundle: true,
  packages: 'external',
  external: ['./main.js'],
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  define: { 'import.meta.url': 'import_meta_url' },
  inject: ['scripts/import-meta-url.js'],
  legalComments: 'none',
  logLevel: 'warning',
});
