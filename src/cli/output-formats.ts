/**
 * The output formats each command prints. `-o, --output` is a global option, so every command accepted every
 * format, and a command without that format printed its text: a CI job that ran `govops healthcheck -o json` or
 * `govops acknowledge -o json` and parsed stdout got text and failed far from the cause. A format a command does not
 * print is now a usage error before the command runs.
 */
import { UserError } from '../errors.js';
import type { Command } from './commander.js';
import type { OutputMode } from './context.js';

const TEXT_JSON: readonly OutputMode[] = ['text', 'json'];
const EVERY: readonly OutputMode[] = ['text', 'json', 'markdown'];

/** By command path (`state list`); a command not named prints text only. */
export const OUTPUT_FORMATS: Readonly<Record<string, readonly OutputMode[]>> = {
  validate: TEXT_JSON,
  plan: EVERY,
  apply: EVERY,
  // its text is the Markdown comment; markdown is the same
  preview: EVERY,
  comment: TEXT_JSON,
  export: TEXT_JSON,
  // the JSON Schema, whatever -o says
  schema: TEXT_JSON,
  'state list': TEXT_JSON,
  'state show': TEXT_JSON,
  'state forget': TEXT_JSON,
  'state adopt': TEXT_JSON,
  'state migrate': TEXT_JSON,
  'webhooks history': TEXT_JSON,
  'webhooks retry': TEXT_JSON,
  'webhooks events': TEXT_JSON,
  'webhooks list': TEXT_JSON,
};

/** `state list` for the `list` subcommand of `state`; the root's name left out. */
export function commandPath(action: Command): string {
  const names: string[] = [];
  for (let c: Command | null = action; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

export function formatsOf(path: string): readonly OutputMode[] {
  return OUTPUT_FORMATS[path] ?? ['text'];
}

/** Before a command runs: refuses an `-o` format it does not print. */
export function checkOutputFormat(action: Command): void {
  const output = (action.optsWithGlobals() as { output?: OutputMode }).output ?? 'text';
  const path = commandPath(action);
  const formats = formatsOf(path);
  if (formats.includes(output)) return;
  throw new UserError(
    `govops ${path} does not print ${output}: -o ${output} is not one of its formats (${formats.join(', ')})`,
    formats.length === 1 ? 'leave out -o (--output)' : `use -o ${formats.filter((f) => f !== 'text').join(' or -o ')}, or leave it out`,
  );
}
