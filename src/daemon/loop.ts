/**
 * The reconcile loop: one reconcile at a time. Revisions arriving during a reconcile are coalesced
 * (only the newest runs next). A periodic resync plans the last GOOD revision against live state
 * (applying it with self-heal). Invalid revisions are rejected whole and the last good one stays in
 * force; failed applies and an unreachable service are retried with exponential backoff.
 * The loop always works on the newest revision: while one waits to be applied (it failed and is retried),
 * a due resync tries that revision again instead of planning the older last good one, and a failure of
 * an older revision never takes the retry over (`waiting` in the snapshot says which revision waits).
 * The reconcile and the clock are injected (`reconcile`, `clock`), so the loop is testable with any real
 * function and without sleeping.
 */
import type { Logger } from 'pino';
import type { ReconcileResult } from '../reconcile/types.js';
import type { Revision } from '../sources/types.js';
import { ErrorCode, type FailureInfo } from '../errors.js';
import { backoffMs, heldBack, isSuccess, judgeResult, judgeThrown, onlyCancelled, type Judgement, type Verdict } from './classify.js';
import { backgroundClock, type Clock, type TimerHandle } from '../util/clock.js';
import { driftOf, logDrift, logRejected, type DriftReport } from './report.js';
import { SECRET_FILE_UNREADABLE } from '../manifests/secrets.js';

export type Reason = 'revision' | 'resync' | 'retry';

export interface ReconcileRequest {
  revision: Revision;
  apply: boolean;
  reason: Reason;
  /** Graceful stop (shutdown): nothing new starts, waits end, requests in flight finish. */
  signal: AbortSignal;
  /** Forced stop, near the end of the grace period: requests in flight are aborted, state is saved. */
  forceSignal: AbortSignal;
  /** Child logger bound to the reason (the reconcile binds the revision itself, once). */
  logger: Logger;
}

export type ReconcileFn = (request: ReconcileRequest) => Promise<ReconcileResult>;

export interface Attempt {
  revision: string;
  reason: Reason;
  apply: boolean;
  verdict: Verdict;
  /** Why a non-success verdict: the failure's code and class. */
  failure?: FailureInfo;
  /** What the loop does next: try again soon (backoff), at the resync period (slow), or wait for news. */
  retry?: Judgement['retry'];
  startedAt: string;
  finishedAt: string;
  durationSec: number;
  result?: ReconcileResult;
  error?: string;
}

export interface LoopOptions {
  reconcile: ReconcileFn;
  logger: Logger;
  /** Drift check period (default 5 min). */
  resyncMs: number;
  selfHeal: boolean;
  /** --observe: every reconcile only plans (revisions, resyncs, retries); nothing is ever written. */
  observe?: boolean;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Called after every attempt (metrics, status, snapshot retention). */
  onAttempt?(attempt: Attempt, loop: ReconcileLoop): void | Promise<void>;
  /** Called when an attempt starts. */
  onStart?(request: Omit<ReconcileRequest, 'signal' | 'forceSignal' | 'logger'>): void;
  /** Time and the timers of retries and resyncs (default: the system's). The shutdown grace period is wall time. */
  clock?: Clock;
  /**
   * Whether a revision rejected only for secret files it could not read would load now (its manifests read, every
   * secret resolved; nothing sent): asked at each resync while it is the newest revision (`secretWait`).
   */
  recheck?(revision: Revision, signal: AbortSignal): Promise<boolean>;
  /**
   * Whether govops can work now, with no revision in force: the state read and the service listed (nothing written).
   * Asked when a revision is rejected and no revision was good since the start (a restart while the newest commit is
   * invalid), then at each resync, and with backoff while it fails: it decides readiness in place of a reconcile.
   */
  probe?(signal: AbortSignal): Promise<void>;
}

/** A revision that arrived and is not applied yet (queued, running, or failed and retried). */
export interface WaitingRevision {
  revision: string;
  /** When the source saw it. */
  since: string;
  /** `queued`: runs next; `running`: being reconciled; `retrying`: failed, tried again at `nextTryAt`. */
  state: 'queued' | 'running' | 'retrying';
  /** Attempts made so far. */
  attempts: number;
  /** Why the last attempt failed. */
  lastError?: { code: string; failureClass: string; message?: string; at: string };
  nextTryAt?: string;
}

