/**
 * The apply stage of a reconcile (under the state lock, after the plan passed its checks): suspension recorded,
 * then the plan carried out with the apply tuning given whole, and its outcomes as the result.
 */
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import { applyPlan, awaitingOutcome } from '../apply/applier.js';
import { failureKind, failure as failureOf, type FailureInfo } from '../errors.js';
import { configShapes } from '../manifests/shapes.js';
import { preserveIgnoredFields } from '../plan/ignore.js';
import { isAwaitingManualStep } from '../plan/manual-steps.js';
import { recordSuspension } from '../plan/suspend.js';
import { StateWriter } from '../state/journal.js';
import { saveState } from '../state/store.js';
import type { Loaded } from './load.js';
import { hasChanges, hasWork, type Planned } from './plan-stage.js';
import type { EngineOptions, ResultBody } from './stages.js';
import type { ResourceOutcome } from './types.js';

/**
 * The failure that decides what an apply's failed outcomes mean (the catalogue decides the order): a failure that
 * stops all work first (the state could not be written, the service is down), then transient ones, then one after which
 * the next plan differs (`replans`: the daemon plans again soon).
 */
export function applyFailure(outcomes: readonly ResourceOutcome[]): FailureInfo | undefined {
  const failed = outcomes.filter((o) => o.result !== 'ok' && o.result !== 'blocked' && o.code !== undefined);
  const pick =
    failed.find((o) => failureKind(o.code!).blocksReadiness && !failureKind(o.code!).unreachable) ??
    failed.find((o) => failureKind(o.code!).unreachable) ??
    failed.find((o) => failureKind(o.code!).failureClass === 'transient') ??
    failed.find((o) => failureKind(o.code!).replans) ??
    failed[0];
  return pick ? failureOf(pick.code!) : undefined;
}

/** The resources not applied, one line. */
function notApplied(outcomes: readonly ResourceOutcome[]): string | undefined {
  const failed = outcomes.filter((o) => o.result !== 'ok' && o.result !== 'blocked' && o.result !== 'settling');
  if (!failed.length) return undefined;
  return `${failed.length} of ${outcomes.length} resources not applied: ${failed.map((o) => `${o.resourceKind}/${o.name}: ${o.error ?? o.result}`).join('; ')}`;
}

/** `deadline`: the reconcile's --timeout, counted from its start (engine.ts), on the options' clock. */
export async function applyStage(api: ServiceApi, loaded: Loaded, planned: Planned, opts: EngineOptions, log: Logger, deadline?: number): Promise<ResultBody> {
  const { plan, live, desired } = planned;
  const { diagnostics } = loaded;
  // Suspension is recorded in state, so a suspended resource is not pruned once its manifest is gone.
  let state = planned.state;
  const marked = recordSuspension(state, plan.changes);
  if (marked !== state) {
    state = marked;
    await saveState(opts.statePath, state);
  }
  // Changes awaiting a manual step are not sent (the runner reports them `blocked`); with nothing else to
  // do no apply starts, so a resync finding only them is quiet (the daemon logs the wait once per revision).
  const changed = hasChanges(plan);
  if (!hasWork(plan)) {
    return { stage: 'done', ok: true, diagnostics, plan, outcomes: plan.changes.filter(isAwaitingManualStep).map(awaitingOutcome), changed };
  }
  log.info({ summary: plan.summary }, 'applying plan');
  const writer = new StateWriter(opts.statePath);
  const applied = await applyPlan({
    api,
    tuning: opts.tuning ?? {},
    ...(deadline !== undefined ? { deadline } : {}),
    plan,
    // Ignored fields (govops/ignore-fields) keep their live values when a resource is changed in place.
    desired: preserveIgnoredFields(desired, plan, live, configShapes()),
    state,
    persist: (s) => writer.writeFull(s),
    journal: (entries) => writer.append(entries),
    liveIntegrations: live.integrations.length,
    liveWebhookIds: new Set(live.webhooks.map((w) => w.id)),
    liveWebhooks: live.webhooks,
    ...(live.dataSources ? { liveDataSourceIds: new Set(live.dataSources.map((d) => d.id)) } : {}),
    logger: log,
    signal: opts.signal,
    forceSignal: opts.forceSignal,
    ...(opts.clock ? { clock: opts.clock } : {}),
    revision: opts.revision,
    onOutcome: opts.onOutcome,
    ...(opts.plan.noAdopt === true ? { noAdopt: true } : {}),
  }).finally(() => writer.close());
  const base = { diagnostics, plan, outcomes: applied.outcomes, changed, polls: applied.polls };
  if (applied.ok) return { stage: 'done', ok: true, ...base };
  return { stage: 'apply', ok: false, ...base, error: notApplied(applied.outcomes), failure: applyFailure(applied.outcomes) };
}
