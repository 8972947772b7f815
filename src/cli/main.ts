/**
 * The govops command line, as the `govops` command (bin.ts) loads it for everything but the root's own help and
 * version. Each command lives in src/cli/commands/<name>.ts, which only declares it
 * (name, arguments, options); its action loads src/cli/commands/<name>-action.ts on demand, so
 * `govops --help` and each command load only the modules they need. The command tree is in program.ts.
 * When the first argument names a command (`govops validate ...`), only the root and that command's
 * declaration are built (the others cannot take part in the parse); anything else (`--help`, `help`, a global
 * option first, a misspelled command) builds the whole tree (`govops --help` alone never gets here: bin.ts
 * answers it from the commands' summaries, root-help.ts).
 */
import type { Command } from 'commander';
import { commandLoader } from './commands/by-name.js';
import { dropOutputWhenReaderLeaves } from './closed-output.js';
import { dropEmptyOptionVariables } from './empty-env.js';

async function program(): Promise<Command> {
  const load = commandLoader(process.argv[2]);
  if (!load) return (await import('./program.js')).buildProgram();
  const [{ rootProgram }, register] = await Promise.all([import('./root.js'), load()]);
  const root = rootProgram();
  register(root);
  return root;
}

/**
 * An error nothing caught (a bug, or an `error` event no listener took) ends the process with exit code 1, as Node
 * would, but reported as any fatal error: through the redactor and printable. Node's own report writes the error's
 * message and stack to stderr as they are, and a service's message can hold a secret it echoed.
 */
const crash = (err: unknown): void => {
  void import('./fatal.js')
    .then(({ reportFatal }) => reportFatal(err), () => undefined)
    .finally(() => process.exit(1));
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

dropOutputWhenReaderLeaves(crash);
dropEmptyOptionVariables();

program()
  .then((p) => p.parseAsync(process.argv))
  // the error line's module (and its helpers) only when there is an error
  .catch(async (err: unknown) => {
    process.exitCode = (await import('./fatal.js')).reportFatal(err);
  });