export interface LoopSnapshot {
  running?: { revision: string; reason: Reason; since: string };
  pending?: string;
  lastGood?: Revision;
  lastApplied?: { revision: string; at: string };
  lastAttempt?: Attempt;
  lastSuccess?: Attempt;
  rejected?: Attempt;
  drift: boolean;
  /** The last drift a resync found (kept after it is repaired), by resource and field. */
  lastDrift?: DriftReport;
  ready: boolean;
  nextRetryAt?: string;
  consecutiveFailures: number;
  /** The newest revision not applied yet, if any (with --observe: not planned yet). */
  waiting?: WaitingRevision;
  /**
   * Nothing in force (every revision since the start rejected): whether the state and the service could be read when
   * last looked at (`probe`), newer than the last attempt. Readiness follows it.
   */
  probe?: ProbeResult;
}

export interface ProbeResult {
  ok: boolean;
  at: string;
  failure?: FailureInfo;
  verdict?: Verdict;
  error?: string;
}

interface Outstanding {
  revision: Revision;
  since: string;
  /** `since` on the clock's monotonic reading: how long it has waited (a step of the time of day does not move it). */
  sinceMono: number;
  attempts: number;
  lastError?: WaitingRevision['lastError'];
}

export class ReconcileLoop {
  private pending?: Revision;
  private lastGood?: Revision;
  private retryTarget?: Revision;
  /**
   * The newest revision, rejected only because secret files could not be read (`secret-file-unreadable`): files the
   * operator supplies (a `--secrets-dir` mounted from a Kubernetes Secret) can appear without a commit. Each resync
   * asks `recheck` first; once they resolve, the revision runs as a new one.
   */
  private secretWait?: Revision;
  /** The id of the source's last publication (submit): what `republished` compares with. */
  private lastPublished?: string;
  private retryApply = true;
  /** The retry is of a failed resync (a drift check), not of a revision: what it finds is drift. */
  private retryOfResync = false;
  private retryDue = false;
  private resyncDue = false;
  private retryTimer?: TimerHandle;
  private resyncTimer?: TimerHandle;
  /** A probe is due (a revision rejected with nothing in force, or its backoff after a failed probe ended). */
  private probeDue = false;
  private probeFailures = 0;
  private probeTimer?: TimerHandle;
  /** Revisions submitted and not applied yet, by id (only those the loop may still run are kept). */
  private outstanding = new Map<string, Outstanding>();
  private runningRevision?: Revision;
  private readonly clock: Clock;
  private failures = 0;
  private worker?: Promise<void>;
  private abort?: AbortController;
  private force?: AbortController;
  private stopped = false;
  private state: Omit<LoopSnapshot, 'lastGood' | 'pending' | 'consecutiveFailures'> = { drift: false, ready: false };
  /**
   * A reconcile went as far as govops can take it: it succeeded, or it applied and only some resources failed (a 422:
   * the service was reached, the revision is valid, the state was written). Readiness needs one, in this process.
   */
  private everWorked = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly opts: LoopOptions) {
    this.clock = opts.clock ?? backgroundClock;
  }

  /**
   * A new revision from the source: runs next (replacing any revision still waiting); the revision in force published
   * again is not one (`republished`). A revision the source saw before the one waiting (queued or retried) is not new:
   * a replica elected leader submits its last good revision again (`submitAgain`: run.ts, standby.ts). It never takes
   * that newer one's place (its success cleared the retry, or it replaced the queued one: the newer revision was never
   * applied); the newer one runs instead, now when it was being retried. Submitted while a newer one runs, it is
   * queued and looked at again when it would run (next()).
   */
  submit(revision: Revision): void {
    if (this.stopped) return;
    // Only the source's last publication given again can be a re-publication: the revision in force published after
    // another one (a rejected edit undone: the manifest fixed back to what is in force) is news, looked at now (its
    // attempt clears the rejected one's error in /status).
    const again = this.lastPublished === revision.id;
    this.lastPublished = revision.id;
    if (again && this.republished(revision)) return;
    this.queue(revision);
  }

  /**
   * A revision the loop had, to reconcile as a new one (a replica elected leader applies what it only planned as a
   * standby: run.ts, standby.ts). Unlike `submit`, the revision in force given again is not taken for a re-publication.
   */
  submitAgain(revision: Revision): void {
    if (this.stopped) return;
    // It waits from now (the election), not from its arrival: the revision in force arrived maybe days ago, and the
    // old leader applied it; counted from then, govops_revision_waiting_seconds fired its > 900 alert at each failover.
    this.queue(revision, true);
  }

  /**
   * The source published the revision in force, or the one being retried, again: its folder was gone and is written
   * again (after an I/O failure, or found missing at a look). It is no new revision: applied as one, it put drift back
   * without --self-heal. Nothing else waiting or running, it is left to the resync, or retried now (as what it was:
   * the retry of a plan-only resync stays plan-only). Another revision waits or runs: it is news (a rollback to it).
   */
  private republished(revision: Revision): boolean {
    const same = (r: Revision | undefined): boolean => r?.id === revision.id;
    if (!same(this.lastGood) && !same(this.retryTarget)) return false;
    if ([this.pending, this.runningRevision, this.retryTarget].some((r) => r && !same(r))) return false;
    this.opts.logger.debug({ revision: revision.id }, 'revision published again (its folder restored): not a new revision');
    if (this.retryTarget) {
      this.retryDue = true;
      this.kick();
    }
    return true;
  }

  private queue(revision: Revision, fromNow = false): void {
    const newer = [this.pending, this.retryTarget].find((w) => w && w.id !== revision.id && seenBefore(revision, w));
    if (newer) {
      if (newer === this.retryTarget && !this.pending) this.retryDue = true;
      this.kick();
      return;
    }
    this.pending = revision;
    if (!this.outstanding.has(revision.id)) {
      // the age the source's observedAt gives it now (the time of day, read once), then counted on the monotonic clock
      const observed = fromNow ? NaN : Date.parse(revision.observedAt);
      const age = Number.isFinite(observed) ? Math.max(0, this.clock.now() - observed) : 0;
      const since = (!fromNow && revision.observedAt) || new Date(this.clock.now()).toISOString();
      this.outstanding.set(revision.id, { revision, since, sinceMono: this.clock.monotonic() - age, attempts: 0 });
    }
    this.kick();
  }

  /** Ask for a drift check now (also what the resync timer does). */
  resyncNow(): void {
    if (this.stopped) return;
    this.resyncDue = true;
    this.kick();
  }

  snapshot(): LoopSnapshot {
    const waiting = this.waitingRevision();
    return {
      ...this.state,
      pending: this.pending?.id,
      lastGood: this.lastGood,
      consecutiveFailures: this.failures,
      ...(waiting ? { waiting } : {}),
    };
  }

  /** The newest revision the loop still has to apply: queued, running, or retried. */
  private waitingRevision(): WaitingRevision | undefined {
    const w = this.waitingEntry();
    if (!w) return undefined;
    const [o, state] = w;
    return {
      revision: o.revision.id,
      since: o.since,
      state,
      attempts: o.attempts,
      ...(o.lastError ? { lastError: o.lastError } : {}),
      ...(state === 'retrying' && this.state.nextRetryAt ? { nextTryAt: this.state.nextRetryAt } : {}),
    };
  }

  /** How long (ms) the revision waiting to be applied has waited, on the monotonic clock; undefined when none waits. */
  waitingForMs(): number | undefined {
    const w = this.waitingEntry();
    return w && Math.max(0, this.clock.monotonic() - w[0].sinceMono);
  }

  private waitingEntry(): [Outstanding, WaitingRevision['state']] | undefined {
    const candidates: Array<[Revision | undefined, WaitingRevision['state']]> = [
      [this.pending, 'queued'],
      [this.runningRevision, 'running'],
      [this.retryTarget, 'retrying'],
    ];
    for (const [revision, state] of candidates) {
      const o = revision && this.outstanding.get(revision.id);
      if (o) return [o, state];
    }
    return undefined;
  }

  /** Ids of revisions the loop may still need (their folders must stay on disk). */
  inUse(): string[] {
    return [this.lastGood, this.pending, this.retryTarget, this.secretWait].filter((r): r is Revision => !!r).map((r) => r.id);
  }

  /** Resolves when no work is running or queued (tests, benchmarks). */
  idle(): Promise<void> {
    if (!this.worker) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /**
   * Stop: accept no new work and stop the in-flight reconcile gracefully (nothing new starts, waits end,
   * requests in flight finish and their results are saved). Near the end of `graceMs` (80%), requests
   * still in flight are aborted so the state is saved before the grace period is over. Resolves true
   * when the reconcile finished within the grace period.
   */
  async stop(graceMs: number): Promise<boolean> {
    this.stopped = true;
    this.pending = undefined;
    if (this.retryTimer) this.clock.clearTimeout(this.retryTimer);
    if (this.resyncTimer) this.clock.clearTimeout(this.resyncTimer);
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    const worker = this.worker;
    if (!worker) return true;
    this.abort?.abort(new Error('govops is shutting down'));
    const timers: NodeJS.Timeout[] = [];
    timers.push(setTimeout(() => this.force?.abort(new Error('grace period nearly over')), Math.floor(graceMs * 0.8)));
    const timedOut = new Promise<boolean>((r) => timers.push(setTimeout(() => r(false), graceMs)));
    const done = await Promise.race([worker.then(() => true), timedOut]);
    for (const t of timers) clearTimeout(t);
    return done;
  }

  /** After stop(): abort the requests still in flight now, not at 80% of the grace (a second SIGINT/SIGTERM). */
  forceStop(): void {
    if (this.stopped) this.force?.abort(new Error('stopped at once (a second signal)'));
  }

  private kick(): void {
    if (this.worker || this.stopped) return;
    this.worker = this.pump().finally(() => {
      this.worker = undefined;
      for (const w of this.idleWaiters.splice(0)) w();
    });
  }

  private next(): { revision: Revision; apply: boolean; reason: Reason } | undefined {
    if (this.pending) {
      const revision = this.pending;
      this.pending = undefined;
      // A revision submitted again (a replica elected leader) while a newer one ran: once that one is the last good
      // revision or is retried, the older one is not applied after it (it would roll the newer one back, and its
      // success would end the newer one's retry). It still runs when the newer one was rejected.
      const newer = [this.retryTarget, this.lastGood].find((w) => w && w.id !== revision.id && seenBefore(revision, w));
      if (!newer) return { revision, apply: !this.opts.observe, reason: 'revision' };
      this.outstanding.delete(revision.id);
      if (newer === this.retryTarget) this.retryDue = true;
    }
    // A resync due while a revision is retried tries that revision (the newest) again, never an older one.
    if ((this.retryDue || this.resyncDue) && this.retryTarget) {
      this.retryDue = false;
      this.resyncDue = false;
      return { revision: this.retryTarget, apply: this.retryApply && !this.opts.observe, reason: 'retry' };
    }
    if (this.resyncDue && this.lastGood) {
      this.resyncDue = false;
      return { revision: this.lastGood, apply: this.opts.selfHeal && !this.opts.observe, reason: 'resync' };
    }
    return undefined;
  }

  private async pump(): Promise<void> {
    for (;;) {
      // (awaited only when there is something to look at: a revision given now starts at once, as it did)
      if (this.recheckDue()) await this.recheckSecretWait();
      if (this.probeIsDue()) await this.runProbe();
      const work = this.next();
      if (!work || this.stopped) return;
      await this.runOne(work.revision, work.apply, work.reason);
    }
  }

  private recheckDue(): boolean {
    return !!this.secretWait && !!this.opts.recheck && this.resyncDue && !this.pending && !this.retryTarget && !this.stopped;
  }

  /**
   * A resync is due and nothing else waits: the revision rejected for unreadable secret files is looked at first. If
   * its secrets resolve now it runs as a new revision (in place of the resync: its attempt looks at the service);
   * otherwise the resync goes on as usual, and nothing is recorded (no attempt: no log line, event or count again).
   */
  private async recheckSecretWait(): Promise<void> {
    const waiting = this.secretWait!;
    let loads = false;
    // (a stop ends it, as it ends an attempt: a render command it runs is stopped)
    this.abort = new AbortController();
    try {
      loads = await this.opts.recheck!(waiting, this.abort.signal);
    } catch (err) {
      this.opts.logger.debug({ revision: waiting.id, err: { message: (err as Error).message } }, 'rejected revision could not be looked at again');
    }
    if (!loads || this.secretWait !== waiting || this.pending || this.retryTarget || this.stopped) return;
    this.opts.logger.info({ revision: waiting.id }, 'the secret files of the rejected revision can be read now: applying it');
    this.secretWait = undefined;
    this.queue(waiting);
  }

  /** A probe's finding dates from before this attempt; a rejection with nothing in force asks for a new one. */
  private probeAfter(v: Verdict): void {
    this.state.probe = undefined;
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.probeFailures = 0;
    this.probeDue = v === 'invalid' && !this.lastGood;
  }

  /** Nothing in force, the newest revision rejected, nothing else to do, and a look is due. */
  private probeIsDue(): boolean {
    if (!this.opts.probe || this.lastGood || !this.state.rejected || this.pending || this.retryTarget || this.stopped) return false;
    return this.probeDue || this.resyncDue;
  }

  /**
   * No revision is in force since the start and the newest was rejected: whether govops could work (the state read,
   * the service listed) decides readiness, as it does once a revision is in force. A daemon restarted while the newest
   * commit was invalid stayed 503 for good, where the same daemon before the restart was ready: an invalid commit
   * took it (a sidecar: its whole pod) out of its Service until someone fixed the manifests.
   */
  private async runProbe(): Promise<void> {
    this.probeDue = false;
    this.resyncDue = false;
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.abort = new AbortController();
    const logger = this.opts.logger;
    const was = this.state.probe;
    let result: ProbeResult;
    try {
      await this.opts.probe!(this.abort.signal);
      result = { ok: true, at: new Date(this.clock.now()).toISOString() };
    } catch (err) {
      const j = judgeThrown(err);
      if (this.stopped || j.failure?.code === ErrorCode.cancelled) return;
      result = { ok: false, at: new Date(this.clock.now()).toISOString(), verdict: j.verdict, ...(j.failure ? { failure: j.failure } : {}), error: err instanceof Error ? err.message : String(err) };
    }
    // An attempt that started meanwhile (a new revision) has the last word.
    if (this.lastGood || this.stopped) return;
    this.state.probe = result;
    this.state.ready = result.ok;
    if (result.ok) {
      this.probeFailures = 0;
      if (!was?.ok) logger.info({ rejected: this.state.rejected?.revision }, 'no revision in force (the newest was rejected); the state and the service can be read: ready');
      this.scheduleResync();
      return;
    }
    this.probeFailures++;
    const delay = backoffMs(this.probeFailures, this.opts.retryBaseMs ?? 1000, Math.min(this.opts.retryMaxMs ?? 300_000, this.opts.resyncMs));
    logger.warn({ error: result.error, code: result.failure?.code, retryInMs: delay }, 'no revision in force (the newest was rejected), and the state or the service cannot be read: not ready');
    this.probeTimer = this.clock.setTimeout(() => {
      this.probeTimer = undefined;
      this.probeDue = true;
      this.kick();
    }, delay);
  }

  private async runOne(revision: Revision, apply: boolean, reason: Reason): Promise<void> {
    const startedAt = new Date(this.clock.now());
    const t0 = process.hrtime.bigint();
    this.runningRevision = revision;
    this.abort = new AbortController();
    this.force = new AbortController();
    const logger = this.opts.logger.child({ revision: revision.id, reason });
    this.state.running = { revision: revision.id, reason, since: startedAt.toISOString() };
    this.opts.onStart?.({ revision, apply, reason });
    logger.info({ apply }, 'reconcile started');
    let result: ReconcileResult | undefined;
    let judgement: Judgement;
    let error: string | undefined;
    try {
      const reconcileLogger = this.opts.logger.child({ reason });
      result = await this.opts.reconcile({
        revision,
        apply,
        reason,
        signal: this.abort.signal,
        forceSignal: this.force.signal,
        logger: reconcileLogger,
      });
      judgement = judgeResult(result, apply);
      error = result.error;
    } catch (err) {
      judgement = judgeThrown(err);
      error = err instanceof Error ? err.message : String(err);
    }
    const { verdict } = judgement;
    const finishedAt = new Date(this.clock.now());
    const attempt: Attempt = {
      revision: revision.id,
      reason,
      apply,
      verdict,
      ...(judgement.failure ? { failure: judgement.failure } : {}),
      retry: judgement.retry,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationSec: Number(process.hrtime.bigint() - t0) / 1e9,
      result,
      error,
    };
    this.state.running = undefined;
    this.runningRevision = undefined;
    this.record(revision, attempt, judgement, logger);
    this.track(revision, attempt);
    try {
      await this.opts.onAttempt?.(attempt, this);
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message } }, 'post-reconcile hook failed');
    }
  }

  private record(revision: Revision, attempt: Attempt, judgement: Judgement, logger: Logger): void {
    const v = attempt.verdict;
    this.followSecretWait(revision, attempt);
    // A resync, or the retry of one that failed (the service was down when it fell due): a drift check.
    const driftCheck = attempt.reason === 'resync' || (attempt.reason === 'retry' && this.retryOfResync && this.retryTarget?.id === revision.id);
    // A resync that fell due while this attempt ran is done by it (it looked at the service, or failed and is retried):
    // a second look right after it was redundant (a full listing), and tried a failed revision again before its backoff.
    // The resync period starts again below.
    this.resyncDue = false;
    this.state.lastAttempt = attempt;
    this.probeAfter(v);
    // A restart while a resource is refused must not make the daemon unready for good (Kubernetes keeps such a pod out
    // of its Service and a rollout never ends): a failure of some resources is the daemon working, as after a success.
    if (v === 'failed' && attempt.result?.stage === 'apply' && !judgement.blocksReadiness) this.everWorked = true;
    if (v !== 'invalid') this.state.ready = this.everWorked && !judgement.blocksReadiness;
    if (v === 'invalid') {
      this.state.rejected = attempt;
      logRejected(logger, attempt.result, attempt.error);
      // The revision being retried (after an outage) is rejected now: nothing waits any more. The resyncs go back
      // to the last good revision; the rejected one is not tried again until the source brings it again. What the
      // loop knows of the service (readiness, drift) dates from the failures: the last good revision is checked now.
      if (this.retryTarget?.id === revision.id) {
        this.endRetry();
        if (this.lastGood) this.resyncDue = true;
      }
    } else if (v === 'unreachable' || v === 'failed') {
      // A revision that planned (or got as far as the service) is valid: it is the target now.
      if (v === 'failed' && attempt.result?.plan) {
        this.lastGood = revision;
        if (this.state.rejected?.revision === revision.id) this.state.rejected = undefined;
        // A self-heal resync whose repair failed: the drift it found is still there (what was put back is not).
        if (driftCheck && !this.opts.observe) this.unrepaired(revision, attempt, logger);
      }
      // A failed resync of an older revision never takes the retry over from the one waiting to be applied.
      if (!(attempt.reason === 'resync' && this.retryTarget && this.retryTarget.id !== revision.id)) {
        this.retryOfResync = attempt.reason === 'resync' || (attempt.reason === 'retry' && this.retryOfResync && this.retryTarget?.id === revision.id);
        this.retryTarget = revision;
        this.retryApply = attempt.apply;
      }
      this.failures++;
      // Transient: back off and try again. Terminal: nothing changes by retrying soon; try again at the
      // resync period (a fix made outside govops is then picked up), never in a tight loop.
      const backoff = backoffMs(this.failures, this.opts.retryBaseMs ?? 1000, this.opts.retryMaxMs ?? 300_000);
      const delay = judgement.retry === 'backoff' ? backoff : Math.max(backoff, this.opts.resyncMs);
      this.state.nextRetryAt = new Date(this.clock.now() + delay).toISOString();
      if (this.stopped && onlyCancelled(attempt)) logger.info({ error: attempt.error }, 'reconcile cut short by the stop: the next start carries on');
      else logger.warn({ error: attempt.error, code: attempt.failure?.code, retryInMs: delay, verdict: v, retry: judgement.retry }, 'reconcile failed; will retry');
      this.scheduleRetry(delay);
    } else {
      this.lastGood = revision;
      // A revision rejected before (the revision in force, rejected at a resync while its secret was missing) that
      // loads and plans now is not rejected any more: /status stops showing it, and its error, as the latest's.
      if (this.state.rejected?.revision === revision.id) this.state.rejected = undefined;
      this.everWorked = true;
      this.state.ready = true;
      this.state.lastSuccess = attempt;
      this.failures = 0;
      this.state.nextRetryAt = undefined;
      const covers = attempt.apply || !this.retryApply;
      if (covers && (this.retryTarget?.id === revision.id || attempt.reason === 'revision')) this.endRetry();
      // (a standby that only planned it applied nothing: its /status and metrics do not say it did)
      if (attempt.apply && attempt.result?.plannedOnly !== true) this.state.lastApplied = { revision: revision.id, at: attempt.finishedAt };
      if (this.opts.observe) {
        // Observing: every plan with changes is drift between Git and the service, pending and not applied.
        this.state.drift = v === 'drift';
        if (v === 'drift') logger.warn({ summary: attempt.result?.plan?.summary, pending: pendingOf(attempt) }, 'observe: changes pending, not applied (--observe)');
      } else if (driftCheck) {
        this.driftChecked(revision, attempt, logger);
      } else {
        this.state.drift = false;
      }
      if (v === 'blocked') {
        logger.warn({ verdict: v, durationSec: attempt.durationSec, blocked: blockedOf(attempt) }, 'reconcile finished: changes blocked, waiting for a person (see /status)');
      } else {
        logger.info({ verdict: v, durationSec: attempt.durationSec }, 'reconcile finished');
      }
    }
    this.scheduleResync();
  }

  /**
   * The revision waiting for its secret files: one rejected for them alone (not at a resync: that is the last good
   * revision, looked at by every resync anyway). Looked at again only while no attempt of it or of a newer revision
   * came after (a resync of the last good revision changes nothing).
   */
  private followSecretWait(revision: Revision, attempt: Attempt): void {
    if (this.secretWait && (this.secretWait.id === revision.id || attempt.reason !== 'resync')) this.secretWait = undefined;
    if (attempt.verdict === 'invalid' && attempt.reason !== 'resync' && secretFilesUnreadable(attempt.result)) this.secretWait = revision;
  }

  /** What a drift check that went through found: drift (reported, or repaired with --self-heal) or none. */
  private driftChecked(revision: Revision, attempt: Attempt, logger: Logger): void {
    const v = attempt.verdict;
    this.state.drift = v === 'drift';
    const plan = attempt.result?.plan;
    if ((v === 'drift' || v === 'applied') && plan) {
      this.state.lastDrift = { revision: revision.id, at: attempt.finishedAt, repaired: v === 'applied', resources: driftOf(plan) };
      logDrift(logger, this.state.lastDrift);
    } else if (v === 'blocked' && attempt.apply && attempt.result?.changed && plan) {
      // A self-heal resync that found drift it may not put back (a replace without --allow-replace...): what is left is
      // drift, as the same resync without --self-heal reports it (it was reported in sync: drift false, the gauge 0).
      this.unrepaired(revision, attempt, logger, 'held-back');
    }
  }

  /** The retry of the revision waiting, `delay` ms from now (replacing one scheduled). */
  private scheduleRetry(delay: number): void {
    if (this.retryTimer) this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.stopped) return;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      this.retryDue = true;
      this.kick();
    }, delay);
  }

  /** The drift a drift check found and could not repair (its apply failed, or held changes back): reported as drift, not repaired. */
  private unrepaired(revision: Revision, attempt: Attempt, logger: Logger, how: 'repair-failed' | 'held-back' = 'repair-failed'): void {
    const repaired = new Set((attempt.result?.outcomes ?? []).filter((o) => o.result === 'ok').map((o) => `${o.resourceKind}/${o.name}`));
    const resources = driftOf(attempt.result!.plan!).filter((r) => !repaired.has(`${r.kind}/${r.name}`));
    if (resources.length === 0) return;
    this.state.drift = true;
    this.state.lastDrift = { revision: revision.id, at: attempt.finishedAt, repaired: false, resources };
    logDrift(logger, this.state.lastDrift, how);
  }

  /** Nothing is retried any more: the revision waiting was applied (or rejected). */
  private endRetry(): void {
    this.retryTarget = undefined;
    this.retryOfResync = false;
    this.retryDue = false;
    this.failures = 0;
    this.state.nextRetryAt = undefined;
    if (this.retryTimer) this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Count the attempt against the revision waiting to be applied; forget revisions the loop will not run again. */
  private track(revision: Revision, attempt: Attempt): void {
    const o = this.outstanding.get(revision.id);
    if (o) {
      o.attempts++;
      if (attempt.failure && !isSuccess(attempt.verdict)) {
        o.lastError = { code: attempt.failure.code, failureClass: attempt.failure.failureClass, ...(attempt.error ? { message: attempt.error } : {}), at: attempt.finishedAt };
      }
      // Applied (or planned, with --observe) or rejected: not waiting any more.
      if (isSuccess(attempt.verdict) || attempt.verdict === 'invalid') this.outstanding.delete(revision.id);
    }
    const live = new Set([this.pending?.id, this.retryTarget?.id]);
    for (const id of this.outstanding.keys()) if (!live.has(id)) this.outstanding.delete(id);
  }

  /**
   * The next drift check, a resync period from now. While a retry is scheduled there is none: a resync due then would
   * only try the revision waiting again (next()), and the retry of a terminal failure falls due at the resync period,
   * so the two timers fired together and the failing revision was tried twice in a row each period.
   */
  private scheduleResync(): void {
    if (this.stopped) return;
    if (this.resyncTimer) this.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    if (this.retryTimer) return;
    this.resyncTimer = this.clock.setTimeout(() => this.resyncNow(), this.opts.resyncMs);
  }
}

