/**
 * `govops export --out DIR`: every live integration, webhook and data source as manifests, ready to commit
 * (after Terraform's `plan -generate-config-out`). The work is in export-action.ts, loaded when the command runs.
 */
import { Option, type Command } from '../commander.js';
import { addConnectionOptions, type ConnectionFlags } from '../connection-options.js';
import type { SecretFlags } from '../secret-options.js';
import { collect } from './plan.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface ExportFlags extends ConnectionFlags, SecretFlags {
  out: string;
  layout: 'resource' | 'kind';
  kind?: string[];
  select?: string[];
  state?: string;
  force?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('export')
    .description(COMMAND_SUMMARIES.export.description)
    .requiredOption('--out <dir>', 'folder to write the manifests and the env template to (created when missing)')
    .addOption(new Option('--layout <layout>', 'one file per resource, or one per kind').choices(['resource', 'kind']).default('resource'))
    .option('--kind <kind>', 'only this kind: Integration, Webhook or DataSource (repeatable, or comma-separated)', collect)
    .option('--select <name>', 'only this resource: its manifest name or Kind/name, globs * ? allowed (repeatable)', collect)
    .option('--state <path>', 'also record the exported resources in this govops state file as adopted (the next apply records them)')
    .option('--force', 'replace files that exist in the folder')
    .option('--secret-env-prefix <prefix>', 'the prefix of the fromEnv variable names export writes (env GOVOPS_SECRET_ENV_PREFIX; default GOVOPS_SECRET_)');
  addConnectionOptions(cmd).action(async (flags: ExportFlags, command: Command) => {
    const { exportAction } = await import('./export-action.js');
    await exportAction(flags, command);
  });
}
