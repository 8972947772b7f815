/**
 * Delivery health of webhooks (`govops run --webhook-health-interval`): polls the service's delivery
 * history incrementally (src/deliveries/cursor.ts: only records not seen before, never the whole
 * history), exports metrics, keeps recent failures per managed webhook for /status and, with
 * `--auto-retry-failed`, retries failed deliveries of managed webhooks within a per-delivery cap,
 * backoff and rate limit (src/deliveries/auto-retry.ts). Off by default.
 */
import { backgroundClock, sleep, type Clock, type TimerHandle } from '../util/clock.js';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServiceApi } from '../api/client-types.js';
import type { WebhookHistoryRecord } from '../api/types.js';
import { AutoRetryScheduler, type AutoRetryPolicy, type PendingDelivery, type RetryResult } from '../deliveries/auto-retry.js';
import { DEFAULT_OVERLAP_MS, HistoryCursor, type PollResult } from '../deliveries/cursor.js';
import { failureCode, isDelivered, timeOf } from '../deliveries/records.js';
import { RETRY_FORBIDDEN_HINT, RETRY_STOP_REASONS, RETRY_UNAUTHORIZED_HINT, retryStopReason, type RetryStopReason } from '../deliveries/retry.js';
import { ApiError, CancelledError, ErrorCode, UserError, classify, type ErrorCodeValue } from '../errors.js';
import { isPgLocation } from '../state/location.js';
import { journalPathFor, loadState, resolveStatePath, statStateFile } from '../state/store.js';
import type { GovopsState } from '../state/types.js';
import { webhookIdentityParts } from '../service/kinds.js';
import { UNMANAGED_LABEL, WebhookHealthMetrics, codeLabel, eventLabel } from './webhook-metrics.js';
import { firstBy } from '../util/multimap.js';
import { redactText } from '../util/redact.js';

/**
 * Live id → manifest name of the webhooks govops manages; `serviceNames`, when known, the name each one has in the
 * service (its recorded identity): a history record of that id under another name is another's webhook at a reused id.
 */
export type ManagedWebhooks = ReadonlyMap<string, string> & { readonly serviceNames?: ReadonlyMap<string, string> };

export interface WebhookHealthOptions {
  /** Bound to the stop (`withSignal`, when it has it): a wait of the client's (a Retry-After, a backoff) ends at stop(). */
  api: Pick<ServiceApi, 'listWebhookHistory' | 'retryWebhookDelivery'> & Partial<Pick<ServiceApi, 'withSignal'>>;
  logger: Logger;
  registry: Registry;
  intervalMs: number;
  overlapMs?: number;
  pageSize?: number;
  maxPages?: number;
  /** Read before every poll (e.g. from the state file). */
  managed: () => Promise<ManagedWebhooks>;
  /** Set to retry failed deliveries of managed webhooks automatically. */
  autoRetry?: AutoRetryPolicy;
  /**
   * Whether this replica may send retries now (several replicas: only the lease holder; default always). A standby
   * keeps polling and tracking failures, and takes no retry: one it took would be refused by the write gate and
   * still count against the delivery's cap, so after a failover the new leader had given up on them all.
   */
  mayWrite?: () => boolean;
  /** Failures kept per webhook for /status. Default 5. */
  recentFailures?: number;
  /** The poll timer and the times shown (default the system's, timers unref'd: the daemon's server keeps it up). */
  clock?: Clock;
}

export interface FailureView {
  historyId: string;
  at: string;
  event: string;
  statusCode: number;
  code: string;
}

interface WebhookStats {
  id: string;
  delivered: number;
  failed: number;
  lastSuccessMs?: number;
  lastFailureMs?: number;
  recent: FailureView[];
}