/** A load failure whose every error is a secret file that could not be read (the operator may supply it later). */
function secretFilesUnreadable(result: ReconcileResult | undefined): boolean {
  if (result?.stage !== 'load') return false;
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  return errors.length > 0 && errors.every((d) => d.rule === SECRET_FILE_UNREADABLE);
}

/**
 * Whether the source saw `a` before `b`: by their `order` (sources publish revisions in order), never by their
 * observedAt, the time of day (set back by NTP between two commits, the newer one read as older and dropped).
 */
function seenBefore(a: Revision, b: Revision): boolean {
  return a.order > 0 && b.order > 0 && a.order < b.order;
}

/** `Kind/name: action` of every change an attempt held back (awaiting a manual step, blocked by the plan). */
function blockedOf(a: Attempt): string[] {
  return (a.result?.outcomes ?? []).filter((o) => o.result !== 'ok' && heldBack(o)).map((o) => `${o.resourceKind}/${o.name}: ${o.action}`);
}

/** `Kind/name: action` of every change an attempt planned and did not apply (for the log). */
function pendingOf(a: Attempt): string[] {
  return (a.result?.plan?.changes ?? [])
    // (a `settle` is no change: an integration the service is finishing, in sync once it has)
    .filter((c) => c.action !== 'settle' && (c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined))
    .map((c) => `${c.resourceKind}/${c.name}: ${c.adopt && c.action !== 'adopt' ? `adopt+${c.action}` : c.action}`);
}
