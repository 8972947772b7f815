/**
 * Logging: one pino logger made at the edge (CLI) and passed in everywhere else.
 * Every credential path is redacted, whatever object it appears in, and every line passes through the
 * one redactor (src/util/redact.ts): a secret value resolved in this run never reaches the log, even
 * inside a service error message that echoes a request.
 */
import type { Logger, LevelWithSilent } from 'pino';
import { createRequire } from 'node:module';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import { MASKED_KEYS } from './kinds/registry.js';
import { secretRedactor } from './util/redact.js';
import { escapeRegExp } from './util/strings.js';
import { printable, printableFormatted, printableJson } from './util/terminal.js';
import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';

export type { Logger };

type Pino = typeof import('pino');
let pinoModule: Pino | undefined;
/** pino, loaded when the first logger is made: a command that logs nothing (validate) never loads it. */
const pino = (): Pino => (pinoModule ??= createRequire(import.meta.url)('pino') as Pino);

const SECRETISH = [...MASKED_KEYS, 'secret', 'authorization', 'Authorization', 'token', 'adminToken', 'userToken'];

/** The keys whose values are never logged, at any depth, as they are and in lower case (`headers.authorization`). */
export const SECRET_LOG_KEYS: ReadonlySet<string> = new Set(SECRETISH.flatMap((k) => [k, k.toLowerCase()]));

export const CENSOR = '[redacted]';

/** A JSON key that is one of SECRET_LOG_KEYS (`"password":`), written as pino writes keys. */
const SECRET_KEY_IN_JSON = new RegExp(`"(?:${[...SECRET_LOG_KEYS].map(escapeRegExp).join('|')})"\\s*:`);

function censorKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(censorKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_LOG_KEYS.has(k) ? CENSOR : censorKeys(v);
  return out;
}

/**
 * A log line (pino's JSON, newline-terminated) with the value of every secret key censored, at any depth: in the
 * logged object, the child bindings and what the serializers made of an error alike. A line without such a key (the
 * common case) costs one regular-expression test; pino's own path redaction walked every path of every field of every
 * line (~50 µs a line, half a second per 10,000 resources applied at the default level).
 */
export function censorSecretKeys(line: string): string {
  if (!SECRET_KEY_IN_JSON.test(line)) return line;
  const end = line.endsWith('\n') ? '\n' : '';
  try {
    return `${JSON.stringify(censorKeys(JSON.parse(line)))}${end}`;
  } catch {
    // Not one JSON document (pino writes nothing else), or nested too deep to walk: withheld rather than printed
    // uncensored.
    return `${JSON.stringify({ level: 50, msg: 'a log line naming a secret key was withheld: it could not be read as JSON' })}${end}`;
  }
}

export interface LoggerOptions {
  level?: LevelWithSilent | string;
  /** Pretty, human output (used when stderr/stdout is a TTY). */
  pretty?: boolean;
  /**
   * `text`: one plain line per entry, `warning: message (key=value ...)`, for one-shot commands whose
   * output is read by a person (the daemon and the sandbox log JSON, or pretty JSON on a terminal).
   */
  text?: { color: boolean };
  /** Where to write; defaults to stdout (fd 1). */
  destination?: number | NodeJS.WritableStream;
}

