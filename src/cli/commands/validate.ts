/** `govops validate [PATH...]`: every problem in every manifest file, offline. The work is in validate-action.ts. */
import type { Command } from 'commander';

export interface ValidateOptions {
  strict?: boolean;
}

export function register(program: Command): void {
  program
    .command('validate')
    .description('check manifests offline: YAML, schemas, duplicates, plain-literal credentials (secrets are not resolved)')
    .argument('[paths...]', 'files or folders to check (default: .)')
    .option('--strict', 'plain-literal credentials are errors, not warnings')
    .action(async (paths: string[], opts: ValidateOptions, command: Command) => {
      const { validateAction } = await import('./validate-action.js');
      await validateAction(paths, opts, command);
    });
}
