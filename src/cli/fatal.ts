/** Turn an error escaping a command into one clear line on stderr and exit code 1. */
import { ApiError, TransportError, UserError, describeApiError } from '../errors.js';
import { redactText } from '../util/redact.js';
import { printableLines } from '../util/terminal.js';

export function describeError(err: unknown): string {
  if (err instanceof UserError) return err.hint ? `${err.message}\n  hint: ${err.hint}` : err.message;
  if (err instanceof ApiError) return describeApiError(err);
  if (err instanceof TransportError) return `cannot reach the service: ${err.method} ${err.path}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

export function reportFatal(err: unknown): number {
  // Each line printable (a service message can hold `\e[2J`); the hint keeps its own line.
  process.stderr.write(redactText(`error: ${printableLines(describeError(err))}\n`));
  if (process.env.GOVOPS_DEBUG && err instanceof Error && err.stack) process.stderr.write(redactText(`${err.stack}\n`));
  return 1;
}
