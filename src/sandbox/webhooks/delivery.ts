/**
 * One outbound webhook POST (interface 6): signed with the webhook's secret, bounded by the
 * delivery timeout, never throwing — every outcome becomes `{ statusCode, response }` for history.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { systemClock, type Clock, type TimerHandle } from '../../util/clock.js';
import type { DeliveryResponse } from './types.js';

export const SIGNATURE_HEADER = 'x-webhook-signature';
export const SIGNATURE_256_HEADER = 'x-webhook-signature-256';

/** Signature headers for a raw body: `sha1=<hex HMAC-SHA1>` and `sha256=<hex HMAC-SHA256>`. */
export function signatureHeaders(secret: string, rawBody: string): Record<string, string> {
  return {
    [SIGNATURE_HEADER]: `sha1=${createHmac('sha1', secret).update(rawBody, 'utf8').digest('hex')}`,
    [SIGNATURE_256_HEADER]: `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`,
  };
}

export interface DeliveryAttempt {
  url: string;
  rawBody: string;
  secret?: string;
  timeoutMs: number;
  /** Extra headers (event name, activity id). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Connection pools; without them each delivery opens its own connection. */
  agents?: { http: http.Agent; https: https.Agent };
  /** Name resolution for this delivery (default: the system resolver); see hosts.ts. */
  lookup?: LookupFunction;
  /** The timers of the deadline (default: the system's; a test moves them by hand). */
  timers?: DeliveryTimers;
}

/** What the delivery deadline needs of a clock. */
export type DeliveryTimers = Pick<Clock, 'setTimeout' | 'clearTimeout'>;

export interface DeliveryOutcome {
  statusCode: number;
  response: DeliveryResponse;
  /** True when aborted by close(): not to be recorded. */
  aborted?: boolean;
}

/** Outcome of a transport failure, in the shape the service records (2.13 response.body). */
export function failureOutcome(code: string, connect: boolean): DeliveryOutcome {
  return { statusCode: 500, response: { body: { code, connect } } };
}

export function deliver(attempt: DeliveryAttempt): Promise<DeliveryOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    // Set once the request is made; `finish` may run before (an invalid URL), and reads them then as unset.
    const timers = attempt.timers ?? systemClock;
    let timer: TimerHandle | undefined;
    let onAbort: (() => void) | undefined;
    const finish = (o: DeliveryOutcome): void => {
      if (settled) return;
      settled = true;
      if (timer) timers.clearTimeout(timer);
      if (onAbort) attempt.signal?.removeEventListener('abort', onAbort);
      resolve(o);
    };
    let url: URL;
    try {
      url = new URL(attempt.url);
    } catch {
      finish(failureOutcome('EINVALIDURL', false));
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      finish(failureOutcome('EINVALIDURL', false));
      return;
    }
    const secure = url.protocol === 'https:';
    const mod = secure ? https : http;
    const agent = attempt.agents ? (secure ? attempt.agents.https : attempt.agents.http) : false;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'govops-sandbox-webhooks',
      'content-length': String(Buffer.byteLength(attempt.rawBody)),
      ...attempt.headers,
      ...(attempt.secret !== undefined ? signatureHeaders(attempt.secret, attempt.rawBody) : {}),
    };
    const req = mod.request(url, { method: 'POST', headers, agent, ...(attempt.lookup ? { lookup: attempt.lookup } : {}) });
    req.on('error', (err: NodeJS.ErrnoException) => finish(failureOutcome(err.code ?? 'EUNKNOWN', false)));
    // One deadline for the whole exchange: connect, send, and the receiver's complete response.
    // A connection that never opened is ETIMEDOUT (connect: true); a silent receiver ESOCKETTIMEDOUT.
    timer = timers.setTimeout(() => {
      const connected = req.socket !== null && req.socket !== undefined && !req.socket.connecting;
      finish(failureOutcome(connected ? 'ESOCKETTIMEDOUT' : 'ETIMEDOUT', !connected));
      req.destroy();
    }, attempt.timeoutMs);
    onAbort = (): void => {
      finish({ ...failureOutcome('EABORTED', false), aborted: true });
      req.destroy();
    };
    if (attempt.signal?.aborted) return onAbort();
    attempt.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('response', (res) => {
      // The receiver's body is read (the exchange is complete only at its end) but not recorded:
      // a history record's `response` is empty, or a `body` holding `code` and `connect` (2.13).
      res.resume();
      res.on('error', (err: NodeJS.ErrnoException) => finish(failureOutcome(err.code ?? 'ECONNRESET', false)));
      res.on('end', () => finish({ statusCode: res.statusCode ?? 500, response: {} }));
    });
    req.end(attempt.rawBody);
  });
}
