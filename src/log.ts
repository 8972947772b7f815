/**
 * Logging: one pino logger made at the edge (CLI) and passed in everywhere else.
 * Every credential path is redacted, whatever object it appears in, and every line passes through the
 * one redactor (src/util/redact.ts): a secret value resolved in this run never reaches the log, even
 * inside a service error message that echoes a request.
 */
import pino, { type Logger, type LevelWithSilent } from 'pino';
import { createRequire } from 'node:module';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import { MASKED_KEYS } from './service/kinds.js';
import { secretRedactor } from './util/redact.js';

export type { Logger };

const SECRETISH = [...MASKED_KEYS, 'secret', 'authorization', 'Authorization', 'token', 'adminToken', 'userToken'];

/** pino redact paths: each secret key at the top level and up to four levels deep. */
export const REDACT_PATHS: string[] = [
  ...new Set(
    SECRETISH.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`, `*.*.*.*.${k}`, `headers["${k.toLowerCase()}"]`]),
  ),
];

export interface LoggerOptions {
  level?: LevelWithSilent | string;
  /** Pretty, human output (used when stderr/stdout is a TTY). */
  pretty?: boolean;
  /** Where to write; defaults to stdout (fd 1). */
  destination?: number | NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const redact = { paths: REDACT_PATHS, censor: '[redacted]' };
  const hooks = { streamWrite: (line: string) => secretRedactor.redactJsonText(line) };
  if (options.pretty) {
    // In-process and synchronous, so log lines and plain writes to the terminal keep their order.
    // Loaded only for terminal output, so one-shot commands and JSON logging never pay for it.
    const pretty = createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;
    const stream = pretty({
      destination: typeof options.destination === 'number' ? options.destination : 1,
      colorize: true,
      sync: true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,app',
    });
    return pino({ level, redact, hooks }, stream);
  }
  const dest =
    options.destination === undefined || typeof options.destination === 'number'
      ? pino.destination({ dest: (options.destination as number | undefined) ?? 1, sync: true })
      : options.destination;
  return pino({ level, redact, hooks, base: { app: 'govops' } }, dest);
}

/** A logger that drops everything (tests, library defaults). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
