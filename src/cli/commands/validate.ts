/** `govops validate [PATH...]`: every problem in every manifest file, offline. The work is in validate-action.ts. */
import type { Command } from 'commander';
import { addSecretOptions, type SecretFlags } from '../secret-options.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface ValidateOptions extends SecretFlags {
  strict?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('validate')
    .description(COMMAND_SUMMARIES.validate.description)
    .argument('[paths...]', 'files or folders to check, or - for a multi-document YAML stream on standard input (default: .)')
    .option('--strict', 'every warning is an error (plain-literal credentials, unknown fields, a webhook url that is not a URL...)');
  addSecretOptions(cmd).action(async (paths: string[], opts: ValidateOptions, command: Command) => {
      const { validateAction } = await import('./validate-action.js');
      await validateAction(paths, opts, command);
    });
}
