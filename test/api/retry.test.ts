/** The pure retry policy: backoff ceilings, Retry-After parsing, failure classification. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  backoffDelay,
  delayAfterStatus,
  isRetryableTransportError,
  notProcessed,
  parseRetryAfter,
  transportPhase,
} from '../../src/api/retry.js';
import { ApiError } from '../../src/errors.js';

const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };

describe('retry policy', () => {
  it('full jitter under an exponential ceiling capped at maxDelayMs', () => {
    expect(backoffDelay(0, policy, () => 0.999)).toBe(99);
    expect(backoffDelay(2, policy, () => 0.999)).toBe(399);
    expect(backoffDelay(10, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
  });

  it('parses Retry-After as seconds or an HTTP date, clamped', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now, 60_000)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:07 GMT', now, 60_000)).toBe(7000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now, 60_000)).toBe(0);
    expect(parseRetryAfter('3600', now, 60_000)).toBe(60_000);
    expect(parseRetryAfter('soon', now, 60_000)).toBeUndefined();
    expect(parseRetryAfter(undefined, now, 60_000)).toBeUndefined();
  });

  it('a Retry-After folded by a proxy ("5, 5") is 5 s, and text V8 would read as a date of 2001 is not a date (no wait at all)', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('5, 5', now, 60_000)).toBe(5000);
    expect(parseRetryAfter('5,10', now, 60_000)).toBe(5000);
    expect(parseRetryAfter('1 2', now, 60_000)).toBeUndefined();
    expect(parseRetryAfter('5 10', now, 60_000)).toBeUndefined();
    // the three forms of an HTTP date (RFC 9110 5.6.7) still are
    expect(parseRetryAfter('Thursday, 01-Jan-26 00:00:07 GMT', now, 60_000)).toBe(7000);
    expect(parseRetryAfter('Thu Jan  1 00:00:07 2026', now, 60_000)).toBeGreaterThanOrEqual(0);
  });

  it('uses Retry-After on 429/503 only, backoff otherwise', () => {
    expect(delayAfterStatus(0, 429, '2', policy, 0, () => 0)).toBe(2000);
    expect(delayAfterStatus(0, 503, '2', policy, 0, () => 0)).toBe(2000);
    expect(delayAfterStatus(0, 502, '2', policy, 0, () => 0)).toBe(0);
    expect(delayAfterStatus(1, 429, undefined, policy, 0, () => 0.5)).toBe(100);
  });

  it('classifies transport failures: refused is unsent, reset and timeouts are ambiguous', () => {
    const e = (code: string) => Object.assign(new Error(code), { code });
    expect(transportPhase(e('ECONNREFUSED'))).toBe('unsent');
    expect(transportPhase(e('ECONNRESET'))).toBe('ambiguous');
    expect(transportPhase(e('UND_ERR_SOCKET'))).toBe('ambiguous');
    expect(transportPhase(new Error('wrapped', { cause: e('ECONNREFUSED') }))).toBe('unsent');
    expect(isRetryableTransportError(e('GOVOPS_REQUEST_TIMEOUT'))).toBe(true);
    expect(isRetryableTransportError(new TypeError('bug'))).toBe(false);
  });
});

describe('notProcessed: only a 4xx answer (or a connection never opened) proves a write was not carried out', () => {
  it('a 2xx or 3xx answer govops could not read is not "not processed"', () => {
    for (const status of [200, 201, 303]) expect(notProcessed(new ApiError(status, 'Invalid response', 'unreadable', 'POST', '/webhooks'))).toBe(false);
    for (const status of [400, 409, 422, 429]) expect(notProcessed(new ApiError(status, 'x', 'y', 'POST', '/webhooks'))).toBe(true);
    for (const status of [408, 500, 502, 504]) expect(notProcessed(new ApiError(status, 'x', 'y', 'POST', '/webhooks'))).toBe(false);
  });
});
