/**
 * Pure: what a reconcile attempt means for the loop (reject, retry, ready, drift...). Decided from the
 * failure's code and class (src/errors.ts), never from message text.
 */
import { ErrorCode, UNAVAILABLE_CODES, classify, type FailureInfo } from '../errors.js';
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
  /** Something else failed (some resources not applied, the state file...): see `Judgement`. */
  | 'failed';

/** A verdict and what follows from it. */
export interface Judgement {
  verdict: Verdict;
  /** The failure behind a non-success verdict. */
  failure?: FailureInfo;
  /**
   * `backoff`: transient, try again soon (exponential backoff); `slow`: terminal until something changes,
   * tried again only at the resync period; `none`: success, or a rejected revision (waits for the next one).
   */
  retry: 'backoff' | 'slow' | 'none';
  /** The failure stops all work (not one resource's problem): /readyz answers 503. */
  blocksReadiness: boolean;
}

export function judgeResult(result: ReconcileResult, apply: boolean): Judgement {
  if (result.ok) {
    const verdict: Verdict = apply ? (result.changed ? 'applied' : 'in-sync') : result.changed ? 'drift' : 'in-sync';
    return { verdict, retry: 'none', blocksReadiness: false };
  }
  const failure = result.failure ?? { code: ErrorCode.internal, failureClass: 'terminal' };
  if (failure.code === ErrorCode.invalidRevision || failure.code === ErrorCode.planError) {
    return { verdict: 'invalid', failure, retry: 'none', blocksReadiness: false };
  }
  if (UNAVAILABLE_CODES.has(failure.code)) return { verdict: 'unreachable', failure, retry: 'backoff', blocksReadiness: true };
  const retry = failure.failureClass === 'transient' ? 'backoff' : 'slow';
  // Failures before apply (the state file...) stop all work; an apply's are per resource, and an
  // unreadable revision folder waits for the source's next look.
  return { verdict: 'failed', failure, retry, blocksReadiness: result.stage !== 'apply' && failure.code !== ErrorCode.sourceIo };
}

export function judgeThrown(err: unknown): Judgement {
  const failure = classify(err);
  if (UNAVAILABLE_CODES.has(failure.code)) return { verdict: 'unreachable', failure, retry: 'backoff', blocksReadiness: true };
  return { verdict: 'failed', failure, retry: failure.failureClass === 'transient' ? 'backoff' : 'slow', blocksReadiness: true };
}

export function isSuccess(v: Verdict): boolean {
  return v === 'applied' || v === 'in-sync' || v === 'drift';
}

/** Exponential backoff: base·2^(attempt-1), capped. attempt starts at 1. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(30, attempt - 1)));
}
