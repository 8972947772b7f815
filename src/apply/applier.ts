/**
 * applyPlan: carry out a plan, as a sequence of named stages (after Flux's sub-reconcilers), each returning a
 * typed value; a stage that fails ends the apply with a typed failure keyed by the stage:
 *
 *   prepare  → the actionable changes, the tuning with its defaults, the ledger, the poll settings and the
 *              shared poller (refused: the plan has errors);
 *   schedule → the concurrency queue, the webhook and data-source batches, the order between tasks
 *              (refused: the dependencies have a cycle, a planner bug);
 *   run      → every task to its outcome (runner.ts): one change = one task of steps, each step dry run →
 *              prepare → write → settle, dry runs and writes at most `concurrency` at a time, settling on the
 *              shared poller (poller.ts);
 *   settle   → what was learned about transition times recorded, the state compacted (a compaction that fails
 *              only warns: every change is already on disk);
 *   result   → the outcomes, the state, `ok`, the poll counters.
 *
 * Each task is independent (one failure never stops the others), except that a state that cannot be saved
 * stops them all: no write is sent whose intent is not on disk. A phase runs once: retries belong to the
 * client (network errors, 5xx, 429) and to the task's 409 handling, never repeated here. The signal stops the
 * apply gracefully: no task or phase starts, waits end at once, a request in flight finishes and what it did is
 * saved; `forceSignal` also aborts requests in flight. Time (deadlines, polls, backoffs, durations, the state's
 * `updatedAt`) comes from the injected clock.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveWebhook } from '../api/types.js';
import { actionable } from '../plan/planner.js';
import type { DesiredResource, Plan, PlanChange } from '../plan/types.js';
import type { ResourceOutcome } from '../reconcile/types.js';
import type { GovopsState, JournalEntry } from '../state/types.js';
import { systemClock, type Clock } from '../util/clock.js';
import { DataSourceBatches } from './data-source-batch.js';
import { taskDependencies } from './dependencies.js';
import { Ledger } from './ledger.js';
import type { PollSettings } from './poll.js';
import { Poller, type PollCounters } from './poller.js';
import { BATCH_PRIORITY, TaskRunner, type Schedule } from './runner.js';
import { Slots } from './slots.js';
import { joinsWebhookBatch, type StepContext } from './tasks.js';
import { TransitionStats } from './transitions.js';
import { resolveTuning, type ApplyTuning, type ResolvedApplyTuning } from './tuning.js';
import { WebhookBatch } from './webhook-batch.js';

export { actionLabel, awaitingOutcome } from './outcome.js';

export interface ApplyInput {
  api: ServiceApi;
  plan: Plan;
  /** The resolved manifests the plan was made from (bodies with secrets). */
  desired: DesiredResource[];
  state: GovopsState;
  /** Save the whole state (never called concurrently with itself or `journal`). */
  persist(state: GovopsState): Promise<void>;
  /** Append changed entries to the state's journal (src/state/journal.ts); absent = every save is whole. */
  journal?(entries: JournalEntry[]): Promise<void>;
  logger: Logger;
  /** How: concurrency, overall timeout, status polling, webhook batches (tuning.ts; defaults filled there). */
  tuning: ApplyTuning;
  /**
   * When the --timeout ends, on the clock's monotonic reading: the reconcile's, counted from its start (the state's
   * lock and queries end by it too). Default: `tuning.timeoutMs` from now.
   */
  deadline?: number;
  /**
   * Graceful stop: nothing new starts, waits and retry sleeps end, requests in flight finish. With it (or forceSignal)
   * the api is bound to the run (`withSignal`), the --timeout included: the client retries nothing past it.
   */
  signal?: AbortSignal;
  /** Forced stop: requests in flight are aborted too. */
  forceSignal?: AbortSignal;
  revision?: string;
  /** Integrations the service listed at plan time (the poller weighs a list against status requests). */
  liveIntegrations?: number;
  /** Ids of the webhooks the service listed at plan time: a lost create answer is never resolved to one of them. */
  liveWebhookIds?: ReadonlySet<string>;
  /** Ids of the data sources the service listed at plan time: a lost create answer is never resolved to one of them. */
  liveDataSourceIds?: ReadonlySet<string>;
  /** The webhooks the service listed at plan time: a pending create records those that already have its identity. */
  liveWebhooks?: readonly LiveWebhook[];
  onOutcome?: (outcome: ResourceOutcome, done: number, total: number) => void;
  /** Time and timers (default: the system's): deadlines, polls, backoffs, durations, the state's `updatedAt`. */
  clock?: Clock;
  /** The plan's --no-adopt: what a task meets that govops does not own is never written (integration.ts OpContext). */
  noAdopt?: boolean;
}

