/**
 * `govops healthcheck`: exit 0 when the running `govops run` answers GET /healthz. It is the image's
 * HEALTHCHECK, which cannot see the arguments the container was started with: so it finds the daemon
 * process and reads the daemon's own flags and environment (the work is in healthcheck-action.ts).
 */
import { Option, type Command } from '../commander.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface HealthcheckFlags {
  listen: string;
  pid?: string;
  timeout: string;
}

export function register(program: Command): void {
  program
    .command('healthcheck')
    .description(COMMAND_SUMMARIES.healthcheck.description)
    .addOption(
      new Option('--listen <address>', 'address to check when no running `govops run` is found; given on the command line, checked instead of looking')
        .env('GOVOPS_LISTEN')
        .default(':8080'),
    )
    .option('--pid <pid>', 'check the `govops run` process with this process id only')
    .option('--timeout <duration>', 'time allowed for each answer', '3s')
    .action(async (opts: HealthcheckFlags, command: Command) => {
      const { healthcheckAction } = await import('./healthcheck-action.js');
      await healthcheckAction(opts, command);
    });
}
