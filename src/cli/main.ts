#!/usr/bin/env node
/**
 * The govops command line. Each command lives in src/cli/commands/<name>.ts, which only declares it
 * (name, arguments, options); its action loads src/cli/commands/<name>-action.ts on demand, so
 * `govops --help` and each command load only the modules they need. The command tree is in program.ts.
 * When the first argument names a command (`govops validate ...`), only the root and that command's
 * declaration are built (the others cannot take part in the parse); anything else (`--help`, `help`, a global
 * option first, a misspelled command) builds the whole tree.
 */
import type { Command } from 'commander';
import { commandLoader } from './commands/by-name.js';

async function program(): Promise<Command> {
  const load = commandLoader(process.argv[2]);
  if (!load) return (await import('./program.js')).buildProgram();
  const [{ rootProgram }, register] = await Promise.all([import('./root.js'), load()]);
  const root = rootProgram();
  register(root);
  return root;
}

program()
  .then((p) => p.parseAsync(process.argv))
  // the error line's module (and its helpers) only when there is an error
  .catch(async (err: unknown) => {
    process.exitCode = (await import('./fatal.js')).reportFatal(err);
  });
