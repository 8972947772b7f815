/**
 * The task runner of an apply (applier.ts's `run` stage): each plan change's task runs its steps in order and
 * each step's phases in order (dry run → prepare → write → settle). Dry runs and writes run at most
 * `concurrency` at a time (slots.ts); a step's slot is freed as soon as its write is accepted, and settling
 * moves to the shared poller, so the next resources' dry runs and writes never wait behind a transition. A
 * task's next step starts only once the previous one settled (a replace creates after its delete is gone).
 * Webhook and data-source creates join batches, sent ahead of queued tasks.
 */
import type { Logger } from 'pino';
import { CancelledError, ErrorCode, classify } from '../errors.js';
import { isAwaitingManualStep } from '../plan/manual-steps.js';
import type { DesiredResource, PlanChange } from '../plan/types.js';
import type { ResourceOutcome } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import { joinsDataSourceBatch, type DataSourceBatches } from './data-source-batch.js';
import { taskKey } from './dependencies.js';
import type { Ledger } from './ledger.js';
import type { SlotLease, Slots } from './slots.js';
import { actionLabel, awaitingOutcome } from './outcome.js';
import { StillSettling, joinsWebhookBatch, taskFor, type ApplyTask, type Phase, type Step, type StepContext } from './tasks.js';
import { ApplyFailure } from './validation.js';
import type { WebhookBatch } from './webhook-batch.js';

const PHASES: readonly Phase[] = ['dryRun', 'prepare', 'write', 'settle'];
/** Webhook batches go first; then steps of tasks already under way (a replace's create), then new tasks. */
export const BATCH_PRIORITY = 2;
const CONTINUE_PRIORITY = 1;

/** What the `schedule` stage set up: the queue, the batches, and the order between tasks. */
export interface Schedule {
  queue: Slots;
  batch: WebhookBatch;
  dataSources: DataSourceBatches;
  /** The tasks each task waits for (by taskKey). */
  dependencies: Map<string, string[]>;
}

export interface RunnerDeps {
  changes: readonly PlanChange[];
  desired: ReadonlyMap<string, DesiredResource>;
  ctx: StepContext;
  ledger: Ledger;
  clock: Clock;
  logger: Logger;
  signal?: AbortSignal;
  onOutcome?: (outcome: ResourceOutcome, done: number, total: number) => void;
}

/** A task that did not start: skipped (blocked, aborted, past the deadline). */
class NotStarted extends ApplyFailure {}

type OutcomeBase = Pick<ResourceOutcome, 'resourceKind' | 'name' | 'action' | 'duplicateOf'>;

/** When a task started; checked each time it gets to run (it may wait for a slot): a task that cannot start is skipped. */
class StartGate {
  started?: number;
  constructor(private readonly r: RunnerDeps) {}

  check(): void {
    if (this.started !== undefined) return;
    const { signal, ledger, ctx, clock } = this.r;
    if (signal?.aborted) throw new NotStarted(ErrorCode.cancelled, 'aborted before it started');
    if (ledger.halted) throw new NotStarted(ledger.halted.code, `not started: ${ledger.halted.message}`);
    if (clock.monotonic() >= ctx.poll.deadline) throw new NotStarted(ErrorCode.settleTimeout, 'the apply --timeout passed before it started');
    this.started = clock.monotonic();
  }

  elapsed(): number {
    return this.started === undefined ? 0 : this.r.clock.monotonic() - this.started;
  }
}

export class TaskRunner {
  readonly outcomes: ResourceOutcome[] = [];
  private readonly finished = new Map<string, { promise: Promise<ResourceOutcome>; resolve(o: ResourceOutcome): void }>();

  constructor(
    private readonly r: RunnerDeps,
    private readonly s: Schedule,
  ) {
    // Only the tasks another one waits for get a promise of their outcome (most tasks have no dependant).
    for (const deps of s.dependencies.values()) {
      for (const key of deps) {
        if (this.finished.has(key)) continue;
        let resolve!: (o: ResourceOutcome) => void;
        const promise = new Promise<ResourceOutcome>((ok) => (resolve = ok));
        this.finished.set(key, { promise, resolve });
      }
    }
  }

  /** Every task to its outcome; then the queue's last work (batches). */
  async runAll(): Promise<void> {
    await Promise.all(this.r.changes.map((c) => this.runTask(c)));
    await this.s.queue.onIdle();
  }

  private finish(o: ResourceOutcome): void {
    if (this.finished.size > 0) this.finished.get(taskKey(o))?.resolve(o);
    this.outcomes.push(o);
    logOutcome(this.r.logger, o);
    this.r.onOutcome?.(o, this.outcomes.length, this.r.changes.length);
  }

  /**
   * One phase of one step, once. No phase repeats another layer's retries: the client owns network errors,
   * 5xx and 429, the task's own code owns 409 (integration.ts); a failure that comes out of them is the
   * task's outcome. Once the state could not be saved, no intent is recorded and no write is sent.
   */
  private runPhase(step: Step, phase: Phase, lease?: SlotLease): Promise<void> | undefined {
    // No bound copy and no promise for a phase the step does not have (issue #26: per-change CPU at 10,000).
    if (step[phase] === undefined) return undefined;
    if (this.r.signal?.aborted) throw new CancelledError(`stopped before the ${step.label} ${phase}: govops is shutting down; the next run resumes it`);
    if (phase === 'prepare' || phase === 'write') this.r.ledger.assertWritable();
    // in a slot: a wait on another's transition (a 409) frees it meanwhile (integration.ts retryOnConflict)
    const ctx = lease ? { ...this.r.ctx, outsideSlot: <T>(wait: () => Promise<T>) => lease.outside(wait, CONTINUE_PRIORITY) } : this.r.ctx;
    return step[phase](ctx);
  }

