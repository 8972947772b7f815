/**
 * `govops state list|show|forget|adopt` (after Terraform `state list|show|rm|import`): read and edit what govops
 * manages, under the state lock. This file only declares the commands; the work is in state-action.ts, loaded
 * when one of them runs.
 */
import type { Command } from 'commander';
import { addConnectionOptions, type ConnectionFlags } from '../connection-options.js';
import { addSecretOptions, type SecretFlags } from '../secret-options.js';
import { stateOption } from '../state-option.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface StateFlags {
  state: string;
}

export interface AdoptFlags extends StateFlags, ConnectionFlags, SecretFlags {
  id: string;
}

export interface MigrateFlags extends StateFlags {
  to: string;
  toKey?: string;
  force?: boolean;
}

const NAME_HELP = 'Kind/name (e.g. Integration/finance-warehouse), or a name when only one kind has it';

export function register(program: Command): void {
  const state = program
    .command('state')
    .description(COMMAND_SUMMARIES.state.description);

  state
    .command('list')
    .description('managed resources: kind/name, live id, type, origin, revision and time last applied')
    .addOption(stateOption())
    .action(async (flags: StateFlags, command: Command) => {
      const { listAction } = await import('./state-action.js');
      await listAction(flags, command);
    });

  state
    .command('show')
    .description('one managed resource as recorded (secret paths, never values or fingerprints)')
    .argument('<name>', NAME_HELP)
    .addOption(stateOption())
    .action(async (name: string, flags: StateFlags, command: Command) => {
      const { showAction } = await import('./state-action.js');
      await showAction(name, flags, command);
    });

  state
    .command('forget')
    .description('stop managing a resource without deleting it: the next plan shows it as adoptable (or leaves it alone without a manifest)')
    .argument('<name>', NAME_HELP)
    .addOption(stateOption())
    .action(async (name: string, flags: StateFlags, command: Command) => {
      const { forgetAction } = await import('./state-action.js');
      await forgetAction(name, flags, command);
    });

  state
    .command('migrate')
    .description('copy the whole state to another backend (file -> PostgreSQL or back), under both locks, and verify the copy')
    .addOption(stateOption('the state to copy from: a file path or a postgres:// URL (env GOVOPS_STATE_URL)'))
    .requiredOption('--to <path|url>', 'where to copy it: a file path or a postgres:// URL')
    .option('--to-key <name>', "the state key at --to when it is a database (default: the URL's #fragment, else --state-key, else default)")
    .option('--force', 'replace a target that already holds a state (refused without it)')
    .action(async (flags: MigrateFlags, command: Command) => {
      const { migrateAction } = await import('./state-migrate-action.js');
      await migrateAction(flags, command);
    });

  const adopt = state
    .command('adopt')
    .description('manage the live resource ID as the manifest NAME (when its natural key is ambiguous); the next apply records it as an adoption')
    .argument('<name>', NAME_HELP)
    .argument('[paths...]', 'manifest files or folders holding NAME, or - for a YAML stream on standard input (default: .)')
    .requiredOption('--id <id>', 'the live id of the resource to adopt')
    .addOption(stateOption());
  addSecretOptions(adopt);
  addConnectionOptions(adopt).action(async (name: string, paths: string[], flags: AdoptFlags, command: Command) => {
    const { adoptAction } = await import('./state-action.js');
    await adoptAction(name, paths, flags, command);
  });
}
