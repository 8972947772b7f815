/** Typed errors. Every error a user can see says what is wrong, where, and how to fix it. */

/** An error response from the service (or the sandbox), with the interface's error body. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
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
  }

  override toString(): string {
    return `${this.method} ${this.path}: ${this.statusCode} ${this.error}: ${this.message}`;
  }
}

/** The service could not be reached (connection refused, reset, timeout) after all retries. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** A mistake the user can fix (bad flag, missing file, unresolvable secret...). */
export class UserError extends Error {
  override readonly name = 'UserError';
  constructor(
    message: string,
    /** How to fix it, shown after the message. */
    readonly hint?: string,
  ) {
    super(message);
  }
}
