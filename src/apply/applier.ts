/**
 * applyPlan: carry out a plan. Every actionable change becomes a task (tasks.ts); one runner runs each
 * task's steps in order and each step's phases in order (dry run → write → settle). Dry runs and writes
 * run at most `concurrency` at a time (p-queue); a step's slot is freed as soon as its write is
 * accepted, and settling moves to the shared poller (poller.ts), so the next resources' dry runs and
 * writes never wait behind a transition. One change at a time per integration still holds: a task's
 * next step starts only once the previous one settled (a replace creates after its delete is gone).
 * Webhook creates join batches (webhook-batch.ts), sent ahead of queued tasks.
 *
 * Each task is independent (one failure never stops the others), except that a state that cannot be saved
 * stops them all: no write is sent whose intent is not on disk. A phase runs once: retries belong to the
 * client (network errors, 5xx, 429) and to the task's 409 handling, never repeated here. The signal stops the apply gracefully: no task or phase starts, waits end at once, a request
 * in flight finishes and what it did is saved; `forceSignal` also aborts requests in flight.
 */
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import { CancelledError, ErrorCode, classify } from '../errors.js';
import { isAwaitingManualStep } from '../plan/manual-steps.js';
import { actionable } from '../plan/planner.js';
import type { DesiredResource, Plan, PlanChange } from '../plan/types.js';
import type { OutcomeAction, ResourceOutcome } from '../reconcile/types.js';
import type { GovopsState } from '../state/types.js';
import type { JournalEntry } from '../state/types.js';
import { DataSourceBatches, joinsDataSourceBatch } from './data-source-batch.js';
import { taskDependencies, taskKey } from './dependencies.js';
import { Ledger } from './ledger.js';
import { Poller, type PollCounters } from './poller.js';
import { joinsWebhookBatch, taskFor, type Phase, type Step, type StepContext } from './tasks.js';
import { TransitionStats } from './transitions.js';
import { ApplyFailure } from './validation.js';
import { WebhookBatch, type BatchLimits } from './webhook-batch.js';

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
  concurrency?: number;
  /** Overall timeout in ms (default 10 minutes). */
  timeoutMs?: number;
  /** Graceful stop: nothing new starts, waits and retry sleeps end, requests in flight finish. */
  signal?: AbortSignal;
  /** Forced stop: requests in flight are aborted too. */
  forceSignal?: AbortSignal;
  revision?: string;
  /** Shortest interval between two status polls of one integration (--poll-min; default 25 ms). */
  pollIntervalMs?: number;
  /** Longest interval between two status polls of one integration (--poll-max; default 30 s). */
  pollMaxIntervalMs?: number;
  /** Poll requests (status and lists) per second at most (--poll-rate; default 50). */
  pollRate?: number;
  /** Polls due at once from which one GET /integrations answers for all (default 4; Infinity: never). */
  pollListThreshold?: number;
  /** Integrations the service listed at plan time (the poller weighs a list against status requests). */
  liveIntegrations?: number;
  /** Ids of the webhooks the service listed at plan time: a lost create answer is never resolved to one of them. */
  liveWebhookIds?: ReadonlySet<string>;
  /** Webhook creates per POST: at most this many items and bytes (--webhook-batch-size / -bytes). */
  webhookBatch?: Partial<BatchLimits>;
  onOutcome?: (outcome: ResourceOutcome, done: number, total: number) => void;
  now?: () => Date;
}

export interface ApplyResult {
  outcomes: ResourceOutcome[];
  state: GovopsState;
  ok: boolean;
  /** Status requests and lists the poller made. */
  polls: PollCounters;
}

export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_POLL_MIN_MS = 25;
export const DEFAULT_POLL_MAX_MS = 30_000;
export const DEFAULT_POLL_RATE = 50;
export const DEFAULT_POLL_LIST_THRESHOLD = 4;
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

const PHASES: readonly Phase[] = ['dryRun', 'prepare', 'write', 'settle'];
/** Webhook batches go first; then steps of tasks already under way (a replace's create), then new tasks. */
const BATCH_PRIORITY = 2;
const CONTINUE_PRIORITY = 1;

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

