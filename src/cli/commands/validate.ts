import type { Command } from 'commander';

/** TODO(owner of this command): replace this placeholder registration. */
export function register(program: Command): void {
  program.command('validate').description('(not yet implemented)').action(() => {
    process.stderr.write('govops validate: not implemented yet\n');
    process.exitCode = 1;
  });
}