export interface ApplyResult {
  outcomes: ResourceOutcome[];
  state: GovopsState;
  ok: boolean;
  /** Status requests and lists the poller made. */
  polls: PollCounters;
}

/** The stages of an apply, in order. */
export type ApplyStage = 'prepare' | 'schedule' | 'run' | 'settle' | 'result';

/** Why a stage ended the apply (nothing after it runs). */
export type ApplyStageFailure =
  | { stage: 'prepare'; reason: 'planHasErrors'; message: string }
  | { stage: 'schedule'; reason: 'dependencyCycle'; cause: unknown }
  | { stage: 'run'; reason: 'runnerFailed'; cause: unknown };

/** What a stage returns: its value, or the failure that ends the apply. */
export type StageResult<T> = { ok: true; value: T } | { ok: false; failure: ApplyStageFailure };

/** What the `prepare` stage sets up for the others. */
export interface Prepared {
  changes: PlanChange[];
  desired: ReadonlyMap<string, DesiredResource>;
  tuning: ResolvedApplyTuning;
  clock: Clock;
  /** The api bound to the run's signals. */
  api: ServiceApi;
  ledger: Ledger;
  poll: PollSettings;
  stats: TransitionStats;
  poller: Poller;
  ctx: StepContext;
}

/** What the `settle` stage did with the state file. */
export type Settled = { compacted: true } | { compacted: false; error: string };

export async function applyPlan(input: ApplyInput): Promise<ApplyResult> {
  const prepared = prepare(input);
  if (!prepared.ok) throw stageError(prepared.failure);
  const scheduled = schedule(input, prepared.value);
  if (!scheduled.ok) {
    prepared.value.poller.close();
    throw stageError(scheduled.failure);
  }
  const runner = new TaskRunner(
    {
      changes: prepared.value.changes,
      desired: prepared.value.desired,
      ctx: prepared.value.ctx,
      ledger: prepared.value.ledger,
      clock: prepared.value.clock,
      logger: input.logger,
      ...(input.signal ? { signal: input.signal } : {}),
      ...(input.onOutcome ? { onOutcome: input.onOutcome } : {}),
    },
    scheduled.value,
  );
  const ran = await run(runner, prepared.value.poller);
  if (!ran.ok) throw stageError(ran.failure);
  await settle(prepared.value, input.logger);
  return result(prepared.value, runner.outcomes);
}

/** A stage failure as the error applyPlan throws (the original error where there is one). */
function stageError(f: ApplyStageFailure): unknown {
  return f.stage === 'prepare' ? new Error(f.message) : f.cause;
}

/** Stage 1: the changes to carry out, the tuning, the ledger, the poll settings and the shared poller. */
export function prepare(input: ApplyInput): StageResult<Prepared> {
  const { plan, signal, forceSignal } = input;
  if (plan.errors.length > 0) {
    return { ok: false, failure: { stage: 'prepare', reason: 'planHasErrors', message: `the plan has errors; nothing applied: ${plan.errors.join('; ')}` } };
  }
  const tuning = resolveTuning(input.tuning);
  const clock = input.clock ?? systemClock;
  // Every retry sleep and wait listens to the run's signals (more than the default ten; requests in flight share one listener).
  for (const s of [signal, forceSignal]) if (s) setMaxListeners(0, s);
  const deadline = input.deadline ?? clock.monotonic() + tuning.timeoutMs;
  // The client's retries end at the deadline too: none sleeps or starts past it (DeadlineError, GOVOPS_SETTLE_TIMEOUT).
  // Bound with the run's signals, which every apply of the CLI and the daemon has.
  const api = signal || forceSignal ? input.api.withSignal(signal ?? new AbortController().signal, forceSignal, { clock, at: deadline }) : input.api;
  const changes = actionable(plan);
  const ledger = new Ledger(input.state, input.persist, {
    revision: input.revision,
    expectedResources: input.state.resources.length + changes.length,
    now: () => new Date(clock.now()),
    ...(input.journal ? { journal: input.journal.bind(input) } : {}),
  });
  const poll: PollSettings = {
    clock,
    deadline,
    initialMs: tuning.pollIntervalMs,
    maxMs: tuning.pollMaxIntervalMs,
    ...(signal ? { signal } : {}),
  };
  const stats = new TransitionStats(input.state.transitions);
  const poller = new Poller({
    api,
    stats,
    clock,
    minMs: poll.initialMs,
    maxMs: Math.max(poll.initialMs, poll.maxMs),
    ratePerSec: tuning.pollRate,
    listThreshold: tuning.pollListThreshold,
    ...(input.liveIntegrations !== undefined ? { listSize: input.liveIntegrations } : {}),
    deadline: poll.deadline,
    ...(signal ? { signal } : {}),
    logger: input.logger,
  });
  const desired = new Map(input.desired.map((d) => [`${d.kind}/${d.name}`, d]));
  const ctx: StepContext = { api, ledger, poll, poller, ...(input.noAdopt === true ? { noAdopt: true } : {}) };
  return { ok: true, value: { changes, desired, tuning, clock, api, ledger, poll, stats, poller, ctx } };
}

