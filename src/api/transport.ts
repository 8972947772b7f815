/**
 * One HTTP attempt over a keep-alive undici Pool: send, read the whole body within the timeout.
 * No retries, no interpretation of statuses (client.ts does that).
 */
import { Pool } from 'undici';

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
}

/** The whole request (connect, headers and body) took longer than the timeout. */
export class RequestTimeoutError extends Error {
  readonly code = 'GOVOPS_REQUEST_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`request timed out after ${timeoutMs}ms`);
  }
}

export class HttpTransport {
  private readonly pool: Pool;
  private readonly prefix: string;
  readonly origin: string;

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
  }

  async send(req: AttemptRequest): Promise<RawResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new RequestTimeoutError(req.timeoutMs)), req.timeoutMs);
    try {
      const res = await this.pool.request({
        method: req.method as 'GET',
        path: this.prefix + req.path,
        headers: req.headers,
        body: req.body,
        signal: controller.signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (err) {
      if (controller.signal.aborted && controller.signal.reason instanceof RequestTimeoutError) {
        throw controller.signal.reason;
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (!this.pool.closed) await this.pool.close();
  }
}
