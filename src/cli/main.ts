#!/usr/bin/env node
/**
 * The govops command line. Each command lives in src/cli/commands/<name>.ts, which only declares it
 * (name, arguments, options); its action loads src/cli/commands/<name>-action.ts on demand, so
 * `govops --help` and each command load only the modules they need. The command tree is in program.ts.
 */
import { buildProgram } from './program.js';
import { reportFatal } from './fatal.js';

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    process.exitCode = reportFatal(err);
  });