export interface PollSummary {
  ok: boolean;
  baseline?: boolean;
  requests?: number;
  received?: number;
  newRecords?: number;
  truncated?: boolean;
  /** The service answered a page with records already read: it does not page by offset (the poll stopped there). */
  unpaged?: boolean;
  retried?: number;
  /** The round of automatic retries stopped at a retry request whose failure holds for every retry (`notAttempted`: the rest). */
  stopped?: RetryStopReason;
  notAttempted?: number;
  /** The round was skipped: the managed webhooks (the govops state) could not be read (`code`, `error`). */
  skipped?: boolean;
  code?: ErrorCodeValue;
  error?: string;
}

/** A round of automatic retries stopped at a failure that holds for every retry: the retry it stopped at, what was left. */
interface RoundStop {
  reason: RetryStopReason;
  err: Error;
  webhook: string;
  historyId: string;
  notAttempted: number;
}

/** What the stop's log says it was, and what to do about it. */
const STOP_SAID: Record<RetryStopReason, string> = {
  refused: 'the service refused the retry (401/403: the token, or its permission)',
  unreachable: 'the service cannot be reached (the connection not opened, after the client\'s retries: nothing sent)',
  rate_limited: 'the service is rate limiting (429 past the client\'s retries): the retry is deferred (nothing delivered, its delivery stays due)',
};

function stopHint(stop: RoundStop): string | undefined {
  if (stop.reason === 'rate_limited') return 'the service asked for fewer requests: the next round tries one retry first; lower --auto-retry-rate if it lasts';
  if (stop.reason !== 'refused' || !(stop.err instanceof ApiError)) return undefined;
  return stop.err.statusCode === 403 ? RETRY_FORBIDDEN_HINT : RETRY_UNAUTHORIZED_HINT;
}

/** A retry request's failure as logged: an API error with its method, path and status, anything else redacted. */
const retryErrorText = (err: unknown): string => (err instanceof ApiError ? err.toString() : redactText(err instanceof Error ? err.message : String(err)));

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

/**
 * The webhooks govops manages, by id: not one whose delete is pending (sent, its answer not seen yet: the next
 * reconcile resolves it); its failed deliveries were retried meanwhile, to a webhook govops is removing.
 */
function webhooksOf(state: GovopsState): ManagedWebhooks {
  const entries = state.resources.filter((r) => r.kind === 'Webhook' && r.id !== '' && r.pending !== 'delete');
  const serviceNames = new Map<string, string>();
  for (const r of entries) {
    const name = webhookIdentityParts(r.identity)?.name;
    if (name !== undefined) serviceNames.set(r.id, name);
  }
  return Object.assign(new Map(entries.map((r) => [r.id, r.name] as const)), { serviceNames });
}

/**
 * Managed webhooks from the govops state: a file is re-read only when it or its journal changed (an apply appends its
 * changes to `state.json.journal` and writes the whole file again only at its end: a delete's intent, a webhook
 * deleted or created meanwhile were not seen until then); a PostgreSQL state is read at each poll (when it cannot be,
 * the last one read stands: its webhooks do not turn "unmanaged" while the database is away). A state that cannot be
 * read (but for a missing file: a fresh state) throws its typed error: the health poller skips that round.
 */
export function managedWebhooksFromState(statePath: string): () => Promise<ManagedWebhooks> {
  let cached: { key: string; map: ManagedWebhooks } | undefined;
  if (isPgLocation(statePath)) {
    return async () => {
      const state = await loadState(statePath).catch((err: unknown) => {
        // never read yet: nothing stands for it (an empty set would read every failure as another's)
        if (!cached) throw err;
        return undefined;
      });
      if (state) cached = { key: '', map: webhooksOf(state) };
      return cached!.map;
    };
  }
  return async () => {
    const file = await resolveStatePath(statePath);
    const st = await statStateFile(file, 'state file');
    // no state file: a fresh state, nothing managed yet
    if (!st) return new Map();
    const journal = await statStateFile(journalPathFor(file), 'state journal');
    const key = `${st.mtimeMs}:${st.size}:${journal ? `${journal.mtimeMs}:${journal.size}` : '-'}`;
    if (cached?.key === key) return cached.map;
    const map = webhooksOf(await loadState(statePath));
    cached = { key, map };
    return map;
  };
}

