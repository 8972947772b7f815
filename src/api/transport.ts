/**
 * One HTTP attempt over a keep-alive undici Pool: send, read the whole body within the timeout.
 * No retries, no interpretation of statuses (client.ts does that).
 */
import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { Pool, requestOn } from '../util/undici.js';
import { CancelledError, ErrorCode } from '../errors.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface AttemptRequest {
  method: string;
  /** Path relative to the base URL, with query string (e.g. `/integrations?dryRun=true`). */
  path: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /**
   * For requests that may change the service and must not be sent twice (creates): when `timeoutMs`
   * passes, keep waiting for the answer (the service may still be working on it) until `settleMs`, and
   * call `onSlow` once. Only then give up (RequestUnsettledError).
   */
  settleMs?: number;
  onSlow?: () => void;
  /** Aborts the request in flight (a forced shutdown): CancelledError. */
  signal?: AbortSignal;
  /**
   * Asked again at the moment the request is written to a connection (it may have waited in the pool's queue,
   * or the process may have been frozen in between): a throw aborts it unsent. The daemon's write gate.
   */
  beforeWrite?: () => void;
}

/** The `beforeWrite` check of each request in the pool, by its dispatch options (the object undici passes on). */
const beforeWriteOf = new WeakMap<object, () => void>();

/**
 * Runs a request's `beforeWrite` when undici is about to write it to a socket (the handler's `onRequestStart`,
 * called from the connection just before the request goes out), so a request queued behind a busy connection
 * is checked when it really leaves, not when it was queued. A throw aborts it: nothing is written.
 */
const checkBeforeWrite: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  const check = beforeWriteOf.get(opts);
  if (!check) return dispatch(opts, handler);
  const wrapped: Dispatcher.DispatchHandler = new Proxy(handler, {
    get(target, prop) {
      if (prop === 'onRequestStart') {
        return (controller: Dispatcher.DispatchController, context: unknown): void => {
          try {
            check();
          } catch (err) {
            controller.abort(err as Error);
            return;
          }
          target.onRequestStart?.(controller, context);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return dispatch(opts, wrapped);
};

/** The whole request (connect, headers and body) took longer than the timeout. */
export class RequestTimeoutError extends Error {
  readonly code = ErrorCode.requestTimeout;
  constructor(timeoutMs: number) {
    super(`request timed out after ${timeoutMs}ms`);
  }
}

/** A create got no answer within the settle limit: it may still be processed. */
export class RequestUnsettledError extends Error {
  readonly code = ErrorCode.createUnsettled;
  constructor(settleMs: number) {
    super(`no answer after ${settleMs}ms of waiting for the request to settle`);
  }
}

export class HttpTransport {
  private readonly pool: UndiciPool;
  private readonly dispatcher: Dispatcher;
  private readonly prefix: string;
  readonly origin: string;

  /** The service's base URL as requests use it (origin and path prefix; no userinfo, no query). */
  get baseUrl(): string {
    return `${this.origin}${this.prefix}`;
  }

  constructor(baseUrl: string, options: { connections?: number; keepAliveTimeoutMs?: number } = {}) {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`unsupported URL scheme "${url.protocol}" in ${url.origin}: use http:// or https://`);
    }
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 16,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
      pipelining: 1,
    });
    this.dispatcher = this.pool.compose(checkBeforeWrite);
  }

  async send(req: AttemptRequest): Promise<RawResponse> {
    const controller = new AbortController();
    const limit = Math.max(req.timeoutMs, req.settleMs ?? 0);
    const timer = setTimeout(
      () => controller.abort(req.settleMs !== undefined ? new RequestUnsettledError(limit) : new RequestTimeoutError(limit)),
      limit,
    );
    const slow = req.settleMs !== undefined && req.onSlow ? setTimeout(req.onSlow, req.timeoutMs) : undefined;
    const onAbort = (): void => controller.abort(new CancelledError('request aborted: govops is shutting down'));
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener('abort', onAbort, { once: true });
    const options: Dispatcher.RequestOptions = {
      method: req.method as 'GET',
      path: this.prefix + req.path,
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
      headersTimeout: limit,
      bodyTimeout: limit,
    };
    if (req.beforeWrite) beforeWriteOf.set(options, req.beforeWrite);
    try {
      const res = await requestOn.call(this.dispatcher, options);
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      const reason: unknown = controller.signal.reason;
      if (
        controller.signal.aborted &&
        (reason instanceof RequestTimeoutError || reason instanceof RequestUnsettledError || reason instanceof CancelledError)
      ) {
        throw reason;
      }
      throw err;
    } finally {
      clearTimeout(timer);
      if (slow) clearTimeout(slow);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    if (!this.pool.closed) await this.pool.close();
  }
}
