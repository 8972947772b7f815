#!/usr/bin/env node
/**
 * The `govops` command (package.json `bin`, the image's /usr/local/bin/govops). scripts/build-bin.mjs builds this
 * module, root-help.ts and what it imports (commander stays a package) into one CommonJS file, dist/cli/govops.cjs,
 * so that `govops --help` and `govops --version` are answered without starting Node's ES module loader: 71 → ~63 ms
 * of CPU against ~52 for `node -e 0` (issue #26; docs/decisions.md "The govops command is one CommonJS file").
 * Everything else is main.ts: built as one CommonJS file, dist/cli/main.cjs (scripts/build-main.mjs), and run from
 * the compiled code the build recorded for it (code-cache.ts; docs/decisions.md "The command line runs from
 * compiled code"). Without that file (tsc's output alone), main.ts's ES module is imported as it is. (tsc also emits
 * this module as dist/cli/bin.js, which does the same as an ES module.) Every command but those two first sets the
 * V8 flags of v8-flags.ts.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { useCodeCache } from './code-cache.js';
import { asksRootOnly, rootHelpProgram } from './root-help.js';
import { setCommandV8Flags } from './v8-flags.js';

const bundle = fileURLToPath(new URL('./main.cjs', import.meta.url));

if (asksRootOnly(process.argv.slice(2))) rootHelpProgram().parse(process.argv);
else {
  setCommandV8Flags(process.argv[2]);
  if (existsSync(bundle)) {
    useCodeCache(fileURLToPath(new URL('../..', import.meta.url)));
    createRequire(import.meta.url)(bundle);
  } else void import('./main.js');
}
