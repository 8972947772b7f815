/** What every command gets from the global options. */
import type { Command } from 'commander';
import { UserError } from '../errors.js';
import { createLogger, deferredLogger, type Logger } from '../log.js';
import { redactingStream, secretRedactor } from '../util/redact.js';
import { LOG_LEVELS } from './log-levels.js';

export { LOG_LEVELS };

export type OutputMode = 'text' | 'json' | 'markdown';

/**
 * Commands that keep running (the daemon, the sandbox server) log at `info` by default; one-shot
 * commands (validate, plan, apply, scripts...) at `warn`, so a human sees clean output, as with Terraform.
 */
export const LONG_RUNNING_COMMANDS: ReadonlySet<string> = new Set(['run', 'sandbox']);

export function defaultLogLevel(commandName: string): 'info' | 'warn' {
  return LONG_RUNNING_COMMANDS.has(commandName) ? 'info' : 'warn';
}

/** `--log-level` wins, then a non-empty GOVOPS_LOG_LEVEL, then the command's default. */
export function resolveLogLevel(flag: string | undefined, env: string | undefined, commandName: string): string {
  if (flag) return flag;
  const fromEnv = env?.trim();
  if (fromEnv) {
    if (!(LOG_LEVELS as readonly string[]).includes(fromEnv)) {
      throw new UserError(`GOVOPS_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${fromEnv}"`);
    }
    return fromEnv;
  }
  return defaultLogLevel(commandName);
}

/**
 * GOVOPS_LOG_FORMAT, for one-shot commands: `text` (the default, also when empty) or `json`. Any other value is a
 * usage error: a typo (`JSON`, `jsonl`) silently gave text lines to a tool expecting JSON.
 */
export function logFormatFromEnv(env: string | undefined): 'text' | 'json' {
  const value = env?.trim() ?? '';
  if (value === '' || value === 'text') return 'text';
  if (value === 'json') return 'json';
  throw new UserError(`GOVOPS_LOG_FORMAT must be text or json, got ${JSON.stringify(value)}`, 'unset it for text lines, or set it to json');
}

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
  /** stdout and stderr through the one redactor (no secret resolved in this run is ever printed). */
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** stdout as is: only for a product the user asked for that may hold a secret (a generated script). */
  rawStdout: NodeJS.WritableStream;
}

/** Commands whose stdout is a Markdown document whatever `--output` says (preview: the comment, or JSON holding it). */
const MARKDOWN_COMMANDS: ReadonlySet<string> = new Set(['preview']);

export function contextFrom(command: Command, logDestination: 1 | 2 = 2): CliContext {
  const raw = command.optsWithGlobals() as Omit<GlobalOptions, 'logLevel'> & { logLevel?: string };
  const options: GlobalOptions = { ...raw, logLevel: resolveLogLevel(raw.logLevel, process.env.GOVOPS_LOG_LEVEL, command.name()) };
  const tty = Boolean(process.stdout.isTTY);
  // NO_COLOR (any non-empty value, no-color.org) is `--no-color` for every output: the plan, text logs, and the
  // pretty logs of run and sandbox (pino-pretty colors whatever the environment says when asked to).
  const color = options.color && !process.env.NO_COLOR;
  const pretty = logDestination === 2 ? Boolean(process.stderr.isTTY) : tty;
  // One-shot commands log plain text lines (GOVOPS_LOG_FORMAT=json keeps JSON); run and sandbox log JSON.
  const text = !LONG_RUNNING_COMMANDS.has(command.name()) && logFormatFromEnv(process.env.GOVOPS_LOG_FORMAT) === 'text';
  // Made at its first line: a command that logs nothing (validate, a plan in sync) never loads the logging library.
  const logger = deferredLogger(options.logLevel, () =>
    createLogger({
      level: options.logLevel,
      destination: logDestination,
      ...(text ? { text: { color: pretty && color } } : { pretty: pretty && color }),
    }),
  );
  // A Markdown product (`-o markdown`; preview's comment, as text or inside its JSON) is redacted in its parts before
  // they are escaped; its last pass leaves out the values a manifest's author chose (util/redact.ts `RedactScope`).
  const markdown = options.output === 'markdown' || MARKDOWN_COMMANDS.has(command.name());
  return {
    options,
    logger,
    color: color && tty,
    stdout: redactingStream(process.stdout, secretRedactor, markdown ? 'operator' : 'all'),
    stderr: redactingStream(process.stderr),
    rawStdout: process.stdout,
  };
}

/** Exit codes a CI job can use. */
export const EXIT = {
  ok: 0,
  error: 1,
  changes: 2,
  /** apply: everything else was applied; some changes await a manual step (manual-flow integrations). */
  awaitingManualStep: 3,
} as const;
