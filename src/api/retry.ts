/**
 * Retry policy of the API client, as pure functions: which failures are retried (the failure catalogue's
 * `client` codes: network errors, 5xx, 408, 429), whether a failure is ambiguous (the request may have reached
 * the server), and how long to wait before the next try. The client is the only layer that repeats a request
 * for these; worst case per request: `retries + 1` attempts (docs/decisions.md, "One owner per retry").
 */
import { ApiError, DeadlineError, ErrorCode, TransportError, apiStatusCode, failureKind, type ErrorCodeValue } from '../errors.js';

export interface RetryPolicy {
  /** Retries after the first attempt (so `retries + 1` attempts in all). */
  retries: number;
  /** First backoff ceiling in ms; the ceiling doubles per attempt. */
  baseDelayMs: number;
  /** Largest backoff ceiling in ms. */
  maxDelayMs: number;
  /** Largest `Retry-After` honoured, in ms (longer values are clamped to this). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 4,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

/**
 * Whether the client tries an answer with this status again: exactly the codes the failure catalogue gives to
 * the client (5xx, 408, 429, and a 409 on a read). A 409 on a write is the task's (src/apply/integration.ts).
 */
export function clientRetriesStatus(status: number, method: string): boolean {
  return failureKind(apiStatusCode(status, method)).retriedBy === 'client';
}

/**
 * Statuses after which a write may have been carried out: any 5xx (a gateway that gave up on a slow origin
 * answers 502, 503 or 504 after the origin acted) and 408. Only a 4xx answer (429 included) means "not done".
 */
export function ambiguousStatus(status: number): boolean {
  return status >= 500 || status === 408;
}

/**
 * The service certainly did not act on a write that failed with this error: it answered with a status that is
 * not ambiguous (a 4xx), or the connection was never opened. Everything else (5xx, timeouts, resets, an
 * unsettled create, and a 2xx or 3xx answer that could not be read or lacked an id: it was accepted) may have
 * created something. A retry the deadline left out (DeadlineError) is judged by the attempt before it.
 */
export function notProcessed(err: unknown): boolean {
  // a retry left out for the deadline: as the attempt before it ended
  if (err instanceof DeadlineError) return notProcessed(err.cause);
  if (err instanceof ApiError) return err.statusCode >= 400 && !ambiguousStatus(err.statusCode);
  return err instanceof TransportError && err.code === ErrorCode.connectFailed;
}

/** How a transport failure happened: `unsent` failures never reached the server. */
export type TransportPhase = 'unsent' | 'ambiguous';

/** Error codes (node and undici) of failures before any byte of the request was sent. */
const UNSENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * The code `errorCode` gives undici's HTTPParserError (this undici gives its parser errors none): an answer that could
 * not be read as HTTP, most often one cut short (a chunked body whose connection was closed before its last chunk).
 * Lost as a reset is: a read is sent again (a malformed answer fails after the bounded attempts), a create may have been
 * carried out and is looked up.
 */
export const PARSER_ERROR = 'HPE_UNREADABLE_RESPONSE';

/** Low-level codes of network failures (anything else is a bug, not a network blip, and is not retried). */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  ...UNSENT_CODES,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  // an answer cut short by a connection the server closed (`Connection: close`): lost as a reset is
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  PARSER_ERROR,
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  ErrorCode.requestTimeout,
]);

/** Codes of failures where no answer came in time. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  ErrorCode.requestTimeout,
]);

/** The govops error code (src/errors.ts) of a transport failure with this low-level code. */
export function transportFailureCode(code: string | undefined): ErrorCodeValue {
  if (code === ErrorCode.createUnsettled) return ErrorCode.createUnsettled;
  if (code !== undefined && UNSENT_CODES.has(code)) return ErrorCode.connectFailed;
  if (code !== undefined && TIMEOUT_CODES.has(code)) return ErrorCode.requestTimeout;
  return ErrorCode.connectionLost;
}

/** The error code of a transport failure (walking `cause` chains), or undefined. */
export function errorCode(err: unknown): string | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur && typeof cur === 'object'; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if ((cur as { name?: unknown }).name === 'HTTPParserError') return PARSER_ERROR;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A network failure whose catalogue code the client owns (an unsettled create is nobody's: never re-sent). */
export function isRetryableTransportError(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && NETWORK_CODES.has(code) && failureKind(transportFailureCode(code)).retriedBy === 'client';
}

export function transportPhase(err: unknown): TransportPhase {
  const code = errorCode(err);
  return code !== undefined && UNSENT_CODES.has(code) ? 'unsent' : 'ambiguous';
}

/** Full-jitter exponential backoff: uniform in [0, min(max, base * 2^attempt)]. `attempt` is 0-based. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After`: delay-seconds or an HTTP date. Returns ms to wait (clamped to [0, max]), or undefined
 * when absent or unparseable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number, maxMs: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  let trimmed = text.trim();
  if (trimmed === '') return undefined;
  // a header sent twice and folded into one by a proxy ("5, 5"): its first value
  if (/^\d+(\.\d+)?\s*,/.test(trimmed)) trimmed = trimmed.slice(0, trimmed.indexOf(',')).trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    ms = Number(trimmed) * 1000;
  } else {
    // Every HTTP date form holds a time of day; without one, V8's lenient parser reads "5 10" as a day of 2001 (no wait).
    if (!/\b\d{1,2}:\d{2}:\d{2}\b/.test(trimmed)) return undefined;
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.max(0, Math.min(maxMs, Math.round(ms)));
}

/** The delay before retry number `attempt` (0-based) after a response with `status`. */
export function delayAfterStatus(
  attempt: number,
  status: number,
  retryAfter: string | string[] | undefined,
  policy: RetryPolicy,
  now: number = Date.now(),
  random: () => number = Math.random,
): number {
  if (status === 429 || status === 503) {
    const ra = parseRetryAfter(retryAfter, now, policy.maxRetryAfterMs);
    if (ra !== undefined) return ra;
  }
  return backoffDelay(attempt, policy, random);
}