  /** One step: dry run and write hold a slot; saving the intent and settling do not (the shared poller waits). */
  private async runStep(step: Step, index: number, gate: StartGate): Promise<void> {
    if (step.batched) {
      gate.check();
      for (const phase of PHASES) {
        const running = this.runPhase(step, phase);
        if (running) await running;
      }
      return;
    }
    // A step without a dry run still enters through the queue: at most `concurrency` steps get going at once.
    const slot = (phase: Phase, priority: number): Promise<void> =>
      this.s.queue.add(
        (lease) => {
          gate.check();
          return this.runPhase(step, phase, lease) ?? Promise.resolve();
        },
        { priority },
      );
    await slot('dryRun', index > 0 ? CONTINUE_PRIORITY : 0);
    await this.runPhase(step, 'prepare');
    await slot('write', CONTINUE_PRIORITY);
    await this.runPhase(step, 'settle');
  }

  /** Wait for the tasks this one depends on; one that was not applied leaves this one unstarted. */
  private async awaitDependencies(deps: readonly string[]): Promise<void> {
    for (const dep of deps) {
      const o = await this.finished.get(dep)!.promise;
      if (o.result === 'settling') throw new NotStarted(ErrorCode.blocked, `not started: it waits for ${dep}, still creating or editing (a run after it settles enabled does it)`);
      if (o.result !== 'ok') throw new NotStarted(ErrorCode.blocked, `not started: it waits for ${dep}, which was not applied (${o.result})`);
    }
  }

  private async runTask(c: PlanChange): Promise<void> {
    if (isAwaitingManualStep(c)) return this.finish(awaitingOutcome(c));
    const base: OutcomeBase = {
      resourceKind: c.resourceKind,
      name: c.name,
      action: actionLabel(c),
      ...(c.duplicateOf !== undefined ? { duplicateOf: c.duplicateOf } : {}),
    };
    const gate = new StartGate(this.r);
    let task: ApplyTask | undefined;
    try {
      if (c.blocked) throw new NotStarted(ErrorCode.blocked, `blocked: ${c.blocked.message}`);
      const key = taskKey(c);
      const deps = this.s.dependencies.get(key);
      if (deps !== undefined && deps.length > 0) await this.awaitDependencies(deps);
      task = taskFor(c, this.r.desired.get(key), this.s.batch, this.s.dataSources);
      const steps = task.steps;
      for (let i = 0; i < steps.length; i++) await this.runStep(steps[i]!, i, gate);
      gate.check(); // a task without steps
      await this.r.ledger.saved();
      const liveId = task.liveId();
      this.finish({ ...base, result: 'ok', durationMs: gate.elapsed(), ...(liveId !== undefined ? { liveId } : {}) });
    } catch (err) {
      this.finish(await this.failedOutcome(base, err, gate, task?.liveId()));
    } finally {
      if (joinsWebhookBatch(c)) this.s.batch.leave(c.name);
      if (joinsDataSourceBatch(c)) this.s.dataSources.leave(c);
    }
  }

  /**
   * The outcome of a task that threw: skipped (it never started) or failed (what it recorded is saved). `liveId`: the
   * task's live id when it failed (a create accepted, then its wait failed: the integration it made), unless the
   * failure names one.
   */
  private async failedOutcome(base: OutcomeBase, err: unknown, gate: StartGate, liveId?: string): Promise<ResourceOutcome> {
    if (err instanceof NotStarted) return { ...base, result: 'skipped', durationMs: 0, error: err.message, code: err.code, failureClass: err.failureClass };
    // a settle's wait ended first: nothing was sent nor recorded, no failure
    if (err instanceof StillSettling) return { ...base, result: 'settling', durationMs: gate.elapsed(), error: err.message, ...(liveId !== undefined ? { liveId } : {}) };
    const { code, failureClass } = classify(err);
    const o: ResourceOutcome = {
      ...base,
      result: 'failed',
      durationMs: gate.elapsed(),
      error: err instanceof Error ? err.message : String(err),
      code,
      failureClass,
    };
    if (err instanceof ApplyFailure && err.validation?.length) o.validation = err.validation;
    if (err instanceof ApplyFailure && err.liveId) o.liveId = err.liveId;
    else if (liveId) o.liveId = liveId;
    try {
      await this.r.ledger.save(); // whatever was recorded before the failure (an intent, the id of a createError)
    } catch (saveErr) {
      o.error += `; state not saved: ${saveErr instanceof Error ? saveErr.message : String(saveErr)}`;
    }
    return o;
  }
}

/**
 * One line per outcome. No child logger per resource (issue #26: pino's per-child setup was 6% of a 10,000-webhook
 * apply even at warn level): the resource is a field of the line, built only when the level is on.
 */
function logOutcome(logger: Logger, o: ResourceOutcome): void {
  const level = o.result === 'blocked' ? 'debug' : o.result === 'settling' ? 'warn' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const resource = `${o.resourceKind}/${o.name}`;
  if (o.result === 'ok') logger.info({ resource, action: o.action, durationMs: o.durationMs, id: o.liveId }, 'applied');
  else if (o.result === 'settling') logger.warn({ resource, action: o.action, durationMs: o.durationMs, id: o.liveId, error: o.error }, 'still settling: not waited for further (the next run looks again)');
  else if (o.result === 'blocked') logger.debug({ resource, action: o.action, code: o.code }, 'awaiting manual step: not sent');
  // info: whoever carried the apply out reports the failures (the CLI's table, the daemon's warning).
  else logger.info({ resource, action: o.action, result: o.result, code: o.code, error: o.error, validation: o.validation }, 'not applied');
}
