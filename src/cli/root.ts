/**
 * The root command of the govops tree: global options and the hooks, no subcommand (program.ts adds every
 * command; main.ts may add only the one it runs).
 */
import { Command, Option } from './commander.js';
import { LOG_LEVELS } from './log-levels.js';
import { GOVOPS_VERSION } from './version.js';
import { resolveStateFlags, stateKeyOption } from './state-option.js';

/** The root command: global options and hooks, no subcommand. */
export function rootProgram(): Command {
  return new Command('govops')
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
}
