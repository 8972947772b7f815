/**
 * One reconcile of one revision, as a sequence of named stages (after Flux's sub-reconcilers), each in its own
 * file and returning a typed value or its failure keyed by stage:
 *
 *   load (load.ts) → observe (observe.ts) → plan (plan-stage.ts) → check saved plan → apply (apply-stage.ts) → record
 *
 * Plan only: no lock, nothing written; the live lists are asked for as the load starts. Apply: the state lock is
 * taken as the load starts, and the live lists and the state are read under it while the manifests are; observe to
 * apply run under it; the state is saved when the observe stage resolved an interrupted run's intents or forgot stale
 * records, before the plan's errors stop anything. Shared by `govops plan`, `govops apply` and the daemon. Expected
 * failures come back as a result (stage + error + failure), never as a throw.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import { acquireStateLock, type StateDeadline, type StateLock } from '../state/lock.js';
import type { GovopsState } from '../state/types.js';
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
async function observeAndPlan(api: ServiceApi, loaded: Loaded, opts: EngineOptions, log: Logger, early: EarlyReads): Promise<Planned | StageFailure> {
  const observed = await observeStage(readsOf(api, opts), loaded, await (early.state ?? loadState(opts.statePath)), log, (opts.clock ?? systemClock).now(), early.lists);
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

/** The reads a reconcile starts before its manifests are loaded: the two live lists, and (an apply's) the state. */
interface EarlyReads {
  lists: Promise<Lists>;
  /** Read after the load when absent (a plan: an invalid revision is never compared, its state need not be read). */
  state?: Promise<GovopsState>;
  /** Ends the lists' requests (retry sleeps, sockets) if still under way: a load that failed never awaits them. */
  cancel(): void;
}

/**
 * The two live lists, asked for while the manifests are read: the service's time to answer (a remote service sending
 * 10,000 integrations: hundreds of ms) passes while the files are parsed, not after. A plan takes no lock, so nothing
 * orders its reads after the load; an apply asks for them (and reads the state) once it holds the state lock
 * (`lockEarly`). A load that fails cancels them (their failure is not reported: the load's is).
 */
function readEarly(api: ServiceApi, opts: EngineOptions): EarlyReads {
  const cancel = new AbortController();
  const reads = readsOf(api, opts, cancel.signal);
  const lists = Promise.all([reads.listIntegrations(), reads.listWebhooks()]);
  lists.catch(() => undefined); // awaited by the observe stage; a load that fails never awaits it
  return { lists, cancel: () => cancel.abort() };
}

/** `plan`, a drift check: no lock, nothing written. */
async function planOnly(api: ServiceApi, loaded: Loaded, opts: EngineOptions, log: Logger, early: EarlyReads): Promise<ResultBody> {
  const planned = await observeAndPlan(api, loaded, opts, log, early);
  if (stopped(planned)) return planned;
  if (!opts.saved) opts.onPlan?.(planned.plan);
  if (planned.plan.errors.length) return planFailed(planned.plan, loaded.diagnostics);
  const facts = opts.recordFacts ? factsOf(loaded, planned, planned.plan) : undefined;
  return { stage: 'done', ok: true, diagnostics: loaded.diagnostics, plan: planned.plan, outcomes: [], changed: hasChanges(planned.plan), facts };
}

/** `apply`, under the state lock: plan, check the saved plan, record what observing settled, apply (by `deadline`). */
async function planAndApply(api: ServiceApi, loaded: Loaded, opts: EngineOptions, log: Logger, deadline: StateDeadline, early: EarlyReads): Promise<ResultBody> {
  const planned = await observeAndPlan(api, loaded, opts, log, early);
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

/** The state lock an apply takes as its load starts, and the reads made under it while the manifests are read. */
interface EarlyLock {
  lock: StateLock;
  early: EarlyReads;
}

/**
 * The state lock, taken as the load starts, and once it is held the lists (`readEarly`) and the state (a file of
 * 10,000 records, a PostgreSQL query) asked for: an apply sees the service and the state only under the lock, as
 * before, but no longer waits after the load for the lock (a PostgreSQL round trip or more), the lists and the state.
 * The lock is not waited for (`waitMs` 0: another writer holding it fails the apply at once).
 */
function lockEarly(api: ServiceApi, opts: EngineOptions, deadline: StateDeadline): Promise<EarlyLock> {
  const taking = acquireStateLock(opts.statePath, { deadline }).then((lock) => {
    const state = loadState(opts.statePath);
    state.catch(() => undefined); // awaited by the observe stage; a load that fails never awaits it
    return { lock, early: { ...readEarly(api, opts), state } };
  });
  taking.catch(() => undefined); // awaited after the load; a load that fails reports its own failure instead
  return taking;
}

/**
 * What an apply took early, given back when its load failed: the lists cancelled, the lock released. Awaited, so
 * that the lock is free when the load's failure is reported (a file state: local; a PostgreSQL state that lets the
 * connection in and never answers: its query timeout or the --timeout, docs/decisions.md). A lock that was not taken
 * is not reported.
 */
async function giveBack(taking: Promise<EarlyLock>): Promise<void> {
  let held: EarlyLock;
  try {
    held = await taking;
  } catch {
    return;
  }
  await letGo(held);
}

/** The lists' requests ended, the state's read finished, then the lock released: nothing is read after it is gone. */
async function letGo(held: EarlyLock): Promise<void> {
  held.early.cancel();
  await held.early.state?.catch(() => undefined);
  await held.lock.release();
}

/** `apply`: the lock taken and the reads made while the manifests load; then, under the lock, plan and apply. */
async function loadAndApply(api: ServiceApi, opts: EngineOptions, log: Logger, start: number): Promise<ResultBody> {
  const deadline = await applyDeadline(opts, start);
  const taking = lockEarly(api, opts, deadline);
  let loaded: Loaded | StageFailure;
  try {
    loaded = await loadStage(opts, log);
  } catch (err) {
    await giveBack(taking);
    throw err;
  }
  if (stopped(loaded)) {
    await giveBack(taking);
    return loaded;
  }
  let held: EarlyLock;
  try {
    held = await taking;
  } catch (err) {
    return thrownAt('plan', err, loaded.diagnostics);
  }
  try {
    try {
      return await planAndApply(api, loaded, opts, log, deadline, held.early);
    } finally {
      await letGo(held);
    }
  } catch (err) {
    return thrownAt('plan', err, loaded.diagnostics);
  }
}

export async function reconcile(api: ServiceApi, opts: EngineOptions): Promise<ReconcileResult> {
  const start = (opts.clock ?? systemClock).monotonic();
  const startedAt = new Date((opts.clock ?? systemClock).now()).toISOString();
  const log = opts.logger.child({ revision: opts.revision });
  if (opts.apply) return record(await loadAndApply(api, opts, log, start), opts, startedAt);
  const early = readEarly(api, opts);
  const loaded = await loadStage(opts, log);
  if (stopped(loaded)) {
    early.cancel();
    return record(loaded, opts, startedAt);
  }
  let body: ResultBody;
  try {
    body = await planOnly(api, loaded, opts, log, early);
  } catch (err) {
    body = thrownAt('plan', err, loaded.diagnostics);
  }
  return record(body, opts, startedAt);
}
