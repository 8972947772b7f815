/**
 * Typed errors and the one failure catalogue.
 *
 * Every govops error carries a stable `code` (a union, `ErrorCodeValue`). The catalogue (`FAILURES`) says, once
 * per code, everything a decision needs (like Flux's typed errors and fastify's error catalogue carry their
 * handling): its class (`transient`: worth trying again later; `terminal`: stays until someone changes
 * something), who retries it inside one run (`client`: the API client, within its attempt limit; `task`: the
 * apply task, e.g. a 409 after the integration settled; `nobody`: no layer repeats it, the next run or
 * reconcile decides), whether it means the service cannot be talked to (`unreachable`) and whether it blocks
 * the daemon's readiness wherever it happens. Every retry and readiness decision reads the catalogue through
 * `failureKind()`, never a code set of its own and never the message text.
 */
import { redactText } from './util/redact.js';

export type FailureClass = 'transient' | 'terminal';
/** Who tries a failure again within one run (docs/decisions.md, "One owner per retry"). */
export type RetryOwner = 'client' | 'task' | 'nobody';

/** Stable error codes. A code never changes meaning; new failures get new codes. */
export const ErrorCode = {
  /** The connection could not be opened (refused, DNS, unreachable host): nothing was sent. */
  connectFailed: 'GOVOPS_CONNECT_FAILED',
  /** No answer within --request-timeout (or a 408). */
  requestTimeout: 'GOVOPS_REQUEST_TIMEOUT',
  /** The connection broke after the request was (maybe) sent. */
  connectionLost: 'GOVOPS_CONNECTION_LOST',
  /** A create's outcome is unknown (no answer within the settle limit, or it could not be looked up): never re-sent; the next run finds it by natural key. */
  createUnsettled: 'GOVOPS_CREATE_UNSETTLED',
  /** Work stopped because govops is shutting down (or the apply was interrupted). */
  cancelled: 'GOVOPS_CANCELLED',
  apiBadRequest: 'GOVOPS_API_BAD_REQUEST',
  apiAuth: 'GOVOPS_API_AUTH',
  apiNotFound: 'GOVOPS_API_NOT_FOUND',
  apiConflict: 'GOVOPS_API_CONFLICT',
  apiValidation: 'GOVOPS_API_VALIDATION',
  apiRateLimited: 'GOVOPS_API_RATE_LIMITED',
  /** Any 5xx (and a 409 on a read: the service is busy). */
  apiUnavailable: 'GOVOPS_API_UNAVAILABLE',
  apiRejected: 'GOVOPS_API_REJECTED',
  /** A 2xx response govops could not read (not JSON, wrong shape). */
  apiInvalidResponse: 'GOVOPS_API_INVALID_RESPONSE',
  /** A dry run or the real call reported failing validation (a failing test, a failing overall status, or 422). */
  validationFailed: 'GOVOPS_VALIDATION_FAILED',
  /** The integration ended in createError / editError / deleteError. */
  statusError: 'GOVOPS_STATUS_ERROR',
  /**
   * The apply --timeout passed: an integration did not reach a settled status before it (the message names the last
   * status), or a request's retry would have started after it (not made: DeadlineError).
   */
  settleTimeout: 'GOVOPS_SETTLE_TIMEOUT',
  /** 409 persisted after the task's bounded retries. */
  conflictPersists: 'GOVOPS_CONFLICT_PERSISTS',
  /** A create found the resource already there (made by someone else): the next plan adopts it. */
  alreadyExists: 'GOVOPS_ALREADY_EXISTS',
  /**
   * A create was accepted with no id in its answer and the integration could not be found unambiguously by its
   * natural key: its pending intent stays, the next run finds it.
   */
  createIdMissing: 'GOVOPS_CREATE_ID_MISSING',
  /** The resource vanished while govops worked on it: the next plan decides again. */
  resourceGone: 'GOVOPS_RESOURCE_GONE',
  /** The plan cannot be carried out as planned (blocked change, refused deletion). */
  blocked: 'GOVOPS_BLOCKED',
  /** A manual-flow change waits for the manifest's acknowledgment of its platform script (not sent; not a failure). */
  awaitingManualStep: 'GOVOPS_AWAITING_MANUAL_STEP',
  /** A mistake the user can fix (flag, file, secret, a path govops cannot create or write). */
  userError: 'GOVOPS_USER_ERROR',
  stateCorrupt: 'GOVOPS_STATE_CORRUPT',
  stateLocked: 'GOVOPS_STATE_LOCKED',
  /** The PostgreSQL state cannot be reached (down, refused, connection lost): nothing unrecorded is sent; retried. */
  stateUnavailable: 'GOVOPS_STATE_UNAVAILABLE',
  /** A state write by a replica that is no longer the leader (its lease term is over): refused, not sent. */
  stateFenced: 'GOVOPS_STATE_FENCED',
  /** The PostgreSQL state refused the request for another reason than its connection (privileges...): terminal until fixed. */
  stateRefused: 'GOVOPS_STATE_REFUSED',
  /** The state (an intent, a new id) could not be written (disk full...): the apply stops, no write is sent after it. */
  stateWriteFailed: 'GOVOPS_STATE_WRITE_FAILED',
  /** A file-system failure while working (a file vanished, a read failed...). */
  io: 'GOVOPS_IO',
  /** The revision's files could not be read (not the manifests' fault): retried. */
  sourceIo: 'GOVOPS_SOURCE_IO',
  /** The source cannot be looked at (Git remote unreachable, watched folder unreadable): retried on the next look. */
  sourceFetch: 'GOVOPS_SOURCE_FETCH',
  /** Manifests invalid or secrets unresolvable: the revision is rejected until the next commit (the daemon looks at one rejected for unreadable secret files again at each resync). */
  invalidRevision: 'GOVOPS_INVALID_REVISION',
  /** The plan has errors (e.g. two live matches for one manifest). */
  planError: 'GOVOPS_PLAN_ERROR',
  /** The service has no data-source list endpoint (404 or 405 at --data-sources-path): data sources are skipped. */
  dataSourcesUnsupported: 'GOVOPS_DATA_SOURCES_UNSUPPORTED',
  /** A saved plan (`apply FILE`) no longer matches its manifests, secrets, state or live resources: refused whole. */
  stalePlan: 'GOVOPS_STALE_PLAN',
  /** Anything else: a bug. */
  internal: 'GOVOPS_INTERNAL',
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What the catalogue says about one code. */
export interface FailureKind {
  failureClass: FailureClass;
  /** The one layer that tries it again within a run (`nobody`: the next run or reconcile). */
  retriedBy: RetryOwner;
  /** The service cannot be talked to right now (the daemon's `unreachable` verdict). */
  unreachable: boolean;
  /** Stops all work wherever it happens: the daemon is not ready (/readyz 503). */
  blocksReadiness: boolean;
  /**
   * Never changes readiness, wherever it happens (a failure before apply otherwise stops all work): nothing failed
   * (a reconcile cancelled), or the daemon only waits its turn (the state locked by another writer, a CI apply).
   */
  leavesReadiness: boolean;
  /**
   * Terminal for the write that met it, but what the service holds is not what the plan was made from (a create met an
   * integration made outside the apply): the next plan differs (it adopts it, or under --no-adopt blocks it), so the
   * daemon plans again after its backoff, not at the resync period (docs/decisions.md).
   */
  replans: boolean;
}

const k = (
  failureClass: FailureClass,
  retriedBy: RetryOwner,
  flags: { unreachable?: true; blocksReadiness?: true; leavesReadiness?: true; replans?: true } = {},
): FailureKind => ({
  failureClass,
  retriedBy,
  unreachable: flags.unreachable === true,
  blocksReadiness: flags.blocksReadiness === true || flags.unreachable === true,
  leavesReadiness: flags.leavesReadiness === true,
  replans: flags.replans === true,
});
const down = { unreachable: true } as const;

/** The failure catalogue: one entry per code (a missing code does not compile). */
export const FAILURES: Readonly<Record<ErrorCodeValue, FailureKind>> = {
  GOVOPS_CONNECT_FAILED: k('transient', 'client', down),
  GOVOPS_REQUEST_TIMEOUT: k('transient', 'client', down),
  GOVOPS_CONNECTION_LOST: k('transient', 'client', down),
  GOVOPS_CREATE_UNSETTLED: k('transient', 'nobody', down),
  GOVOPS_CANCELLED: k('transient', 'nobody', { leavesReadiness: true }),
  GOVOPS_API_BAD_REQUEST: k('terminal', 'nobody'),
  GOVOPS_API_AUTH: k('terminal', 'nobody', down),
  GOVOPS_API_NOT_FOUND: k('terminal', 'nobody'),
  GOVOPS_API_CONFLICT: k('transient', 'task'),
  GOVOPS_API_VALIDATION: k('terminal', 'nobody'),
  GOVOPS_API_RATE_LIMITED: k('transient', 'client', down),
  GOVOPS_API_UNAVAILABLE: k('transient', 'client', down),
  GOVOPS_API_REJECTED: k('terminal', 'nobody'),
  GOVOPS_API_INVALID_RESPONSE: k('terminal', 'nobody'),
  GOVOPS_VALIDATION_FAILED: k('terminal', 'nobody'),
  GOVOPS_STATUS_ERROR: k('terminal', 'nobody'),
  GOVOPS_SETTLE_TIMEOUT: k('transient', 'nobody'),
  GOVOPS_CONFLICT_PERSISTS: k('transient', 'nobody'),
  GOVOPS_ALREADY_EXISTS: k('terminal', 'nobody', { replans: true }),
  GOVOPS_CREATE_ID_MISSING: k('transient', 'nobody'),
  GOVOPS_RESOURCE_GONE: k('transient', 'nobody'),
  GOVOPS_BLOCKED: k('terminal', 'nobody'),
  GOVOPS_AWAITING_MANUAL_STEP: k('terminal', 'nobody'),
  GOVOPS_USER_ERROR: k('terminal', 'nobody'),
  GOVOPS_STATE_CORRUPT: k('terminal', 'nobody', { blocksReadiness: true }),
  // another writer (a CI apply) has the state: the daemon waits its turn, ready (a sidecar made unready takes its pod
  // out of the Service for the length of someone else's apply)
  GOVOPS_STATE_LOCKED: k('transient', 'nobody', { leavesReadiness: true }),
  GOVOPS_STATE_WRITE_FAILED: k('terminal', 'nobody', { blocksReadiness: true }),
  GOVOPS_STATE_UNAVAILABLE: k('transient', 'nobody', down),
  GOVOPS_STATE_FENCED: k('transient', 'nobody'),
  GOVOPS_STATE_REFUSED: k('terminal', 'nobody', { blocksReadiness: true }),
  GOVOPS_IO: k('transient', 'nobody'),
  GOVOPS_SOURCE_IO: k('transient', 'nobody'),
  GOVOPS_SOURCE_FETCH: k('transient', 'nobody'),
  GOVOPS_INVALID_REVISION: k('terminal', 'nobody'),
  GOVOPS_PLAN_ERROR: k('terminal', 'nobody'),
  GOVOPS_DATA_SOURCES_UNSUPPORTED: k('terminal', 'nobody'),
  GOVOPS_STALE_PLAN: k('terminal', 'nobody'),
  GOVOPS_INTERNAL: k('terminal', 'nobody'),
};

/** The catalogue entry of a code. */
export function failureKind(code: ErrorCodeValue): FailureKind {
  return FAILURES[code];
}

/** A failure reduced to what decisions need (the class is the catalogue's). */
export interface FailureInfo {
  code: ErrorCodeValue;
  failureClass: FailureClass;
}

/** The code with its catalogue class. */
export function failure(code: ErrorCodeValue): FailureInfo {
  return { code, failureClass: FAILURES[code].failureClass };
}

/** Whether a string is one of govops' codes (a code read back from a file or another process). */
export function isErrorCode(code: unknown): code is ErrorCodeValue {
  return typeof code === 'string' && Object.hasOwn(FAILURES, code);
}

/** Base of every govops error: a stable code; its class comes from the catalogue. */
export abstract class GovopsError extends Error {
  abstract readonly code: ErrorCodeValue;
  get failureClass(): FailureClass {
    return FAILURES[this.code].failureClass;
  }
  get transient(): boolean {
    return this.failureClass === 'transient';
  }
}

/**
 * The code of an HTTP error status. A 409 on a read means the service is busy (interface 7 lists 409 only for
 * writes): unavailable, like a 503, and retried by the client; a 409 on a write is the task's.
 */
export function apiStatusCode(statusCode: number, method = 'POST'): ErrorCodeValue {
  if (statusCode < 400) return ErrorCode.apiInvalidResponse;
  if (statusCode === 400) return ErrorCode.apiBadRequest;
  if (statusCode === 401 || statusCode === 403) return ErrorCode.apiAuth;
  if (statusCode === 404) return ErrorCode.apiNotFound;
  if (statusCode === 408) return ErrorCode.requestTimeout;
  if (statusCode === 409) return method === 'GET' ? ErrorCode.apiUnavailable : ErrorCode.apiConflict;
  if (statusCode === 422) return ErrorCode.apiValidation;
  if (statusCode === 429) return ErrorCode.apiRateLimited;
  if (statusCode >= 500) return ErrorCode.apiUnavailable;
  return ErrorCode.apiRejected;
}

/** An error response from the service (or the sandbox), with the interface's error body. */
export class ApiError extends GovopsError {
  override readonly name = 'ApiError';
  readonly code: ErrorCodeValue;
  constructor(
    readonly statusCode: number,
    readonly error: string,
    message: string,
    readonly method: string,
    readonly path: string,
    /** The parsed response body, when it was JSON (validation results ride along on 422). */
    readonly body?: unknown,
  ) {
    super(message);
    this.code = apiStatusCode(statusCode, method);
  }

  /** The URL the request was sent to (origin and path, no query), set by the client. */
  url?: string;
  /** The answer came from a govops daemon (its `x-govops: daemon` header), not from the service. */
  fromGovopsDaemon?: boolean;

  override toString(): string {
    // the service's text on one line, whatever it holds (src/util/terminal.ts is the escaper of every text output);
    // redacted first: a secret of several lines (a key) the service echoed is no longer found once they are joined
    return redactText(`${this.method} ${this.path}: ${this.statusCode} ${this.error}: ${this.message}`).replace(/[\r\n]+/g, ' ');
  }
}

/**
 * A service error as a user reads it: the request and the answer, the URL it was sent to, and what to check
 * (the token on 401/403; GOVOPS_URL when a govops daemon answered instead of the service).
 */
export function describeApiError(err: ApiError): string {
  const lines = [`service error: ${err.toString()}`];
  if (err.url) lines.push(`  sent to: ${err.url}`);
  if (err.fromGovopsDaemon) {
    lines.push(
      '  hint: this URL answers like a govops daemon (govops run / npm start: /status, /metrics), not the service: set GOVOPS_URL (or --url) to the service (npm start prints the sandbox URL)',
    );
  } else if (err.code === ErrorCode.apiAuth) {
    lines.push(
      '  hint: check GOVOPS_TOKEN (or --token-file): the raw token, as integration requests send it in the Authorization header (without "Bearer "; govops adds it for webhook requests), valid for this URL',
    );
  }
  return lines.join('\n');
}

/** The service could not be reached (connection refused, reset, timeout) after all retries, or a create's outcome is unknown. */
export class TransportError extends GovopsError {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    override readonly cause?: unknown,
    /** connectFailed, requestTimeout, connectionLost or createUnsettled. */
    readonly code: ErrorCodeValue = ErrorCode.connectionLost,
  ) {
    super(message);
  }
}

