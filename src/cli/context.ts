/** What every command gets from the global options. */
import type { Command } from 'commander';
import { createLogger, type Logger } from '../log.js';

export type OutputMode = 'text' | 'json' | 'markdown';

export interface GlobalOptions {
  output: OutputMode;
  logLevel: string;
  color: boolean;
}

export interface CliContext {
  options: GlobalOptions;
  /** Logs go to stderr for one-shot commands, so stdout stays machine-readable. */
  logger: Logger;
  /** Use color: only when asked for and stdout is a TTY. */
  color: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function contextFrom(command: Command, logDestination: 1 | 2 = 2): CliContext {
  const options = command.optsWithGlobals() as GlobalOptions;
  const tty = Boolean(process.stdout.isTTY);
  const pretty = logDestination === 2 ? Boolean(process.stderr.isTTY) : tty;
  return {
    options,
    logger: createLogger({ level: options.logLevel, pretty: pretty && options.color, destination: logDestination }),
    color: options.color && tty && !process.env.NO_COLOR,
    stdout: process.stdout,
    stderr: process.stderr,
  };
}

/** Exit codes a CI job can use. */
export const EXIT = { ok: 0, error: 1, changes: 2 } as const;
