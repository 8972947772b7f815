/** Pure: what a reconcile attempt means for the loop (reject, retry, ready, drift...). */
import { TransportError } from '../errors.js';
import type { ReconcileResult } from '../reconcile/types.js';

export type Verdict =
  /** Valid and applied with changes. */
  | 'applied'
  /** Valid, nothing to change. */
  | 'in-sync'
  /** Plan-only resync found changes (out-of-band drift) and did not apply them. */
  | 'drift'
  /** Invalid manifest, unresolvable secret or plan error: the revision is rejected whole. */
  | 'invalid'
  /** The service could not be reached (or refused the token): retry with backoff, not ready. */
  | 'unreachable'
  /** Apply failed for some resources: retry with backoff. */
  | 'failed';

const UNREACHABLE = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|cannot reach|unreachable|TransportError/i;

export function classifyResult(result: ReconcileResult, apply: boolean): Verdict {
  if (result.ok) {
    if (apply) return result.changed ? 'applied' : 'in-sync';
    return result.changed ? 'drift' : 'in-sync';
  }
  const hasErrorDiag = result.diagnostics.some((d) => d.severity === 'error');
  if (result.stage === 'load' || hasErrorDiag) return 'invalid';
  if (result.stage === 'plan') {
    if (result.plan && result.plan.errors.length > 0) return 'invalid';
    if (result.error && UNREACHABLE.test(result.error)) return 'unreachable';
    if (result.plan) return 'invalid';
    // No plan: observing live state failed (service-side), not the revision's fault.
    return result.error && /service error/i.test(result.error) ? 'unreachable' : 'failed';
  }
  if (result.error && UNREACHABLE.test(result.error) && result.outcomes.every((o) => o.result !== 'ok')) {
    return 'unreachable';
  }
  return 'failed';
}

export function classifyThrown(err: unknown): Verdict {
  if (err instanceof TransportError) return 'unreachable';
  const message = err instanceof Error ? `${err.name} ${err.message}` : String(err);
  return UNREACHABLE.test(message) ? 'unreachable' : 'failed';
}

export function isSuccess(v: Verdict): boolean {
  return v === 'applied' || v === 'in-sync' || v === 'drift';
}

/** Exponential backoff: base·2^(attempt-1), capped. attempt starts at 1. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(30, attempt - 1)));
}