export async function applyPlan(input: ApplyInput): Promise<ApplyResult> {
  const { plan, logger, signal } = input;
  if (plan.errors.length > 0) throw new Error(`the plan has errors; nothing applied: ${plan.errors.join('; ')}`);
  const desired = new Map(input.desired.map((d) => [`${d.kind}/${d.name}`, d]));
  const changes = actionable(plan);
  const total = changes.length;
  const outcomes: ResourceOutcome[] = [];
  // Every request in flight, retry sleep and wait listens to the run's signals (more than the default ten).
  for (const s of [signal, input.forceSignal]) if (s) setMaxListeners(0, s);
  const api = signal || input.forceSignal ? input.api.withSignal(signal ?? new AbortController().signal, input.forceSignal) : input.api;
  const ledger = new Ledger(input.state, input.persist, {
    revision: input.revision,
    now: input.now ?? (() => new Date()),
    ...(input.journal ? { journal: input.journal.bind(input) } : {}),
  });
  const poll = {
    deadline: Date.now() + (input.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    initialMs: input.pollIntervalMs ?? DEFAULT_POLL_MIN_MS,
    maxMs: input.pollMaxIntervalMs ?? DEFAULT_POLL_MAX_MS,
    ...(signal ? { signal } : {}),
  };
  const stats = new TransitionStats(input.state.transitions);
  const poller = new Poller({
    api,
    stats,
    minMs: poll.initialMs,
    maxMs: Math.max(poll.initialMs, poll.maxMs),
    ratePerSec: input.pollRate ?? DEFAULT_POLL_RATE,
    listThreshold: input.pollListThreshold ?? DEFAULT_POLL_LIST_THRESHOLD,
    ...(input.liveIntegrations !== undefined ? { listSize: input.liveIntegrations } : {}),
    deadline: poll.deadline,
    ...(signal ? { signal } : {}),
    logger,
  });
  const ctx: StepContext = { api, ledger, poll, poller };
  const queue = new PQueue({ concurrency: Math.max(1, input.concurrency ?? DEFAULT_CONCURRENCY) });
  const batch = new WebhookBatch(
    changes.filter(joinsWebhookBatch).map((c) => c.name),
    {
      api, ledger, poll, logger, enqueue: (fn) => queue.add(fn, { priority: BATCH_PRIORITY }),
      ...(input.liveWebhookIds ? { preexistingWebhooks: input.liveWebhookIds } : {}),
    },
    input.webhookBatch,
  );

  const dataSources = new DataSourceBatches(changes, {
    api,
    ledger,
    poll: ctx.poll,
    logger,
    enqueue: (fn) => queue.add(fn, { priority: BATCH_PRIORITY }),
  });
  // Ordering between tasks (a data source after its integration, data source deletes before their
  // integration's delete): each task waits for the outcomes of the tasks it depends on.
  const dependencies = taskDependencies(changes);
  const finished = new Map<string, { promise: Promise<ResourceOutcome>; resolve(o: ResourceOutcome): void }>();
  for (const c of changes) {
    let resolve!: (o: ResourceOutcome) => void;
    const promise = new Promise<ResourceOutcome>((r) => (resolve = r));
    finished.set(taskKey(c), { promise, resolve });
  }

  const finish = (o: ResourceOutcome): void => {
    finished.get(taskKey(o))?.resolve(o);
    outcomes.push(o);
    // No child logger per resource (issue #26: pino's per-child setup was 6% of a 10,000-webhook apply even at
    // warn level): the resource is a field of the line, built only when the level is on.
    const level = o.result === 'blocked' ? 'debug' : 'info';
    if (logger.isLevelEnabled(level)) {
      const resource = `${o.resourceKind}/${o.name}`;
      if (o.result === 'ok') logger.info({ resource, action: o.action, durationMs: o.durationMs, id: o.liveId }, 'applied');
      else if (o.result === 'blocked') logger.debug({ resource, action: o.action, code: o.code }, 'awaiting manual step: not sent');
      // info: whoever carried the apply out reports the failures (the CLI's table, the daemon's warning).
      else logger.info({ resource, action: o.action, result: o.result, code: o.code, error: o.error, validation: o.validation }, 'not applied');
    }
    input.onOutcome?.(o, outcomes.length, total);
  };

  /**
   * One phase of one step, once. No phase repeats another layer's retries: the client owns network errors,
   * 5xx and 429, the task's own code owns 409 (integration.ts); a failure that comes out of them is the
   * task's outcome. Once the state could not be saved, no intent is recorded and no write is sent.
   */
  const runPhase = async (step: Step, phase: Phase): Promise<void> => {
    const call = step[phase]?.bind(step);
    if (!call) return;
    if (signal?.aborted) throw new CancelledError(`stopped before the ${step.label} ${phase}: govops is shutting down; the next run resumes it`);
    if (phase === 'prepare' || phase === 'write') ledger.assertWritable();
    await call(ctx);
  };
  const runPhases = async (step: Step, phases: readonly Phase[]): Promise<void> => {
    for (const phase of phases) await runPhase(step, phase);
  };

  const runTask = async (c: PlanChange): Promise<void> => {
    const base: Pick<ResourceOutcome, 'resourceKind' | 'name' | 'action' | 'duplicateOf'> = {
      resourceKind: c.resourceKind,
      name: c.name,
      action: actionLabel(c),
      ...(c.duplicateOf !== undefined ? { duplicateOf: c.duplicateOf } : {}),
    };
    let started: number | undefined;
    /** Checked when the task gets to run (it may wait for a slot): a task that cannot start is skipped. */
    const start = (): void => {
      if (started !== undefined) return;
      if (signal?.aborted) throw new NotStarted(ErrorCode.cancelled, 'aborted before it started');
      if (ledger.halted) throw new NotStarted(ErrorCode.stateWriteFailed, `not started: ${ledger.halted.message}`);
      if (Date.now() >= ctx.poll.deadline) throw new NotStarted(ErrorCode.settleTimeout, 'the apply --timeout passed before it started');
      started = Date.now();
    };
    if (isAwaitingManualStep(c)) {
      finish(awaitingOutcome(c));
      return;
    }
    try {
      if (c.blocked) throw new NotStarted(ErrorCode.blocked, `blocked: ${c.blocked.message}`);
      for (const dep of dependencies.get(taskKey(c)) ?? []) {
        const o = await finished.get(dep)!.promise;
        if (o.result !== 'ok') throw new NotStarted(ErrorCode.blocked, `not started: it waits for ${dep}, which was not applied (${o.result})`);
      }
      const task = taskFor(c, desired.get(`${c.resourceKind}/${c.name}`), batch, dataSources);
      for (const [i, step] of task.steps.entries()) {
        if (step.batched) {
          start();
          await runPhases(step, PHASES);
          continue;
        }
        // Dry run and write hold a slot; saving the intent and settling do not (the shared poller waits).
        // A step without a dry run still enters through the queue: at most `concurrency` steps get going at once.
        await queue.add(
          () => {
            start();
            return runPhase(step, 'dryRun');
          },
          { priority: i > 0 ? CONTINUE_PRIORITY : 0 },
        );
        await runPhase(step, 'prepare');
        await queue.add(
          () => {
            start();
            return runPhase(step, 'write');
          },
          { priority: CONTINUE_PRIORITY },
        );
        await runPhase(step, 'settle');
      }
      start(); // a task without steps
      await ledger.save();
      const liveId = task.liveId();
      finish({ ...base, result: 'ok', durationMs: Date.now() - (started ?? Date.now()), ...(liveId !== undefined ? { liveId } : {}) });
    } catch (err) {
      if (err instanceof NotStarted) {
        finish({ ...base, result: 'skipped', durationMs: 0, error: err.message, code: err.code, failureClass: err.failureClass });
        return;
      }
      const { code, failureClass } = classify(err);
      const o: ResourceOutcome = {
        ...base,
        result: 'failed',
        durationMs: started === undefined ? 0 : Date.now() - started,
        error: err instanceof Error ? err.message : String(err),
        code,
        failureClass,
      };
      if (err instanceof ApplyFailure && err.validation?.length) o.validation = err.validation;
      if (err instanceof ApplyFailure && err.liveId) o.liveId = err.liveId;
      try {
        await ledger.save(); // whatever was recorded before the failure (an intent, the id of a createError)
      } catch (saveErr) {
        o.error += `; state not saved: ${saveErr instanceof Error ? saveErr.message : String(saveErr)}`;
      }
      finish(o);
    } finally {
      if (joinsWebhookBatch(c)) batch.leave(c.name);
      if (joinsDataSourceBatch(c)) dataSources.leave(c);
    }
  };

  try {
    await Promise.all(changes.map(runTask));
    await queue.onIdle();
  } finally {
    poller.close();
  }
  if (stats.dirty) ledger.setField('transitions', stats.toJSON());
  try {
    await ledger.finish();
  } catch (err) {
    // Every change is already on disk (state + journal); only the compaction into one file failed.
    logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'state not compacted; the journal beside it holds the latest changes');
  }
  // a change awaiting a manual step is not a failure (apply-action exits 3 for it)
  const ok = outcomes.length === total && outcomes.every((o) => o.result === 'ok' || o.result === 'blocked');
  return { outcomes, state: ledger.current, ok, polls: { ...poller.counters } };
}

/** A task that did not start: skipped (blocked, aborted, past the deadline). */
class NotStarted extends ApplyFailure {}