/**
 * The service answered the data-source list with 404 or 405: it has no data sources at that path (an older
 * release, or another path: `--data-sources-path`). Terminal until the service or the flag changes.
 */
export class DataSourcesUnsupportedError extends GovopsError {
  override readonly name = 'DataSourcesUnsupportedError';
  readonly code = ErrorCode.dataSourcesUnsupported;
  constructor(
    readonly statusCode: number,
    readonly method: string,
    readonly path: string,
  ) {
    super(`data sources not supported by this service (${method} ${path} answered ${statusCode}); set --data-sources-path if the service has them elsewhere`);
  }
}

/**
 * The client did not retry a request because the retry (its backoff or Retry-After wait) would have started after the
 * run's deadline (the apply --timeout): the run is timed out. `cause` is the error the last attempt ended with (what
 * the client would have thrown without the deadline), so whether the request was carried out is still known.
 */
export class DeadlineError extends GovopsError {
  override readonly name = 'DeadlineError';
  readonly code = ErrorCode.settleTimeout;
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

/** Work stopped by the abort signal (shutdown or an interrupted apply). Transient: a later run resumes it. */
export class CancelledError extends GovopsError {
  override readonly name = 'CancelledError';
  readonly code = ErrorCode.cancelled;
  constructor(message = 'cancelled: govops is shutting down') {
    super(message);
  }
}

/** A mistake the user can fix (bad flag, missing file, unresolvable secret...), or another failure with a hint. */
export class UserError extends GovopsError {
  override readonly name = 'UserError';
  readonly code: ErrorCodeValue;
  constructor(
    message: string,
    /** How to fix it, shown after the message. */
    readonly hint?: string,
    options: { code?: ErrorCodeValue } = {},
  ) {
    super(message);
    this.code = options.code ?? ErrorCode.userError;
  }
}

/** The code and class of any thrown value: govops errors carry them; file-system errors are I/O; the rest is a bug. */
export function classify(err: unknown): FailureInfo {
  if (err instanceof GovopsError) return failure(err.code);
  if (isAbortError(err)) return failure(ErrorCode.cancelled);
  const sys = (err as { code?: unknown } | null)?.code;
  if (typeof sys === 'string' && /^E[A-Z]+$/.test(sys)) return failure(ErrorCode.io);
  return failure(ErrorCode.internal);
}

/** DOM-style AbortError (timers/promises, fetch) or undici's RequestAbortedError. */
export function isAbortError(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown } | null;
  return !!e && (e.name === 'AbortError' || e.code === 'ABORT_ERR' || e.code === 'UND_ERR_ABORTED');
}

/**
 * An error as one user-facing text: a service error with its request and hint, a transport failure naming the
 * request, a user error with its hint (after the message, or on its own line for a terminal), else the message.
 */
export function describeError(err: unknown, opts: { hintOnOwnLine?: boolean } = {}): string {
  if (err instanceof UserError) {
    if (!err.hint) return err.message;
    return opts.hintOnOwnLine ? `${err.message}\n  hint: ${err.hint}` : `${err.message} (${err.hint})`;
  }
  if (err instanceof ApiError) return describeApiError(err);
  if (err instanceof TransportError) return `cannot reach the service: ${err.method} ${err.path}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
