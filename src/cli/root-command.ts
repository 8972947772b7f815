/**
 * The root command's description, version and global options, without its hooks: what `govops --help` alone
 * shows (root-help.ts), and what root.ts completes. Kept apart from the hooks so the root's help loads none of the
 * state location's modules (errors, the redactor): `--help` 77 → 71 ms of CPU against 52 for `node -e 0` (issue #26).
 */
import { Command, Option } from './commander.js';
import { LOG_LEVELS } from './log-levels.js';
import { GOVOPS_VERSION } from './version.js';
import { DEFAULT_STATE_KEY } from '../state/types.js';

/** `--state-key` / GOVOPS_STATE_KEY: this deployment's state in a PostgreSQL database shared by several. */
export function stateKeyOption(): Option {
  return new Option('--state-key <name>', `the state's name in a PostgreSQL state shared by several deployments (default: ${DEFAULT_STATE_KEY})`).env('GOVOPS_STATE_KEY');
}

/** The root command: description, version and global options; no hook, no subcommand. */
export function rootCommand(): Command {
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
    .addOption(stateKeyOption());
}