/** A revision id for a person's terminal: each long run of hex digits cut to its first 12 (`sha256:3f2a…`). */
export function shortRevision(id: string): string {
  return id.replace(/[0-9a-f]{16,}/g, (hex) => `${hex.slice(0, 12)}…`);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const hooks = { streamWrite: (line: string) => secretRedactor.redactJsonText(censorSecretKeys(line)) };
  if (options.text) {
    const out = options.destination === undefined || typeof options.destination === 'number'
      ? pino().destination({ dest: (options.destination as number | undefined) ?? 1, sync: true })
      : options.destination;
    const color = options.text.color;
    return pino()({ level, hooks }, { write: (line: string) => void out.write(textLine(line, color)) });
  }
  if (options.pretty) {
    // In-process and synchronous, so log lines and plain writes to the terminal keep their order.
    // Loaded only for terminal output, so one-shot commands and JSON logging never pay for it.
    const pretty = createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;
    const fd = typeof options.destination === 'number' ? options.destination : 1;
    const stream = pretty({
      // its fields are JSON, which leaves C1 controls and bidi overrides as they are: escaped on the way out
      destination: new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          writeSync(fd, printableFormatted(chunk.toString()));
          done();
        },
      }),
      colorize: true,
      sync: true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,app',
      // the message is text from anywhere (a service error): printable; other fields are printed as JSON
      messageFormat: (log, messageKey) => printable(String(log[messageKey] ?? '')),
      // a revision (`sha256:` and 64 hex digits for a folder) on every line of a reconcile: its first 12 digits
      customPrettifiers: { revision: (v: unknown) => (typeof v === 'string' ? shortRevision(v) : v) as string },
    });
    return pino()({ level, hooks }, stream);
  }
  const dest =
    options.destination === undefined || typeof options.destination === 'number'
      ? pino().destination({ dest: (options.destination as number | undefined) ?? 1, sync: true })
      : options.destination;
  return pino()({ level, hooks, base: { app: 'govops' } }, dest);
}

const LEVEL_LABELS: Record<number, [string, string]> = {
  10: ['trace', '\x1b[90m'],
  20: ['debug', '\x1b[90m'],
  30: ['info', '\x1b[36m'],
  40: ['warning', '\x1b[33m'],
  50: ['error', '\x1b[31m'],
  60: ['fatal', '\x1b[31m'],
};
const NOT_SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'app', 'msg']);

/** A field's value in a text line: a plain word as it is, anything else as JSON; printable either way. */
function shown(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=()]+$/.test(v) ? printable(v) : printableJson(v);
  return v === undefined ? 'undefined' : printableJson(v);
}

/** One JSON log line (already redacted) as `warning: message (key=value ...)`. */
export function textLine(json: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const [label, code] = LEVEL_LABELS[entry.level as number] ?? [String(entry.level), ''];
  const details = Object.entries(entry)
    .filter(([k]) => !NOT_SHOWN.has(k))
    .map(([k, v]) => `${printable(k)}=${shown(v)}`);
  const head = color && code ? `${code}${label}:\x1b[0m` : `${label}:`;
  return `${head} ${typeof entry.msg === 'string' ? printable(entry.msg) : ''}${details.length ? ` (${details.join(' ')})` : ''}\n`;
}

const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
const LEVEL_METHODS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/**
 * A logger made at its first line at an enabled level (`make` is called then, once): a one-shot command that logs
 * nothing (a plan in sync, at the default `warn`) never loads pino, ~15 ms of every such run (issue #26). Lines
 * below `level` are dropped without making it, as pino drops them. A child keeps its bindings and becomes a child
 * of the real logger (its parents' first) at its own first line, so every line is what the real logger would write.
 * What govops calls on a logger: the level methods, `child(bindings)`, `isLevelEnabled`, `level` (read only), and
 * `flush` (the real logger's, when one was made: nothing was written otherwise).
 */
export function deferredLogger(level: string, make: () => Logger): Logger {
  const root: { real?: Logger } = {};
  return deferred(level, root, () => (root.real ??= make()));
}

function deferred(level: string, root: { real?: Logger }, realOf: () => Logger): Logger {
  const threshold = LEVEL_VALUES[level] ?? LEVEL_VALUES.info!;
  const facade: Record<string, unknown> = {
    level,
    isLevelEnabled: (l: string) => (LEVEL_VALUES[l] ?? Infinity) >= threshold && threshold !== Infinity,
    silent: () => undefined,
    child: (bindings: Record<string, unknown>) => {
      let child: Logger | undefined;
      return deferred(level, root, () => (child ??= realOf().child(bindings)));
    },
    flush: (done?: (err?: Error) => void) => (root.real ? root.real.flush(done) : done?.()),
  };
  for (const m of LEVEL_METHODS) {
    facade[m] = LEVEL_VALUES[m]! < threshold ? () => undefined : (...args: unknown[]) => (realOf()[m] as (...a: unknown[]) => void)(...args);
  }
  return facade as unknown as Logger;
}

/** A logger that drops everything (tests, library defaults). */
export function silentLogger(): Logger {
  return pino()({ level: 'silent' });
}
