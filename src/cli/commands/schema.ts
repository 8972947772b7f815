/** `govops schema`: the combined JSON Schema of the manifests, for editors (YAML language server). */
import type { Command } from 'commander';
import { combinedSchema } from '../../manifests/bundle.js';

export function register(program: Command): void {
  program
    .command('schema')
    .description('print the combined JSON Schema of govops manifests (for the YAML language server)')
    .action(() => {
      process.stdout.write(`${JSON.stringify(combinedSchema(), null, 2)}\n`);
    });
}