export class WebhookHealth {
  private readonly cursor: HistoryCursor;
  private readonly scheduler?: AutoRetryScheduler;
  private readonly metrics: WebhookHealthMetrics;
  private readonly now: () => number;
  private readonly keep: number;
  private readonly stats = new Map<string, WebhookStats>();
  private readonly unmanaged = { delivered: 0, failed: 0 };
  private readonly retried = { delivered: 0, failed: 0, gone: 0, error: 0 };
  private managedNow: ManagedWebhooks = new Map();
  private polls = 0;
  /** The service's history was found not to page (said once, at warn). */
  private saidUnpaged = false;
  private last?: { at: string; durationMs: number; result: PollResult; retried: number };
  private lastError?: { at: string; message: string; code: ErrorCodeValue };
  /** The managed set (the govops state) cannot be read: rounds are skipped since `since`. */
  private stateError?: { code: ErrorCodeValue; message: string; since: string; skippedRounds: number };
  /** The rounds of automatic retries stop at a failure that holds for every retry, since `since` (cleared by a round that does not). */
  private halt?: { reason: RetryStopReason; code: ErrorCodeValue; message: string; since: string; rounds: number; notAttempted: number };
  private readonly clock: Clock;
  private timer?: TimerHandle;
  private running?: Promise<PollSummary>;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly api: Pick<ServiceApi, 'listWebhookHistory' | 'retryWebhookDelivery'>;

  constructor(private readonly opts: WebhookHealthOptions) {
    // The client holds every request while a 429/503 Retry-After runs (up to 60 s) and sleeps between its retries: a
    // round waiting there ended only when the wait did, past stop() and the daemon's shutdown (and then went on).
    this.api = opts.api.withSignal ? opts.api.withSignal(this.abort.signal) : opts.api;
    this.cursor = new HistoryCursor({ pageSize: opts.pageSize, overlapMs: opts.overlapMs, maxPages: opts.maxPages });
    this.clock = opts.clock ?? backgroundClock;
    this.now = () => this.clock.now();
    this.keep = Math.max(1, opts.recentFailures ?? 5);
    // backoffs and the rate limit are durations: the monotonic reading (the time of day may be set back an hour)
    if (opts.autoRetry) this.scheduler = new AutoRetryScheduler(opts.autoRetry, () => this.clock.monotonic());
    this.metrics = new WebhookHealthMetrics(opts.registry, Boolean(opts.autoRetry));
  }

