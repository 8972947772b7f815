/**
 * Pure: what a reconcile attempt means for the loop (reject, retry, ready, drift...). Decided from the
 * failure catalogue (src/errors.ts: class, unreachable, blocks readiness), never from message text.
 */
import { ErrorCode, classify, failure as failureOf, failureKind, type FailureInfo, type FailureKind } from '../errors.js';
import { isAwaitingManualStep } from '../plan/manual-steps.js';
import type { ReconcileResult, ResourceOutcome } from '../reconcile/types.js';

export type Verdict =
  /** Valid and applied with changes. */
  | 'applied'
  /** Valid, nothing to change. */
  | 'in-sync'
  /**
   * Applied as far as it can be, but changes wait for a person: a manual step to acknowledge, a replace or
   * deletes the plan holds back. Not a failure (no backoff, readiness unaffected), never `in-sync`.
   */
  | 'blocked'
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

/** An outcome held back rather than failed: awaiting a manual step, or blocked by the plan (guard, replace). */
export function heldBack(o: Pick<ResourceOutcome, 'result' | 'code'>): boolean {
  return o.result === 'blocked' || o.code === ErrorCode.blocked || o.code === ErrorCode.awaitingManualStep;
}

export function judgeResult(result: ReconcileResult, apply: boolean): Judgement {
  const outcomes = result.outcomes.filter((o) => o.result !== 'ok');
  if (result.ok) {
    // A plan-only look that finds drift reports the drift; otherwise anything waiting for a person says so.
    const waits = outcomes.some(heldBack) || (result.plan?.changes.some(isAwaitingManualStep) ?? false);
    const verdict: Verdict = result.changed && !apply ? 'drift' : waits ? 'blocked' : result.changed ? 'applied' : 'in-sync';
    return { verdict, retry: 'none', blocksReadiness: false };
  }
  const failure = result.failure ?? failureOf(ErrorCode.internal);
  // Everything not applied was held back by the plan for a person (a refused replace or delete, a manual step),
  // nothing failed: retrying changes nothing. (A change the apply itself could not start is not one of them.)
  const heldByPlan = new Set((result.plan?.changes ?? []).filter((c) => c.blocked).map((c) => `${c.resourceKind}/${c.name}`));
  // So is a data source whose integration was still settling when its wait ended (the plan blocked it before `settle`).
  const settling = new Set(outcomes.filter((o) => o.result === 'settling').map((o) => o.name));
  for (const c of result.plan?.changes ?? []) {
    if (c.resourceKind === 'DataSource' && c.integration?.name !== undefined && settling.has(c.integration.name)) heldByPlan.add(`DataSource/${c.name}`);
  }
  const held = (o: ResourceOutcome): boolean => o.result === 'blocked' || o.result === 'settling' || (heldBack(o) && heldByPlan.has(`${o.resourceKind}/${o.name}`));
  if (result.stage === 'apply' && outcomes.length > 0 && outcomes.every(held)) {
    return { verdict: 'blocked', failure, retry: 'none', blocksReadiness: false };
  }
  if (failure.code === ErrorCode.invalidRevision || failure.code === ErrorCode.planError) {
    return { verdict: 'invalid', failure, retry: 'none', blocksReadiness: false };
  }
  const kind = failureKind(failure.code);
  if (kind.unreachable) return { verdict: 'unreachable', failure, retry: 'backoff', blocksReadiness: true };
  const retry = retryOf(kind);
  // Failures before apply (the state file...) stop all work, as do those the catalogue says block readiness
  // (the state could not be written); an apply's others are per resource, an unreadable revision folder
  // waits for the source's next look, and those the catalogue says leave readiness (a reconcile cancelled, the state
  // locked by another writer) stop nothing.
  const stopsWork = result.stage !== 'apply' && !kind.leavesReadiness && failure.code !== ErrorCode.sourceIo;
  return { verdict: 'failed', failure, retry, blocksReadiness: kind.blocksReadiness || stopsWork };
}

export function judgeThrown(err: unknown): Judgement {
  const failure = classify(err);
  const kind = failureKind(failure.code);
  if (kind.unreachable) return { verdict: 'unreachable', failure, retry: 'backoff', blocksReadiness: true };
  // (those the catalogue says leave readiness: a render stopped by a lost leadership or the stop, a locked state)
  return { verdict: 'failed', failure, retry: retryOf(kind), blocksReadiness: !kind.leavesReadiness };
}

/**
 * Transient: soon, with backoff. Terminal: at the resync period, except a failure after which the next plan differs
 * (`replans`: a create met an integration made outside the apply; the next plan adopts or blocks it): planned again
 * after the same backoff (growing, capped at the retry maximum), never in a tight loop.
 */
function retryOf(kind: FailureKind): 'backoff' | 'slow' {
  return kind.failureClass === 'transient' || kind.replans ? 'backoff' : 'slow';
}

/** The revision was carried out (or, plan only, looked at) as far as govops can: nothing to retry. */
export function isSuccess(v: Verdict): boolean {
  return v === 'applied' || v === 'in-sync' || v === 'drift' || v === 'blocked';
}

/** Exponential backoff: base·2^(attempt-1), capped. attempt starts at 1. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(30, attempt - 1)));
}

/**
 * Only cancelled: the attempt failed nothing, it was stopped (govops shutting down, a lost leadership), and every
 * resource not applied was not applied for that reason alone. A failure of its own (a 422 beside) is not this.
 */
export function onlyCancelled(a: { failure?: FailureInfo; result?: Pick<ReconcileResult, 'outcomes'> }): boolean {
  if (a.failure?.code !== ErrorCode.cancelled) return false;
  return (a.result?.outcomes ?? []).every((o) => o.result === 'ok' || heldBack(o) || o.code === ErrorCode.cancelled);
}
