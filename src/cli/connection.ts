/**
 * Connection options shared by every command that talks to the service: `--url` / GOVOPS_URL,
 * the token from GOVOPS_TOKEN or `--token-file` (never a flag holding the token itself),
 * `--request-timeout` and `--retries`.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { ServiceClient, type RequestEvent } from '../api/client.js';
import { UserError } from '../errors.js';
import { DEFAULT_DATA_SOURCE_DELETE_PATH, DEFAULT_DATA_SOURCES_PATH } from '../service/data-sources.js';
import { parseTimerDuration } from '../util/duration.js';
import { registerSecrets } from '../util/redact.js';
import { userAgent } from './version.js';
import { DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRIES, type ConnectionFlags } from './connection-options.js';
import { envValue } from './empty-env.js';

// The flags themselves are declared in connection-options.ts (light, used at registration time).
export { addConnectionOptions, DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRIES, type ConnectionFlags } from './connection-options.js';

export interface Connection {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  retries: number;
  /** Data-source endpoints (`--data-sources-path`, `--data-source-delete-path`). */
  dataSourcesPath: string;
  dataSourceDeletePath: string;
}

/** A path flag: absolute, no query, fragment, `..` segment or whitespace. */
function apiPath(flag: string, value: string): string {
  const v = value.trim();
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(v) || v.split('/').some((s) => s === '..' || s === '.')) {
    throw new UserError(`${flag}: "${value}" is not a path on the service`, `write an absolute path such as ${flag === '--data-sources-path' ? DEFAULT_DATA_SOURCES_PATH : DEFAULT_DATA_SOURCE_DELETE_PATH} (no scheme, host, query or .. segment)`);
  }
  return `/${v.replace(/^\/+|\/+$/g, '')}`;
}

/** Resolve the connection from flags and environment. Throws UserError naming what is missing. */
export function resolveConnection(
  flags: ConnectionFlags,
  env: Record<string, string | undefined> = process.env,
  readFile: (p: string) => string = (p) => readFileSync(p, 'utf8'),
): Connection {
  const rawUrl = flags.url ?? env.GOVOPS_URL;
  if (!rawUrl) {
    throw new UserError('no service URL given', 'pass --url https://service.example or set GOVOPS_URL');
  }
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UserError(`invalid service URL "${rawUrl}"`, 'write an absolute http:// or https:// URL, e.g. https://service.example');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`invalid service URL "${rawUrl}": scheme must be http or https`);
  }

  let token: string | undefined;
  if (flags.tokenFile) {
    try {
      token = readFile(flags.tokenFile).trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UserError(`cannot read the token file ${flags.tokenFile}${code ? ` (${code})` : ''}`, 'check the --token-file path and its permissions');
    }
    if (!token) throw new UserError(`the token file ${flags.tokenFile} is empty`, 'put the API token in it');
  } else {
    token = env.GOVOPS_TOKEN?.trim();
  }
  // The token is a secret of this run: the one redactor keeps it out of every output.
  registerSecrets(token);
  if (!token) {
    throw new UserError('no API token given', 'set GOVOPS_TOKEN or pass --token-file PATH (the token is never taken from the command line)');
  }
  // What an HTTP header value may hold (undici refuses the rest): before, every request failed as a lost
  // connection (GOVOPS_CONNECTION_LOST, transient), and the daemon reported the service unreachable for ever.
  const bad = /[^\t\x20-\x7e\x80-\xff]/.exec(token);
  if (bad) {
    const what = bad[0] === '\n' || bad[0] === '\r' ? 'a line break' : `the character U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw new UserError(
      `the API token ${flags.tokenFile ? `in ${flags.tokenFile}` : 'in GOVOPS_TOKEN'} holds ${what} (character ${bad.index + 1}): it cannot be sent in the Authorization header`,
      'the token is one line of printable characters: remove the line break or the invisible character pasted with it',
    );
  }

  let timeoutMs: number;
  try {
    timeoutMs = parseTimerDuration(flags.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT);
  } catch (err) {
    throw new UserError(`--request-timeout: ${(err as Error).message}`);
  }
  if (timeoutMs <= 0) throw new UserError('--request-timeout must be greater than zero');

  const retriesText = String(flags.retries ?? DEFAULT_RETRIES);
  if (!/^\d+$/.test(retriesText) || Number(retriesText) > 100) {
    throw new UserError(`--retries must be a whole number from 0 to 100, got "${retriesText}"`);
  }

  const dataSourcesPath = apiPath('--data-sources-path', flags.dataSourcesPath ?? envValue(env, 'GOVOPS_DATA_SOURCES_PATH') ?? DEFAULT_DATA_SOURCES_PATH);
  const dataSourceDeletePath = apiPath('--data-source-delete-path', flags.dataSourceDeletePath ?? envValue(env, 'GOVOPS_DATA_SOURCE_DELETE_PATH') ?? DEFAULT_DATA_SOURCE_DELETE_PATH);

  return { baseUrl: url.toString().replace(/\/+$/, ''), token, timeoutMs, retries: Number(retriesText), dataSourcesPath, dataSourceDeletePath };
}

export function clientFromOptions(
  opts: ConnectionFlags,
  logger: Logger,
  extra: {
    env?: Record<string, string | undefined>;
    onRequest?: (e: RequestEvent) => void;
    connections?: number;
    /** A daemon replica's identity, sent in the User-Agent. */
    identity?: string;
    writeGate?: (method: string, path: string) => void;
  } = {},
): ServiceClient {
  const c = resolveConnection(opts, extra.env ?? process.env);
  return new ServiceClient({
    baseUrl: c.baseUrl,
    token: c.token,
    logger,
    timeoutMs: c.timeoutMs,
    retries: c.retries,
    onRequest: extra.onRequest,
    userAgent: userAgent(extra.identity),
    ...(extra.writeGate ? { writeGate: extra.writeGate } : {}),
    ...(extra.connections !== undefined ? { connections: Math.max(16, extra.connections) } : {}),
    dataSourcesPath: c.dataSourcesPath,
    dataSourceDeletePath: c.dataSourceDeletePath,
  });
}
