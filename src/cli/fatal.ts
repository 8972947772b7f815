/** Turn an error escaping a command into one clear line on stderr and exit code 1. */
import { describeError } from '../errors.js';
import { redactText } from '../util/redact.js';
import { printableLines } from '../util/terminal.js';

export function reportFatal(err: unknown): number {
  // Each line printable (a service message can hold `\e[2J`); the hint keeps its own line.
  process.stderr.write(redactText(`error: ${printableLines(describeError(err, { hintOnOwnLine: true }))}\n`));
  if (process.env.GOVOPS_DEBUG && err instanceof Error && err.stack) process.stderr.write(redactText(`${err.stack}\n`));
  return 1;
}
