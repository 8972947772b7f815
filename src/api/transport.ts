/**
 * One HTTP attempt over a keep-alive undici Pool (its dispatch API): send, read the whole body within the timeout.
 * No retries, no interpretation of statuses (client.ts does that).
 */
import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { undiciPool } from '../util/undici.js';
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

/**
 * The largest answer read (bytes of body): past it the request is stopped and fails (ResponseTooLargeError). A list of
 * 20,000 integrations is ~9 MB; a service sending without end would otherwise fill the memory, and past V8's longest
 * string (~512 MB) the answer could not even be decoded.
 */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/**
 * One request under way: undici's handler of it (the dispatch API), which collects the answer. Going through
 * `dispatch` rather than undici's request API saves what a one-shot JSON call does not need: an AbortController per
 * request for the timeout, a listener per request on the shutdown signal, a stream for the body, and the wrappers
 * an interceptor puts around every handler (issue #26: a GET with its server in the same process, 48.7 → 27.6 µs of
 * CPU; docs/decisions.md, "One request, one dispatch handler").
 *
 * It is stopped through the controller undici hands to `onRequestStart`, the moment the request is given a
 * connection and before anything is written. Stopped while it still waits for one (the timeout, a forced
 * shutdown), its promise settles at once, and undici drops it unsent when its turn comes.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private reason?: Error;
  private settled = false;
  private status = 0;
  private headers: RawResponse['headers'] = {};
  private readonly chunks: Buffer[] = [];
  private length = 0;

  constructor(
    private readonly resolve: (res: RawResponse) => void,
    private readonly reject: (err: unknown) => void,
    /** Asked when undici is about to write the request to a socket: a throw aborts it unsent. */
    private readonly beforeWrite: (() => void) | undefined,
    private readonly maxBytes: number,
  ) {}

  /** Settle with this error now, and stop the request: at once when it is under way, else unsent when it gets a connection. */
  abort(reason: Error): void {
    if (this.settled) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) {
      controller.abort(this.reason);
      return;
    }
    if (!this.beforeWrite) return;
    try {
      this.beforeWrite();
    } catch (err) {
      controller.abort(err as Error);
    }
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: RawResponse['headers']): void {
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.length + chunk.length > this.maxBytes) {
      this.chunks.length = 0;
      this.abort(new ResponseTooLargeError(this.maxBytes, this.status));
      return;
    }
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    let text: string;
    try {
      text = utf8Text(this.chunks, this.length);
    } catch (err) {
      this.fail(err); // settled here, not before: a throw after settling would leave the request hanging
      return;
    }
    this.settled = true;
    this.resolve({ status: this.status, headers: this.headers, text });
  }

  onResponseError(_c: Dispatcher.DispatchController | undefined, err: Error): void {
    this.fail(this.reason ?? err);
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }
}

/** The body as text: UTF-8, a leading byte order mark dropped (as undici's `body.text()` reads it). */
function utf8Text(chunks: readonly Buffer[], length: number): string {
  if (length === 0) return '';
  const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = buf.length > 2 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  return buf.toString('utf8', start);
}

/** Requests under way per shutdown signal, and the signal's one listener (one per signal, not one per request). */
const underWay = new WeakMap<AbortSignal, { requests: Set<Exchange>; onAbort: () => void }>();

/**
 * Watch a request under a shutdown signal; returns what stops watching it. The last request under way removes the
 * signal's listener: a signal made per reconcile (`AbortSignal.any` of the run's and the leadership's) is then not
 * kept alive by it for as long as its sources live (a leader's term).
 */
function watch(signal: AbortSignal, exchange: Exchange): () => void {
  let watched = underWay.get(signal);
  if (!watched) {
    const requests = new Set<Exchange>();
    const onAbort = (): void => {
      for (const e of requests) e.abort(new CancelledError('request aborted: govops is shutting down'));
      requests.clear();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    watched = { requests, onAbort };
    underWay.set(signal, watched);
  }
  const w = watched;
  w.requests.add(exchange);
  return () => {
    w.requests.delete(exchange);
    if (w.requests.size > 0 || underWay.get(signal) !== w) return;
    signal.removeEventListener('abort', w.onAbort);
    underWay.delete(signal);
  };
}

/** The answer's body is larger than the transport reads (MAX_RESPONSE_BYTES): not a transport failure, never retried. */
export class ResponseTooLargeError extends Error {
  readonly code = ErrorCode.apiInvalidResponse;
  constructor(
    maxBytes: number,
    /** The answer's status. */
    readonly status: number,
  ) {
    super(`the service's answer is larger than ${maxBytes} bytes: not read`);
  }
}

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

/** A service's base URL as requests use it: origin and path prefix, without userinfo, query or trailing slash. */
export function serviceBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export class HttpTransport {
  private readonly pool: UndiciPool;
  private readonly prefix: string;
  readonly origin: string;

  /** The service's base URL as requests use it (origin and path prefix; no userinfo, no query). */
  get baseUrl(): string {
    return `${this.origin}${this.prefix}`;
  }

  private readonly maxResponseBytes: number;

  constructor(baseUrl: string, options: { connections?: number; keepAliveTimeoutMs?: number; maxResponseBytes?: number } = {}) {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`unsupported URL scheme "${url.protocol}" in ${url.origin}: use http:// or https://`);
    }
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.pool = new (undiciPool())(url.origin, {
      connections: options.connections ?? 16,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
      pipelining: 1,
    });
  }

  send(req: AttemptRequest): Promise<RawResponse> {
    const limit = Math.max(req.timeoutMs, req.settleMs ?? 0);
    return new Promise<RawResponse>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let slow: NodeJS.Timeout | undefined;
      let unwatch: (() => void) | undefined;
      const done = (): void => {
        clearTimeout(timer);
        if (slow) clearTimeout(slow);
        unwatch?.();
      };
      const exchange = new Exchange(
        (res) => {
          done();
          resolve(res);
        },
        (err) => {
          done();
          reject(err);
        },
        req.beforeWrite,
        this.maxResponseBytes,
      );
      if (req.signal?.aborted) {
        exchange.abort(new CancelledError('request aborted: govops is shutting down'));
        return;
      }
      if (req.signal) unwatch = watch(req.signal, exchange);
      timer = setTimeout(() => exchange.abort(req.settleMs !== undefined ? new RequestUnsettledError(limit) : new RequestTimeoutError(limit)), limit);
      if (req.settleMs !== undefined && req.onSlow) slow = setTimeout(req.onSlow, req.timeoutMs);
      this.pool.dispatch(
        {
          method: req.method as Dispatcher.HttpMethod,
          path: this.prefix + req.path,
          headers: req.headers,
          body: req.body,
          headersTimeout: limit,
          bodyTimeout: limit,
        },
        exchange,
      );
    });
  }

  /**
   * Close the connections once the requests in flight are answered; with `withinMs`, requests still in flight then
   * are aborted (CancelledError) and the connections destroyed: a shutdown is not held past its grace by a request
   * waiting out its own timeout.
   */
  async close(withinMs?: number): Promise<void> {
    if (this.pool.closed || this.pool.destroyed) return;
    const closing = this.pool.close();
    if (withinMs === undefined) return closing;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([
      closing.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), withinMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (gaveUp) {
      await this.pool.destroy(new CancelledError('request aborted: govops is shutting down (grace period over)'));
      await closing.catch(() => undefined);
    }
  }
}