/**
 * Stage 2: the concurrency queue, the batches, and the order between tasks (a data source after its integration,
 * data source deletes before their integration's delete): each task waits for the outcomes of those it depends on.
 */
export function schedule(input: ApplyInput, p: Prepared): StageResult<Schedule> {
  let dependencies: Map<string, string[]>;
  try {
    dependencies = taskDependencies(p.changes);
  } catch (cause) {
    return { ok: false, failure: { stage: 'schedule', reason: 'dependencyCycle', cause } };
  }
  // lists are spaced more while dry runs and writes hold or wait for slots (poller.ts, IDLE_LIST_SPACING)
  const queue = new Slots(p.tuning.concurrency, () => p.poller.writesIdle());
  p.poller.watchWrites(() => !queue.idle);
  const enqueue = <T>(fn: () => Promise<T>): Promise<T> => queue.add(fn, { priority: BATCH_PRIORITY });
  const batch = new WebhookBatch(
    p.changes.filter(joinsWebhookBatch).map((c) => c.name),
    { api: p.api, ledger: p.ledger, poll: p.poll, logger: input.logger, enqueue, ...(input.liveWebhookIds ? { preexistingWebhooks: input.liveWebhookIds } : {}), ...(input.liveWebhooks ? { liveWebhooks: input.liveWebhooks } : {}) },
    p.tuning.webhookBatch,
  );
  const dataSources = new DataSourceBatches(p.changes, { api: p.api, ledger: p.ledger, poll: p.poll, logger: input.logger, enqueue, ...(input.liveDataSourceIds ? { preexisting: input.liveDataSourceIds } : {}) });
  return { ok: true, value: { queue, batch, dataSources, dependencies } };
}

/** Stage 3: every task to its outcome; the poller is closed however it ends. */
export async function run(runner: TaskRunner, poller: Poller): Promise<StageResult<void>> {
  try {
    await runner.runAll();
    return { ok: true, value: undefined };
  } catch (cause) {
    return { ok: false, failure: { stage: 'run', reason: 'runnerFailed', cause } };
  } finally {
    poller.close();
  }
}

/** Stage 4: record what was learned about transition times, and compact the state. */
export async function settle(p: Prepared, logger: Logger): Promise<Settled> {
  if (p.stats.dirty) p.ledger.setField('transitions', p.stats.toJSON());
  try {
    await p.ledger.finish();
    return { compacted: true };
  } catch (err) {
    // Every change is already on disk (state + journal); only the compaction into one file failed.
    const error = err instanceof Error ? err.message : String(err);
    logger.warn({ err: { message: error } }, 'state not compacted: the changes this apply recorded are kept (the journal beside a state file, the rows of a PostgreSQL state) and read by the next run');
    return { compacted: false, error };
  }
}

/**
 * Stage 5: the result. A change awaiting a manual step is not a failure (apply-action exits 3 for it), nor is a settle
 * still under way when its wait ended (`settling`).
 */
export function result(p: Prepared, outcomes: ResourceOutcome[]): ApplyResult {
  const ok = outcomes.length === p.changes.length && outcomes.every((o) => o.result === 'ok' || o.result === 'blocked' || o.result === 'settling');
  return { outcomes, state: p.ledger.current, ok, polls: { ...p.poller.counters } };
}
