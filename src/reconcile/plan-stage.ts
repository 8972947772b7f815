/**
 * The plan stage of a reconcile (the planner, given its options whole), the facts of a plan (`plan --out`), and
 * the saved-plan check (`apply FILE`): the same facts and the same plan as when it was saved, or nothing at all.
 */
import type { Logger } from 'pino';
import { ErrorCode, failure as failureOf } from '../errors.js';
import { configShapes } from '../manifests/shapes.js';
import { changeKey, compareFacts, comparePlans, planFacts, type PlanFacts, type ReusedId } from '../plan/facts.js';
import { forgetStale } from '../plan/stale.js';
import { withoutAwaiting } from '../plan/manual-steps.js';
import { actionable, planChanges } from '../plan/planner.js';
import type { Plan, PlanChange } from '../plan/types.js';
import { hashingFor } from '../state/store.js';
import type { Diagnostic } from '../manifests/types.js';
import type { Loaded } from './load.js';
import type { Observed } from './observe.js';
import type { StageFailure } from './stages.js';
import type { ReconcileOptions } from './types.js';
import { pushAll } from '../util/multimap.js';
import { systemClock } from '../util/clock.js';

export interface Planned extends Observed {
  plan: Plan;
}

/**
 * The plan has changes govops would make now (not counting those awaiting a manual step, nor the waits for an
 * integration still creating or editing: `settle` changes nothing; it is in sync once settled).
 */
export const hasChanges = (plan: Plan): boolean => actionable(withoutAwaiting(plan)).some((c) => c.action !== 'settle');

/** The plan has something for apply to do: changes, or integrations to wait for (`settle`). */
export const hasWork = (plan: Plan): boolean => actionable(withoutAwaiting(plan)).length > 0;

export function planStage(observed: Observed, opts: Pick<ReconcileOptions, 'plan' | 'revision' | 'clock'>): Planned {
  const plan = planChanges({
    now: (opts.clock ?? systemClock).now(),
    desired: observed.desired,
    live: observed.live,
    state: observed.resolvedState,
    options: opts.plan,
    shapes: configShapes(),
    revision: opts.revision,
  });
  return { ...observed, plan };
}

/** The plan has errors: nothing is applied (stage `plan`). */
export function planFailed(plan: Plan, diagnostics: Diagnostic[]): StageFailure {
  return {
    stage: 'plan',
    ok: false,
    diagnostics,
    plan,
    outcomes: [],
    changed: hasChanges(plan),
    error: plan.errors.join('; '),
    failure: failureOf(ErrorCode.planError),
  };
}

/** What `plan` was computed from (a saved plan's facts); `ids` gives the live id to look at per change. */
export function factsOf(loaded: Loaded, planned: Planned, plan: Plan, ids?: (c: PlanChange) => string | undefined): PlanFacts {
  const { integrations, webhooks, dataSources } = planned.live;
  return planFacts(
    plan,
    {
      manifests: loaded.manifests,
      desired: planned.desired,
      state: planned.state,
      live: dataSources ? { integrations, webhooks, dataSources } : { integrations, webhooks },
      shapes: configShapes(),
      hashing: hashingFor(planned.state.fingerprintKey),
    },
    ids,
  );
}

/**
 * The state entries forgotten since as stale (their recorded id now names another resource: the one govops recorded
 * was deleted and the service gave its id to a new one), each with what to say in a refusal: before, it read
 * "govops state changed (another apply?)" and, for the same id, a change of every differing field.
 */
function reusedIds(planned: Planned): Map<string, ReusedId> {
  const { integrations, webhooks, dataSources } = planned.live;
  const { forgotten } = forgetStale(planned.resolvedState, { integrations, webhooks, dataSources }, planned.desired);
  return new Map(
    forgotten.map((f) => [
      `${f.kind}/${f.name}`,
      {
        id: f.id,
        message:
          `${f.kind}/${f.name}: the id ${f.id} the plan was made against now names another ${f.noun} (${f.holds}; the plan's was ${f.recorded}): ` +
          `the ${f.noun} the plan would change was deleted since, and the service gave its id to a new one, which govops leaves alone. ` +
          `Plan again: the new plan matches the manifest by its natural key`,
      },
    ]),
  );
}

/** `apply FILE`: the saved plan's refusal (stage `plan`, with what changed), or undefined when it still holds. */
export function checkSavedPlan(loaded: Loaded, planned: Planned, saved: { plan: Plan; facts: PlanFacts }, log: Logger): StageFailure | undefined {
  const liveIdNow = new Map(planned.plan.changes.map((c) => [changeKey(c), c.liveId]));
  const stale = compareFacts(saved.facts, factsOf(loaded, planned, saved.plan, (c) => c.liveId ?? liveIdNow.get(changeKey(c))), reusedIds(planned));
  if (stale.length === 0) pushAll(stale, comparePlans(saved.plan, planned.plan));
  if (!stale.length) return undefined;
  // the caller (apply FILE) prints the refusal with each difference: logged for debugging only, not twice
  log.debug({ stale }, 'saved plan refused: it no longer matches');
  return {
    stage: 'plan',
    ok: false,
    diagnostics: loaded.diagnostics,
    plan: saved.plan,
    outcomes: [],
    changed: false,
    stale,
    error: `the saved plan is stale, nothing was applied: ${stale.join('; ')}`,
    failure: failureOf(ErrorCode.stalePlan),
  };
}
