/**
 * Typed errors. Every error a user can see says what is wrong, where, and how to fix it.
 *
 * Every govops error carries a stable `code` and a `failureClass`, set where it is raised (like undici's
 * `UND_ERR_*` codes and Flux's stalling/waiting split): `transient` failures are worth trying again
 * later (the service is down, a request timed out, a 409 while the integration is busy); `terminal`
 * ones stay until someone changes something (a 422, an invalid manifest, a corrupt state file).
 * Retry and readiness decisions use `classify()`, never the message text.
 */

export type FailureClass = 'transient' | 'terminal';

/** Stable error codes. A code never changes meaning; new failures get new codes. */
export const ErrorCode = {
  /** The connection could not be opened (refused, DNS, unreachable host): nothing was sent. */
  connectFailed: 'GOVOPS_CONNECT_FAILED',
  /** No answer within --request-timeout. */
  requestTimeout: 'GOVOPS_REQUEST_TIMEOUT',
  /** The connection broke after the request was (maybe) sent. */
  connectionLost: 'GOVOPS_CONNECTION_LOST',
  /** A create never answered within the settle limit: it may still land (resolved by natural key later). */
  createUnsettled: 'GOVOPS_CREATE_UNSETTLED',
  /** Work stopped because govops is shutting down (or the apply was interrupted). */
  cancelled: 'GOVOPS_CANCELLED',
  apiBadRequest: 'GOVOPS_API_BAD_REQUEST',
  apiAuth: 'GOVOPS_API_AUTH',
  apiNotFound: 'GOVOPS_API_NOT_FOUND',
  apiConflict: 'GOVOPS_API_CONFLICT',
  apiValidation: 'GOVOPS_API_VALIDATION',
  apiRateLimited: 'GOVOPS_API_RATE_LIMITED',
  apiUnavailable: 'GOVOPS_API_UNAVAILABLE',
  apiRejected: 'GOVOPS_API_REJECTED',
  /** A 2xx response govops could not read (not JSON, wrong shape). */
  apiInvalidResponse: 'GOVOPS_API_INVALID_RESPONSE',
  /** A dry run or the real call reported failing validation tests, or 422. */
  validationFailed: 'GOVOPS_VALIDATION_FAILED',
  /** The integration ended in createError / editError / deleteError. */
  statusError: 'GOVOPS_STATUS_ERROR',
  /** The integration did not leave creating/editing/deleting before the apply --timeout. */
  settleTimeout: 'GOVOPS_SETTLE_TIMEOUT',
  /** 409 persisted after the bounded retries. */
  conflictPersists: 'GOVOPS_CONFLICT_PERSISTS',
  /** A create found the resource already there (made by someone else): the next plan adopts it. */
  alreadyExists: 'GOVOPS_ALREADY_EXISTS',
  /** The resource vanished while govops worked on it: the next plan decides again. */
  resourceGone: 'GOVOPS_RESOURCE_GONE',
  /** The plan cannot be carried out as planned (blocked change, refused deletion). */
  blocked: 'GOVOPS_BLOCKED',
  /** A manual-flow change waits for the manifest's acknowledgment of its platform script (not sent; not a failure). */
  awaitingManualStep: 'GOVOPS_AWAITING_MANUAL_STEP',
  /** A mistake the user can fix (flag, file, secret). */
  userError: 'GOVOPS_USER_ERROR',
  stateCorrupt: 'GOVOPS_STATE_CORRUPT',
  stateLocked: 'GOVOPS_STATE_LOCKED',
  /** The PostgreSQL state cannot be reached (down, refused, connection lost): nothing unrecorded is sent; retried. */
  stateUnavailable: 'GOVOPS_STATE_UNAVAILABLE',
  /** A state write by a replica that is no longer the leader (its lease term is over): refused, not sent. */
  stateFenced: 'GOVOPS_STATE_FENCED',
  /** A file-system failure (the revision folder vanished, disk full...). */
  io: 'GOVOPS_IO',
  /** The revision's files could not be read (not the manifests' fault): retried. */
  sourceIo: 'GOVOPS_SOURCE_IO',
  /** The source cannot be looked at (Git remote unreachable, watched folder unreadable): retried on the next look. */
  sourceFetch: 'GOVOPS_SOURCE_FETCH',
  /** Manifests invalid or secrets unresolvable: the revision is rejected until the next commit. */
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

/** A failure reduced to what decisions need. */
export interface FailureInfo {
  code: string;
  failureClass: FailureClass;
}

/** Codes that mean "the service cannot be talked to right now": the daemon is not ready. */
export const UNAVAILABLE_CODES: ReadonlySet<string> = new Set<string>([
  ErrorCode.connectFailed,
  ErrorCode.requestTimeout,
  ErrorCode.connectionLost,
  ErrorCode.createUnsettled,
  ErrorCode.apiRateLimited,
  ErrorCode.apiUnavailable,
  ErrorCode.apiAuth,
  ErrorCode.stateUnavailable,
]);

/** Base of every govops error: a stable code and a transient/terminal class. */
export abstract class GovopsError extends Error {
  abstract readonly code: string;
  abstract readonly failureClass: FailureClass;
  get transient(): boolean {
    return this.failureClass === 'transient';
  }
}

/** The code and class of an HTTP error status. */
export function apiStatusCode(statusCode: number): FailureInfo {
  const t = (code: string): FailureInfo => ({ code, failureClass: 'transient' });
  const f = (code: string): FailureInfo => ({ code, failureClass: 'terminal' });
  if (statusCode < 400) return f(ErrorCode.apiInvalidResponse);
  if (statusCode === 400) return f(ErrorCode.apiBadRequest);
  if (statusCode === 401 || statusCode === 403) return f(ErrorCode.apiAuth);
  if (statusCode === 404) return f(ErrorCode.apiNotFound);
  if (statusCode === 408) return t(ErrorCode.requestTimeout);
  if (statusCode === 409) return t(ErrorCode.apiConflict);
  if (statusCode === 422) return f(ErrorCode.apiValidation);
  if (statusCode === 429) return t(ErrorCode.apiRateLimited);
  if (statusCode >= 500) return t(ErrorCode.apiUnavailable);
  return f(ErrorCode.apiRejected);
}

/** An error response from the service (or the sandbox), with the interface's error body. */
export class ApiError extends GovopsError {
  override readonly name = 'ApiError';
  readonly code: string;
  readonly failureClass: FailureClass;
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
    ({ code: this.code, failureClass: this.failureClass } = apiStatusCode(statusCode));
  }

  /** The URL the request was sent to (origin and path, no query), set by the client. */
  url?: string;
  /** The answer came from a govops daemon (its `x-govops: daemon` header), not from the service. */
  fromGovopsDaemon?: boolean;

  override toString(): string {
    // the service's text on one line, whatever it holds (src/util/terminal.ts is the escaper of every text output)
    return `${this.method} ${this.path}: ${this.statusCode} ${this.error}: ${this.message}`.replace(/[\r\n]+/g, ' ');
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

/** The service could not be reached (connection refused, reset, timeout) after all retries. */
export class TransportError extends GovopsError {
  override readonly name = 'TransportError';
  readonly failureClass = 'transient' as const;
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    override readonly cause?: unknown,
    /** connectFailed, requestTimeout, connectionLost or createUnsettled. */
    readonly code: string = ErrorCode.connectionLost,
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
  readonly failureClass = 'terminal' as const;
  constructor(
    readonly statusCode: number,
    readonly method: string,
    readonly path: string,
  ) {
    super(`data sources not supported by this service (${method} ${path} answered ${statusCode}); set --data-sources-path if the service has them elsewhere`);
  }
}

/** Work stopped by the abort signal (shutdown or an interrupted apply). Transient: a later run resumes it. */
export class CancelledError extends GovopsError {
  override readonly name = 'CancelledError';
  readonly code = ErrorCode.cancelled;
  readonly failureClass = 'transient' as const;
  constructor(message = 'cancelled: govops is shutting down') {
    super(message);
  }
}

/** A mistake the user can fix (bad flag, missing file, unresolvable secret...). */
export class UserError extends GovopsError {
  override readonly name = 'UserError';
  readonly code: string;
  readonly failureClass: FailureClass;
  constructor(
    message: string,
    /** How to fix it, shown after the message. */
    readonly hint?: string,
    options: { code?: string; failureClass?: FailureClass } = {},
  ) {
    super(message);
    this.code = options.code ?? ErrorCode.userError;
    this.failureClass = options.failureClass ?? 'terminal';
  }
}

/** The code and class of any thrown value: govops errors carry them; file-system errors are I/O; the rest is a bug. */
export function classify(err: unknown): FailureInfo {
  if (err instanceof GovopsError) return { code: err.code, failureClass: err.failureClass };
  if (isAbortError(err)) return { code: ErrorCode.cancelled, failureClass: 'transient' };
  const sys = (err as { code?: unknown } | null)?.code;
  if (typeof sys === 'string' && /^E[A-Z]+$/.test(sys)) return { code: ErrorCode.io, failureClass: 'transient' };
  return { code: ErrorCode.internal, failureClass: 'terminal' };
}

/** DOM-style AbortError (timers/promises, fetch) or undici's RequestAbortedError. */
export function isAbortError(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown } | null;
  return !!e && (e.name === 'AbortError' || e.code === 'ABORT_ERR' || e.code === 'UND_ERR_ABORTED');
}
