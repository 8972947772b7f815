/** What an apply reports per resource: the action label and the outcome of a change awaiting a manual step. */
import { ErrorCode } from '../errors.js';
import type { PlanChange } from '../plan/types.js';
import type { OutcomeAction, ResourceOutcome } from '../reconcile/types.js';

export function actionLabel(c: PlanChange): OutcomeAction {
  if (c.action === 'noop' && c.renamedFrom !== undefined) return 'rename';
  return c.adopt && c.action !== 'adopt' ? `adopt+${c.action}` : c.action;
}

/**
 * The outcome of a change awaiting a manual step (plan/manual-steps.ts): not sent, and not a failure: the rest
 * of the plan goes ahead and `ok` stays true. The daemon logs the wait once per revision, so it is not logged here.
 */
export function awaitingOutcome(c: PlanChange): ResourceOutcome {
  return {
    resourceKind: c.resourceKind,
    name: c.name,
    action: actionLabel(c),
    result: 'blocked',
    durationMs: 0,
    error: c.blocked?.message ?? 'awaiting manual step',
    code: ErrorCode.awaitingManualStep,
    failureClass: 'terminal',
  };
}
