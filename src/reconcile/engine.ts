/**
 * One reconcile of one revision, as a sequence of named stages (after Flux's sub-reconcilers), each in its own
 * file and returning a typed value or its failure keyed by stage:
 *
 *   load (load.ts) → observe (observe.ts) → plan (plan-stage.ts) → check saved plan → apply (apply-stage.ts) → record
 *
 * Plan only: no lock, nothing written. Apply: observe to apply run under the state lock; the state is saved when
 * the observe stage resolved an interrupted run's intents or forgot stale records, before the plan's errors stop
 * anything. Shared by `govops plan`, `govops apply` and the daemon. Expected failures come back as a result
 * (stage + error + failure), never as a throw.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import { withStateLock, type StateDeadline } from '../state/lock.js';
import { systemClock } from '../util/clock.js';
import { loadState, saveState } from '../state/store.js';
import { loadStage, type Loaded } from './load.js';
import { observeStage, type Lists } from './observe.js';
import { checkSavedPlan, factsOf, hasChanges, planFailed, planStage, type Planned } from './plan-stage.js';
import { stopped, thrownAt, type EngineOptions, type ResultBody, type StageFailure } from './stages.js';
import type { ReconcileResult } from './types.js';

export { LoadCache, formatDiagnostic } from './load.js';
export { observeDataSources } from './observe.js';
export type { EngineOptions } from './stages.js';

/**
 * Observe the service against the state as it is saved, then plan. The reads listen to the run's signals as an
 * apply's requests do: a stop ends their retry sleeps, the forced stop (80% of the daemon's grace, a second Ctrl-C)
 * aborts those in flight. Unbound, a listing waiting on a silent service outlived the grace.
 */
async function observeAndPlan(api: ServiceApi, loaded: Loaded, opts: EngineOptions, log: Logger, lists?: Promise<Lists>): Promise<Planned | StageFailure> {
  const observed = await observeStage(readsOf(api, opts), loaded, await loadState(opts.statePath), log, (opts.clock ?? systemClock).now(), lists);
  return stopped(observed) ? observed : planStage(observed, opts);
}

/** The API bound to the run's signals (and to `cancel`, when given: it ends retry sleeps and aborts what is in flight). */
function readsOf(api: ServiceApi, opts: EngineOptions, cancel?: AbortSignal): ServiceApi {
  const signals = [opts.signal, opts.forceSignal, cancel].filter((s): s is AbortSignal => s !== undefined);
  // parallel reads' retry sleeps listen too (more than the default ten), as the applier's
  for (const s of signals) setMaxListeners(0, s);
  if (signals.length === 0) return api;
  const either = (a: AbortSignal | undefined): AbortSignal | undefined => (a && cancel ? AbortSignal.any([a, cancel]) : (a ?? cancel));
  const stop = either(opts.signal) ?? new AbortController().signal;
  const force = either(opts.forceSignal);
  for (const s of [stop, force]) if (s) setMaxListeners(0, s);
  return api.withSignal(stop, force);
}

/**
 * A plan's two live lists, asked for while the manifests are read (a plan takes no lock, so nothing orders its
 * reads after the load): the service's time to answer (a remote service sending 10,000 integrations: hundreds of
 * ms) passes while the files are parsed, not after. A load that fails cancels them (their failure is not reported:
 * the load's is). An apply lists under the state lock, after the load, as before.
 */
function listEarly(api: ServiceApi, opts: EngineOptions): { lists: Promise<Lists>; cancel: () => void } {
  const cancel = new AbortController();
  const reads = readsOf(api, opts, cancel.signal);
  const lists = Promise.all([reads.listIntegrations(), reads.listWebhooks()]);
  lists.catch(() => undefined); // awaited by the observe stage; a load that fails never awaits it
  return { lists, cancel: () => cancel.abort() };
}

/** `plan`, a drift check: no lock, nothing written. */
async function planOnly(api: ServiceApi, loaded: Loaded, opts: EngineOptions, log: Logger, lists: Promise<Lists>): Promise<ResultBody> {
  const planned = await observeAndPlan(api, loaded, opts, log, lists);
  if (stopped(planned)) return planned;
  if (!opts.saved) opts.onPlan?.(planned.plan);
  if (planned.plan.errors.length) return planFailed(planned.plan, loaded.diagnostics);
  const facts = opts.recordFacts ? factsOf(loaded, planned, planned.plan) : undefined;
  return { stage: 'done', ok: true, diagnostics: loaded.diagnostics, plan: planned.plan, outcomes: [], changed: hasChanges(planned.plan), facts };
}

/** `apply`, under the state lock: plan, check the saved plan, record what observing settled, apply (by `deadline`). */
async function planAndApply(api: ServiceApi, loaded: Loaded, opts: EngineOptions, log: Logger, deadline: StateDeadline): Promise<ResultBody> {
  const planned = await observeAndPlan(api, loaded, opts, log);
  if (stopped(planned)) return planned;
  if (opts.saved) {
    const refused = checkSavedPlan(loaded, planned, opts.saved, log);
    if (refused) return refused;
  }
  opts.onPlan?.(planned.plan);
  if (planned.resolved) await saveState(opts.statePath, planned.state);
  if (planned.plan.errors.length) return planFailed(planned.plan, loaded.diagnostics);
  // The apply modules (the applier, poller, ledger...) load when there is something to apply: a plan never loads them.
  const { applyStage } = await import('./apply-stage.js');
  return applyStage(api, loaded, planned, opts, log, deadline.at);
}

/** The result as returned: stamped with the revision and the times. */
function record(body: ResultBody, opts: EngineOptions, startedAt: string): ReconcileResult {
  const out = { ...body, startedAt, finishedAt: new Date((opts.clock ?? systemClock).now()).toISOString() } as ReconcileResult;
  if (opts.revision !== undefined) out.revision = opts.revision;
  return out;
}

/**
 * The --timeout of an apply, counted from the start of the reconcile: the state's lock and queries (a PostgreSQL state
 * that hangs) and the apply stage's work all end by it. The tuning module loads only for an apply.
 */
async function applyDeadline(opts: EngineOptions, start: number): Promise<StateDeadline> {
  const { DEFAULT_TIMEOUT_MS } = await import('../apply/tuning.js');
  const timeoutMs = opts.tuning?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return { clock: opts.clock ?? systemClock, at: start + timeoutMs, timeoutMs };
}

export async function reconcile(api: ServiceApi, opts: EngineOptions): Promise<ReconcileResult> {
  const start = (opts.clock ?? systemClock).monotonic();
  const startedAt = new Date((opts.clock ?? systemClock).now()).toISOString();
  const log = opts.logger.child({ revision: opts.revision });
  const early = opts.apply ? undefined : listEarly(api, opts);
  const loaded = await loadStage(opts, log);
  if (stopped(loaded)) {
    early?.cancel();
    return record(loaded, opts, startedAt);
  }
  let body: ResultBody;
  try {
    if (opts.apply) {
      const deadline = await applyDeadline(opts, start);
      body = await withStateLock(opts.statePath, () => planAndApply(api, loaded, opts, log, deadline), { deadline });
    } else body = await planOnly(api, loaded, opts, log, early!.lists);
  } catch (err) {
    body = thrownAt('plan', err, loaded.diagnostics);
  }
  return record(body, opts, startedAt);
}
