/**
 * The govops command tree: global options and every command's declaration (commander only, no action
 * module). main.ts parses process.argv with it; `govops healthcheck` parses a running daemon's argv with it.
 */
import { Command, Option } from 'commander';
import { COMMANDS } from './commands/index.js';
import { LOG_LEVELS } from './log-levels.js';
import { GOVOPS_VERSION } from './version.js';
import { resolveStateFlags, stateKeyOption } from './state-option.js';


export function buildProgram(): Command {
  const program = new Command('govops')
    .description('GitOps for the data-governance service: integrations and webhooks as YAML in Git')
    .version(GOVOPS_VERSION)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
    .addOption(
      new Option('--log-level <level>', 'log level (default: env GOVOPS_LOG_LEVEL, else warn; info for run and sandbox)').choices([
        ...LOG_LEVELS,
      ]),
    )
    .option('--no-color', 'disable colored output (color is used only on a TTY)')
    .addOption(stateKeyOption())
    .hook('preAction', (_root, action) => resolveStateFlags(action))
    // after a usage error (a misspelled flag...), commander's did-you-mean and this line, not the whole help
    .showHelpAfterError("(add --help for the command's options)");
  for (const register of COMMANDS) register(program);
  return program;
}
