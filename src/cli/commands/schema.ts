/** `govops schema`: the combined JSON Schema of the manifests, for editors (YAML language server). */
import type { Command } from 'commander';
import { COMMAND_SUMMARIES } from './summaries.js';

export function register(program: Command): void {
  program
    .command('schema')
    .description(COMMAND_SUMMARIES.schema.description)
    .action(async () => {
      // Loaded on demand: the schema bundle is only needed when this command runs.
      const { combinedSchema } = await import('../../manifests/bundle.js');
      process.stdout.write(`${JSON.stringify(combinedSchema(), null, 2)}\n`);
    });
}