  /** Poll now, then every interval, until stop() or `signal` aborts. */
  start(signal?: AbortSignal): void {
    if (signal?.aborted) {
      void this.stop(0);
      return;
    }
    signal?.addEventListener('abort', () => void this.stop(0), { once: true });
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.running = this.pollOnce().finally(() => {
        this.running = undefined;
        this.schedule(this.opts.intervalMs);
      });
    }, ms);
  }

  /** Stop polling; waits up to `waitMs` for a poll in flight (closing the API client ends it anyway). */
  async stop(waitMs = 5000): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) this.clock.clearTimeout(this.timer);
    const running = this.running;
    if (running) {
      const gaveUp = new AbortController();
      await Promise.race([running, sleep(this.clock, waitMs, gaveUp.signal).catch(() => undefined)]);
      gaveUp.abort();
    }
  }

  /** One poll: new history records → metrics and stats, then due automatic retries. Never throws. */
  async pollOnce(): Promise<PollSummary> {
    const started = performance.now();
    const end = this.metrics.pollDuration.startTimer();
    try {
      let managed: ManagedWebhooks;
      try {
        managed = await this.opts.managed();
      } catch (err) {
        return this.stateUnreadable(err);
      }
      if (this.stateError) {
        this.opts.logger.info({ since: this.stateError.since }, 'webhook health: the govops state is readable again; polling resumes');
        this.stateError = undefined;
        this.metrics.stateUnreadable.set(0);
      }
      // The same map as before (a state file that did not change): nothing can have gone.
      const changed = managed !== this.managedNow;
      this.managedNow = managed;
      if (changed) await this.forgetGone();
      const result = await this.cursor.poll(this.api, this.abort.signal);
      this.metrics.pollRequests.inc(result.requests);
      this.metrics.pollRecords.inc(result.received);
      // Oldest first, so "last" times and recent failures end with the newest.
      for (const r of [...result.records].reverse()) this.observe(r, result.baseline);
      if (result.unpaged && !this.saidUnpaged) {
        this.saidUnpaged = true;
        this.opts.logger.warn(
          { requests: result.requests, received: result.received },
          'webhook history: the service does not page its history (a page held only records already read): each poll reads what its first page holds',
        );
      }
      if (result.truncated) {
        this.opts.logger.warn(
          { requests: result.requests, newRecords: result.records.length },
          'webhook history: more new deliveries than one poll reads; older ones of this burst are not counted (shorten --webhook-health-interval)',
        );
      }
      const round = this.scheduler && (this.opts.mayWrite?.() ?? true) ? await this.runRetries() : { sent: 0 };
      const retried = round.sent;
      this.polls++;
      this.last = { at: new Date(this.now()).toISOString(), durationMs: Math.round(performance.now() - started), result, retried };
      this.lastError = undefined;
      this.metrics.polls.inc({ result: 'ok' });
      this.opts.logger.debug(
        { requests: result.requests, received: result.received, newRecords: result.records.length, baseline: result.baseline, retried },
        'webhook history polled',
      );
      return {
        ok: true,
        baseline: result.baseline,
        requests: result.requests,
        received: result.received,
        newRecords: result.records.length,
        truncated: result.truncated,
        unpaged: result.unpaged,
        retried,
        ...(round.stop ? { stopped: round.stop.reason, notAttempted: round.stop.notAttempted } : {}),
      };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // cut short by stop() (a wait of the client's ended): not a failed poll
      if (err instanceof CancelledError && this.abort.signal.aborted) return { ok: false, error: message };
      this.lastError = { at: new Date(this.now()).toISOString(), message, code: classify(err).code };
      this.metrics.polls.inc({ result: 'error' });
      if (!this.abort.signal.aborted) this.opts.logger.warn({ err: { message } }, 'webhook history poll failed');
      return { ok: false, error: message };
    } finally {
      end();
      if (this.scheduler) this.metrics.autoRetryPending.set(this.scheduler.size);
    }
  }

  /**
   * The managed set could not be read (the state file unreadable, not valid JSON, the database never read): the round is
   * skipped, as read as empty it dropped every pending retry and counted every failure as another's. Nothing is polled
   * (the records wait for the next round), retried or given up; said at warn once per error (code and message), shown
   * in /status (`stateError`) and by govops_webhook_health_state_unreadable; the next round reads the state again.
   */
  private stateUnreadable(err: unknown): PollSummary {
    const { code } = classify(err);
    const message = err instanceof Error ? err.message : String(err);
    const at = new Date(this.now()).toISOString();
    const same = this.stateError?.code === code && this.stateError.message === message;
    if (!same) {
      this.opts.logger.warn({ err: { code, message } }, 'webhook health: the govops state cannot be read: rounds are skipped (no retry sent, nothing given up) until it can');
    }
    this.stateError = { code, message, since: same ? this.stateError!.since : at, skippedRounds: (same ? this.stateError!.skippedRounds : 0) + 1 };
    this.lastError = { at, message, code };
    this.metrics.polls.inc({ result: 'error' });
    this.metrics.stateUnreadable.set(1);
    return { ok: false, skipped: true, code, error: message };
  }

  /**
   * Webhooks no longer managed (deleted, renamed, forgotten): their figures and metric series go (bounded by what is
   * managed), and so do their pending automatic retries (auto-retry touches managed webhooks only).
   */
  private async forgetGone(): Promise<void> {
    const dropped = this.scheduler?.keepOnly(this.managedNow) ?? 0;
    if (dropped > 0) this.opts.logger.info({ dropped }, 'webhook delivery retries dropped: their webhooks are no longer managed');
    const names = new Set(this.managedNow.values());
    for (const name of this.stats.keys()) if (!names.has(name)) this.stats.delete(name);
    await this.metrics.forgetExcept(names);
  }

  private statsOf(name: string, id: string): WebhookStats {
    let s = this.stats.get(name);
    if (!s) this.stats.set(name, (s = { id, delivered: 0, failed: 0, recent: [] }));
    s.id = id;
    return s;
  }

  /**
   * The manifest name of the managed webhook a record is of; undefined for another's. The state's id alone is not
   * enough: an id the service gave to another team's webhook since (ours deleted out of band) stays in the state until
   * the next reconcile forgets it (for ever under --observe), and that webhook's failures were counted under our name
   * and retried automatically. A record naming its webhook otherwise than the recorded identity is another's.
   */
  private managedName(r: WebhookHistoryRecord): string | undefined {
    const name = this.managedNow.get(r.webhookId);
    const recorded = this.managedNow.serviceNames?.get(r.webhookId);
    if (name === undefined || recorded === undefined || r.webhookName === '') return name;
    return r.webhookName === recorded ? name : undefined;
  }

  private observe(r: WebhookHistoryRecord, baseline: boolean): void {
    const name = this.managedName(r);
    const ok = isDelivered(r);
    const label = name ?? UNMANAGED_LABEL;
    // The first poll's records were in the history before this start: only the failures of the overlap before it (by
    // this clock) are retried again; the history's last failures of days ago (a receiver dead since, retried and
    // given up on before) would be replayed at every restart otherwise.
    const recent = !baseline || timeOf(r) >= this.now() - (this.opts.overlapMs ?? DEFAULT_OVERLAP_MS);
    this.scheduler?.observe(r, name !== undefined && recent);
    if (!baseline) {
      this.metrics.deliveries.inc({ webhook: label, event: eventLabel(r.notificationType), outcome: ok ? 'delivered' : 'failed' });
      if (!ok) this.metrics.failures.inc({ webhook: label, code: codeLabel(r) });
    }
    if (name === undefined) {
      if (!baseline) this.unmanaged[ok ? 'delivered' : 'failed']++;
      return;
    }
    const s = this.statsOf(name, r.webhookId);
    const t = timeOf(r);
    if (!baseline) s[ok ? 'delivered' : 'failed']++;
    if (!Number.isFinite(t)) return;
    if (ok) {
      if (s.lastSuccessMs === undefined || t > s.lastSuccessMs) {
        s.lastSuccessMs = t;
        this.metrics.lastSuccess.set({ webhook: name }, t / 1000);
      }
      return;
    }
    if (s.lastFailureMs === undefined || t > s.lastFailureMs) {
      s.lastFailureMs = t;
      this.metrics.lastFailure.set({ webhook: name }, t / 1000);
    }
    s.recent.push({ historyId: r.id, at: r.createdAt, event: r.notificationType, statusCode: r.statusCode, code: failureCode(r) });
    s.recent.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
    if (s.recent.length > this.keep) s.recent.length = this.keep;
  }

  /**
   * Retry what is due (the first alone, then a few at a time); each retry is logged and counted. A failure that holds
   * for every retry (a 401/403, the service unreachable) stops the round: the rest is not attempted (nor spent, nor
   * counted), and the next round starts again with one request. Said once at warn until a round is not stopped.
   */
  private async runRetries(): Promise<{ sent: number; stop?: RoundStop }> {
    const due = this.scheduler!.take();
    let sent = 0;
    let stop: RoundStop | undefined;
    const one = async (p: PendingDelivery): Promise<void> => {
      if (this.abort.signal.aborted) return;
      const name = this.managedNow.get(p.webhookId) ?? UNMANAGED_LABEL;
      // the round stopped before this one was sent: given back (attempt and rate-limit slot), due at the next round
      if (stop) {
        this.scheduler!.settle(p, { kind: 'unsent' });
        stop.notAttempted++;
        return;
      }
      let result: RetryResult;
      let error: string | undefined;
      // The lease may go while a round is out (a retry waits for the receiver): what is not sent yet is given back,
      // not spent against the delivery's cap (the gate refused it, or would: nothing reached the service).
      if (!(this.opts.mayWrite?.() ?? true)) result = { kind: 'unsent' };
      else {
        try {
          result = { kind: 'record', record: await this.api.retryWebhookDelivery(p.record.id) };
        } catch (err) {
          error = retryErrorText(err);
          const reason = retryStopReason(err);
          if (reason && !stop) stop = { reason, err: err as Error, webhook: name, historyId: p.record.id, notAttempted: 0 };
          if (err instanceof UserError && err.code === ErrorCode.stateFenced) result = { kind: 'unsent' };
          // stopped while the client waited (a Retry-After, a backoff after a 429 or a refused connection): not sent
          else if (err instanceof CancelledError) result = { kind: 'unsent' };
          // the service could not be reached (the connection not opened, after the client's retries): nothing was sent
          else if (reason === 'unreachable') result = { kind: 'unsent' };
          // the token refused (401/403): the delivery was not retried, its cap is not spent
          else if (reason === 'refused') result = { kind: 'refused' };
          // the service said slow down (429 past the client's retries): nothing was delivered, the delivery stays due
          else if (reason === 'rate_limited') result = { kind: 'deferred' };
          else result = err instanceof ApiError && err.statusCode === 404 ? { kind: 'gone' } : { kind: 'error' };
        }
      }
      const retriedId = p.record.id; // settle() moves p.record on to the record the retry made
      const verdict = this.scheduler!.settle(p, result);
      if (result.kind === 'unsent' || result.kind === 'refused' || result.kind === 'deferred') {
        // a refusal, the service away or rate limiting is said once, for the round (below)
        const why = this.abort.signal.aborted ? 'stopping' : (error ?? 'this replica does not hold the lease');
        const said = result.kind === 'refused' ? 'refused by the service' : result.kind === 'deferred' ? 'deferred' : 'not sent';
        this.opts.logger.debug({ webhook: name, historyId: retriedId, ...(error ? { error } : {}) }, `webhook delivery retry ${said}: ${why}`);
        return;
      }
      sent++;
      const outcome = result.kind === 'record' ? (verdict.delivered ? 'delivered' : 'failed') : result.kind;
      this.retried[outcome]++;
      this.metrics.autoRetries.inc({ webhook: name, result: outcome });
      if (verdict.exhausted) this.metrics.autoRetryExhausted.inc({ webhook: name });
      const fields = {
        webhook: name,
        historyId: retriedId,
        attempt: verdict.attempt,
        result: outcome,
        ...(result.kind === 'record' ? { newHistoryId: result.record.id, statusCode: result.record.statusCode, code: result.record.responseCode } : {}),
        ...(error ? { error } : {}),
        // the scheduler counts on the monotonic clock: shown as the time of day it stands for
        ...(verdict.nextAt !== undefined ? { nextRetryAt: iso(this.now() + (verdict.nextAt - this.clock.monotonic())) } : {}),
      };
      if (verdict.exhausted) this.opts.logger.warn(fields, `webhook delivery still failing after ${verdict.attempt} automatic retries: giving up`);
      else this.opts.logger.info(fields, 'webhook delivery retried automatically');
    };
    // The first alone: a failure that holds for every retry then costs one request a round, not one per retry in
    // flight. Then a few at a time: a retry waits for the receiver (up to its deadline).
    await Promise.all(due.slice(0, 1).map(one));
    for (let i = 1; i < due.length; i += 4) await Promise.all(due.slice(i, i + 4).map(one));
    if (stop) this.roundStopped(stop);
    else if (sent > 0) this.roundNotStopped('a round was not stopped');
    // each delivery behind the stop got through (retried by hand, or by the service) or stopped being managed: no
    // round will send one, so nothing would ever say the stop is over
    else if (this.scheduler!.size === 0) this.roundNotStopped('nothing is pending any more');
    return { sent, ...(stop ? { stop } : {}) };
  }

  /** A round stopped at `stop`: said at warn when it begins (or its reason or code changes), at debug after. */
  private roundStopped(stop: RoundStop): void {
    const { code } = classify(stop.err);
    const message = retryErrorText(stop.err);
    const same = this.halt?.reason === stop.reason && this.halt.code === code;
    const at = new Date(this.now()).toISOString();
    this.halt = { reason: stop.reason, code, message, since: same ? this.halt!.since : at, rounds: (same ? this.halt!.rounds : 0) + 1, notAttempted: stop.notAttempted };
    for (const reason of RETRY_STOP_REASONS) this.metrics.autoRetryStopped.set({ reason }, reason === stop.reason ? 1 : 0);
    this.metrics.autoRetryRoundsStopped.inc({ reason: stop.reason });
    const hint = stopHint(stop);
    const fields = {
      reason: stop.reason, code, webhook: stop.webhook, historyId: stop.historyId, error: message, notAttempted: stop.notAttempted, rounds: this.halt.rounds,
      ...(hint ? { hint } : {}),
    };
    const what = stop.reason === 'rate_limited' ? 'deferred' : 'stopped';
    const said = `webhook delivery retries ${what}: ${STOP_SAID[stop.reason]}; the rest of the round is not attempted nor counted against their automatic retries, and each next round tries one retry first`;
    if (same) this.opts.logger.debug(fields, said);
    else this.opts.logger.warn(fields, said);
  }

  /** A round sent its retries without stopping, or nothing is left to retry: a stop before it is over. */
  private roundNotStopped(why: string): void {
    if (!this.halt) return;
    this.opts.logger.info({ reason: this.halt.reason, since: this.halt.since, rounds: this.halt.rounds }, `webhook delivery retries resume: ${why}`);
    this.halt = undefined;
    for (const reason of RETRY_STOP_REASONS) this.metrics.autoRetryStopped.set({ reason }, 0);
  }

  /** The `webhookHealth` section of /status. */
  status(): Record<string, unknown> {
    // Each name once, with its first id: looked up in a map, not a scan of every webhook per name.
    const firstOf = firstBy(this.managedNow, ([, name]) => name);
    const webhooks = [...firstOf.keys()].sort().map((name) => {
      const s = this.stats.get(name);
      const id = firstOf.get(name)?.[0];
      return {
        name,
        id,
        delivered: s?.delivered ?? 0,
        failed: s?.failed ?? 0,
        lastSuccessAt: iso(s?.lastSuccessMs),
        lastFailureAt: iso(s?.lastFailureMs),
        healthy: s?.lastFailureMs === undefined || (s.lastSuccessMs !== undefined && s.lastSuccessMs > s.lastFailureMs),
        recentFailures: s?.recent ?? [],
      };
    });
    return {
      intervalMs: this.opts.intervalMs,
      overlapMs: this.opts.overlapMs ?? DEFAULT_OVERLAP_MS,
      polls: this.polls,
      lastPollAt: this.last?.at,
      lastPoll: this.last && {
        durationMs: this.last.durationMs,
        requests: this.last.result.requests,
        received: this.last.result.received,
        newRecords: this.last.result.records.length,
        baseline: this.last.result.baseline,
        truncated: this.last.result.truncated,
        unpaged: this.last.result.unpaged,
      },
      lastError: this.lastError,
      ...(this.stateError ? { stateError: { ...this.stateError } } : {}),
      webhooks,
      unmanaged: { ...this.unmanaged },
      ...(this.scheduler
        ? {
            autoRetry: {
              policy: this.scheduler.policy,
              pending: this.scheduler.size,
              exhausted: this.scheduler.exhausted,
              retried: { ...this.retried },
              ...(this.halt ? { stopped: { ...this.halt } } : {}),
            },
          }
        : {}),
    };
  }
}
