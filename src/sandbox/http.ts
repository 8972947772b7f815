/**
 * The sandbox's internal request/response model. The server (server.ts) parses HTTP into a
 * SandboxRequest, authenticates it, and dispatches it to a Route; routes return a SandboxResponse.
 * Route modules (integrations, webhooks, control) never touch node:http directly.
 */
import type { ErrorBody } from '../api/types.js';

export type Role = 'admin' | 'user';

export interface Caller {
  token: string;
  role: Role;
  /** Numeric user id (webhooks' `createdBy`). */
  userId: number;
  userName: string;
}

export interface SandboxRequest {
  method: string;
  path: string;
  /** Path parameters from the route pattern (e.g. `{ id: '12' }`). */
  params: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed body (JSON, or YAML for integration requests); undefined when empty. */
  body: unknown;
  rawBody: string;
  /** Set by the server after authentication (absent for control routes). */
  caller?: Caller;
}

export interface SandboxResponse {
  status: number;
  /** JSON body. */
  body?: unknown;
  /** Plain-text body (scripts). */
  text?: string;
  /** A JSON body already serialised (fast paths such as cached list views). */
  rawJson?: string | Buffer;
  headers?: Record<string, string>;
}

/** Which authentication a route needs (interface part 5). */
export type AuthScheme =
  | 'integration' // raw token in Authorization, APPLICATION_ADMIN required
  | 'webhook' // `Bearer <token>`, any known user
  | 'none'; // control API (/_sandbox/...)

export interface Route {
  method: string;
  /** Pattern with `:param` segments, e.g. `/webhooks/:id`. */
  pattern: string;
  auth: AuthScheme;
  handler(req: SandboxRequest): Promise<SandboxResponse> | SandboxResponse;
  /** The route creates resources (behaviour `503-after-success` answers it 503 after doing so). */
  creates?: true;
  /** The route updates or deletes by id (behaviour `503-after-success-all` answers it 503 after doing so). */
  writes?: true;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** An error response with the interface's error body `{ statusCode, error, message }`. */
export function errorResponse(status: number, message: string, extra?: Record<string, unknown>): SandboxResponse {
  const body: ErrorBody & Record<string, unknown> = {
    statusCode: status,
    error: REASONS[status] ?? 'Error',
    message,
    ...extra,
  };
  return { status, body };
}

/** Thrown inside handlers to answer with an error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }
  toResponse(): SandboxResponse {
    return errorResponse(this.status, this.message, this.extra);
  }
}
