#!/usr/bin/env node
/**
 * The `govops` command (package.json `bin`, the image's /usr/local/bin/govops). scripts/build-bin.mjs builds this
 * module, root-help.ts and what it imports (commander stays a package) into one CommonJS file, dist/cli/govops.cjs,
 * so that `govops --help` and `govops --version` are answered without starting Node's ES module loader: 71 → ~63 ms
 * of CPU against ~52 for `node -e 0` (issue #26; docs/decisions.md "The govops command is one CommonJS file").
 * Everything else is main.ts, imported as it is. (tsc also emits this module as dist/cli/bin.js, which does the same
 * as an ES module.)
 */
import { asksRootOnly, rootHelpProgram } from './root-help.js';

if (asksRootOnly(process.argv.slice(2))) rootHelpProgram().parse(process.argv);
else void import('./main.js');
