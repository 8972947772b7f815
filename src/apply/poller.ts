/**
 * The shared status poller of an apply: every integration waiting for a settled status (`enabled` or an
 * error status; any other, documented or not, keeps it waiting) is watched here, outside the concurrency limit (a task's slot is freed once its write is
 * accepted).
 *
 * When to poll: the first poll is aimed at the expected end of the transition — the median of the
 * durations govops observed for that type and operation (transitions.ts, kept in the state file) —
 * and never later than `maxMs` after the previous one; past the expected end, short intervals (5% of the
 * expected duration, at least `minMs`, growing by a quarter after each miss). With nothing learned yet,
 * intervals grow by half the time elapsed (lag at most a third of the transition).
 *
 * How: at most `ratePerSec` requests per second (a token bucket). When `listThreshold` or more polls are
 * due at once, one `GET /integrations` answers for every integration waiting (registered before the list
 * was sent) instead of one status request each — but only when it costs less (listCheaper): the list's
 * expected bytes (the last list's bytes per item, or LIST_BYTES_PER_ITEM, times the integrations expected
 * in it) plus one round trip, against the due polls' status answers plus one round trip each. A list is
 * also taken when the rate cap would hold due polls back past their short interval, it answers them sooner than
 * the cap would let their status requests out (listSooner: the last list's round trip against the backlog's mean
 * wait at the cap), and it costs at most CAPPED_LIST_FACTOR times the status requests (so a few integrations
 * stuck among thousands never draw a list per poll). A list waits LIST_SPACING times the last one's round trip
 * after it while the apply's writes run or wait for a slot, IDLE_LIST_SPACING times once none does. Lists are read
 * for ids and statuses only.
 *
 * What is learned: a settled observation brackets the moment the transition ended between the last poll
 * that still saw it transitional (or the write) and the one that saw it settled (transitions.ts).
 */
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { IntegrationStatus } from '../api/types.js';
import { ApiError, CancelledError, ErrorCode } from '../errors.js';
import { missedPollTolerated } from './poll.js';
import { describeUnsettled, isSettledStatus } from '../service/kinds.js';
import { transitionKey, type Operation, type TransitionStats } from './transitions.js';
import { systemClock, type Clock, type TimerHandle } from '../util/clock.js';
import { ApplyFailure } from './validation.js';

export interface PollerOptions {
  api: ServiceApi;
  stats: TransitionStats;
  /** Shortest interval between two polls of one integration (ms). */
  minMs: number;
  /** Longest interval between two polls of one integration (ms). */
  maxMs: number;
  /** Poll requests (status and list) per second at most. */
  ratePerSec: number;
  /** Polls due at once from which one list answers for all (Infinity: never list). */
  listThreshold: number;
  /** Integrations the service lists (at plan time; updated from every list): a list must be worth its size. */
  listSize?: number;
  /** Bytes per listed integration before a list was seen (default LIST_BYTES_PER_ITEM). */
  listBytesPerItem?: number;
  /** When a wait fails (settle timeout), in the clock's monotonic() ms. */
  deadline: number;
  signal?: AbortSignal;
  logger?: Logger;
  /** Time and timers (default: the system's). */
  clock?: Clock;
}

export interface WaitRequest {
  id: string;
  /** Integration type (what is learned is per type and operation). */
  type?: string;
  op: Operation;
  /** When the service accepted the write, i.e. the transition began (default: now). */
  startedAt?: number;
  /** Learn from this wait (false when waiting on a transition govops did not start, e.g. after a 409). */
  learn?: boolean;
  /** Poll at once (the status may already be settled). */
  immediate?: boolean;
  /**
   * A bound of its own before the apply's deadline (a settle of a transition govops did not start in this run), in the
   * clock's monotonic() ms: past it the wait fails (settle timeout) once the apply's other work is over (no write running
   * or waiting for a slot, no unbounded wait left); never past the deadline.
   */
  until?: number;
}

/** Waits until an integration leaves the transitional statuses: its status, or `gone` (deleted). */
export interface StatusWaiter {
  wait(req: WaitRequest): Promise<string>;
}

export interface PollCounters {
  status: number;
  lists: number;
}

interface Wait {
  readonly id: string;
  readonly key: string;
  readonly op: Operation;
  readonly startedAt: number;
  readonly registeredAt: number;
  readonly learn: boolean;
  readonly immediate: boolean;
  /** When this wait times out: the apply's deadline, or its own `until` before it (`bounded`). */
  readonly until: number;
  readonly bounded: boolean;
  lastPollAt?: number;
  lastMissAt?: number;
  lastStatus: string;
  missesAfterEnd: number;
  inFlight: boolean;
  /** A list did not show it: ask its status endpoint. */
  statusOnly: boolean;
  /** Status 404s in a row that `GET /integrations/{id}` confirmed (a create or update: maybe a lagging replica). */
  goneChecks: number;
  /** When the first of them was seen. */
  goneSince?: number;
  /** Polls in a row that failed transiently (each already retried by the client): missed observations. */
  failedPolls: number;
  resolve(status: string): void;
  reject(err: unknown): void;
}

/** Polls due within this many ms of each other go out together. */
const GROUP_MS = 5;
/** Bytes of one listed integration before any list was seen (issue #26 measured 427; config-heavy kinds more). */
export const LIST_BYTES_PER_ITEM = 430;
/** Bytes of one status answer (`{"id":123,"status":"creating"}`). */
export const STATUS_BYTES = 40;
/**
 * The cost of one round trip, in bytes of list it is worth: request and response headers on the wire (~0.5 KB)
 * and the client's CPU per request, which measured as much as ~8 KB of list parsing (docs/decisions.md, "Polling
 * by cost"). Taken between the two: a list is chosen only when clearly cheaper.
 */
export const ROUND_TRIP_BYTES = 4096;

/**
 * When the rate cap holds due polls back (they would wait past their short interval) and a list answers them
 * sooner, it may cost up to this many times the status requests it replaces. At the default 50 requests per
 * second a backlog of k status requests waits k × 10 ms on average, while a list of 25 × their bytes (~100 KB per
 * due poll) is read in about k ms: sooner at any cap below a few hundred per second. The bound keeps a few
 * integrations stuck among thousands from drawing a list of all of them at every poll.
 */
export const CAPPED_LIST_FACTOR = 25;
/** Bytes of list read per ms before any list was timed (measured ~100 KB/ms: 4.4 MB in 31-47 ms; taken at half). */
export const LIST_BYTES_PER_MS = 50_000;

/** Whether one list of `listBytes` costs less than `due` status requests (`factor` times them, when capped). */
export function listCheaper(due: number, listBytes: number, factor = 1): boolean {
  return listBytes + ROUND_TRIP_BYTES < factor * due * (STATUS_BYTES + ROUND_TRIP_BYTES);
}

/**
 * Whether one list (answered in `listMs`) serves a backlog of `due` polls sooner than status requests can, with
 * `tokens` requests available now and `ratePerSec` more each second: their mean wait is half the time the cap
 * takes to send them all.
 */
export function listSooner(due: number, tokens: number, ratePerSec: number, listMs: number): boolean {
  const capWaitMs = (Math.max(0, due - Math.max(0, tokens)) * 1000) / ratePerSec;
  return listMs < capWaitMs / 2;
}
/**
 * After a list, the next waits this many times as long as the last one took (sent to read). Reading a list holds
 * the one thread that also sends the apply's writes, and listing costs the service too: spaced this way, lists
 * take at most about a ninth of either's time. Measured (5,000 creates, T 50 ms, C 32, sandbox in process): lists
 * back to back 99 per apply, 2.7-3.0 s; spaced by 3 / 6 / 8 / 10 / 16 round trips 33 / 18 / 14 / 11 / 7 lists,
 * 2.2 / 1.9-2.0 / 1.8-2.0 / 1.9-2.0 / 2.2 s (the lag of each integration grows with the spacing; past ~10 it
 * costs more than the lists it saves). Never longer than `maxMs` (`--poll-max`).
 */
export const LIST_SPACING = 8;
/**
 * Once no write is running or waiting for a slot (`watchWrites`), a list no longer holds back the apply's writes, only
 * the service's other work: the next waits this many times the last one's round trip, and the last integrations of an
 * apply are seen sooner. Measured (C 32, alternating runs): the last integration seen after its transition ended,
 * median, 27 → 20 ms at 1,000 creates and T 200 ms (the apply 502 → 483 ms), 104 → 38 / 209 → 106 / 446 → 263 ms at
 * 5,000 / 10,000 / 20,000 and T 50 ms, the write phase unchanged (docs/decisions.md).
 */
export const IDLE_LIST_SPACING = 3;
/** After a failed list, status requests only for this long. */
const LIST_BACKOFF_MS = 1000;
/**
 * An integration being created or updated is taken as gone only after this many status 404s in a row, each
 * confirmed by `GET /integrations/{id}`, over at least GONE_CONFIRM_MS: a status endpoint (or a replica) that
 * lags right after a create is not a deletion.
 */
export const GONE_CONFIRMATIONS = 3;
export const GONE_CONFIRM_MS = 1000;

const isNotFound = (err: unknown): boolean => err instanceof ApiError && err.statusCode === 404;

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

export class Poller implements StatusWaiter {
  private readonly waits = new Set<Wait>();
  private timer?: TimerHandle;
  private readonly clock: Clock;
  private timerAt = Infinity;
  private tokens: number;
  private refilledAt: number;
  private listInFlight = false;
  /** When the last list came back (the next is spaced from it: LIST_SPACING, IDLE_LIST_SPACING). */
  private listEndedAt?: number;
  /** Whether the apply's writes are running or waiting for a slot (`watchWrites`; until then: always). */
  private writesBusy: () => boolean = () => true;
  private listBackoffUntil = 0;
  /** Integrations the last list (or the plan) showed, plus the creates waited on since. */
  private listSize: number;
  private bytesPerItem: number;
  /** How long the last list took, sent to read (undefined before the first). */
  private listMs?: number;
  /** Creates waited on so far. */
  private creates = 0;
  private closed = false;
  readonly counters: PollCounters = { status: 0, lists: 0 };
  private readonly onAbort = (): void => this.cancelAll();

  constructor(private readonly o: PollerOptions) {
    this.clock = o.clock ?? systemClock;
    this.refilledAt = this.clock.monotonic();
    this.tokens = this.burst;
    this.listSize = o.listSize ?? 0;
    this.bytesPerItem = o.listBytesPerItem ?? LIST_BYTES_PER_ITEM;
    o.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  get pending(): number {
    return this.waits.size;
  }

  wait(req: WaitRequest): Promise<string> {
    if (this.o.signal?.aborted || this.closed) return Promise.reject(new CancelledError('wait abandoned: govops is shutting down'));
    const now = this.clock.monotonic();
    if (req.op === 'create') {
      this.creates++;
      this.listSize++; // the next list shows it too
    }
    return new Promise<string>((resolve, reject) => {
      const w: Wait = {
        id: req.id,
        key: transitionKey(req.type, req.op),
        op: req.op,
        startedAt: req.startedAt ?? now,
        registeredAt: now,
        learn: req.learn ?? true,
        immediate: req.immediate ?? false,
        until: Math.min(req.until ?? Infinity, this.o.deadline),
        bounded: req.until !== undefined && req.until < this.o.deadline,
        lastStatus: 'unknown',
        missesAfterEnd: 0,
        inFlight: false,
        statusOnly: false,
        goneChecks: 0,
        failedPolls: 0,
        resolve,
        reject,
      };
      this.waits.add(w);
      // a tick when this wait falls due, not now: a tick looks at every wait, and thousands register one by one
      this.wake(Math.min(this.dueAt(w), w.until));
    });
  }

  /**
   * How the poller tells whether writes are running or waiting for a slot: lists are spaced more while they are.
   * Call `writesIdle` when they stop: a list held back by the longer spacing may go sooner.
   */
  watchWrites(busy: () => boolean): void {
    this.writesBusy = busy;
  }

  /** No write is running or waiting any more (see `watchWrites`): the schedule is looked at again now. */
  writesIdle(): void {
    if (this.waits.size > 0) this.wake(this.clock.monotonic());
  }

  /** Stop: no more polls; waits still open are abandoned. */
  close(): void {
    this.closed = true;
    this.o.signal?.removeEventListener('abort', this.onAbort);
    this.cancelAll();
  }

  // ---- schedule ------------------------------------------------------------------------------

  private get burst(): number {
    return Math.max(1, this.o.ratePerSec);
  }

  /** The short interval past the expected end. */
  private short(expected: number | undefined): number {
    return clamp(expected === undefined ? this.o.minMs : expected * 0.05, this.o.minMs, this.o.maxMs);
  }

  /** When a wait's next poll is due. */
  private dueAt(w: Wait): number {
    if (w.lastPollAt === undefined && w.immediate) return w.registeredAt;
    const { minMs, maxMs } = this.o;
    const last = w.lastPollAt ?? w.startedAt;
    const expected = this.o.stats.estimate(w.key);
    if (expected === undefined) return last + clamp((last - w.startedAt) * 0.5, minMs, maxMs);
    const end = w.startedAt + expected;
    if (last < end - 1) return Math.max(last + minMs, Math.min(end, last + maxMs));
    return last + clamp(this.short(expected) * 1.25 ** Math.max(0, w.missesAfterEnd - 1), minMs, maxMs);
  }

  private wake(at: number): void {
    if (this.closed || at >= this.timerAt) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => this.tick(), Math.max(0, at - this.clock.monotonic()));
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.o.ratePerSec) / 1000);
    this.refilledAt = now;
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.closed || this.waits.size === 0) return;
    const now = this.clock.monotonic();
    if (now >= this.o.deadline) {
      for (const w of [...this.waits]) if (!w.inFlight) this.timeout(w);
      return;
    }
    this.refill(now);
    const tokenAt = now + Math.ceil(((1 - this.tokens) * 1000) / this.o.ratePerSec);
    let next = Infinity;
    const due: Wait[] = [];
    let busy: boolean | undefined;
    for (const w of [...this.waits]) {
      if (w.inFlight) continue;
      // a bounded wait past its bound ends once the apply's other work is over (until then it costs no time of its own)
      const overdue = now >= w.until;
      if (overdue && !(busy ??= this.otherWorkUnderWay())) {
        this.timeout(w);
        continue;
      }
      const at = this.dueAt(w);
      if (at <= now + GROUP_MS) due.push(w);
      else next = Math.min(next, at, overdue ? Infinity : w.until);
    }
    if (due.length > 0) {
      const worthIt = this.listWorthIt(due, now);
      if (!this.listInFlight && worthIt && now >= this.listBackoffUntil) {
        const readyAt = this.listReadyAt(this.writesBusy());
        if (now < readyAt) next = Math.min(next, readyAt); // spaced (LIST_SPACING, IDLE_LIST_SPACING)
        else if (this.tokens >= 1) {
          this.tokens -= 1;
          this.list(now);
        } else next = Math.min(next, tokenAt);
      } else {
        for (const w of due) {
          if (this.tokens < 1) {
            next = Math.min(next, now + Math.ceil(((1 - this.tokens) * 1000) / this.o.ratePerSec));
            break;
          }
          this.tokens -= 1;
          this.status(w, now);
        }
      }
    }
    if (next < Infinity) this.wake(Math.min(next, this.o.deadline));
  }

  /** Writes running or waiting for a slot, or a wait with no bound of its own (govops' own writes in this apply). */
  private otherWorkUnderWay(): boolean {
    if (this.writesBusy()) return true;
    for (const w of this.waits) if (!w.bounded) return true;
    return false;
  }

  /** One list instead of the due polls: cheaper, or the rate cap would hold them back past their short interval. */
  private listWorthIt(due: readonly Wait[], now: number): boolean {
    let listable = 0;
    for (const w of due) if (!w.statusOnly) listable++;
    if (listable < this.o.listThreshold) return false;
    const bytes = this.listSize * this.bytesPerItem;
    if (listCheaper(listable, bytes)) return true;
    // held back by the cap (more due than the bucket sends now or within the shortest interval): a dearer list,
    // when it answers them sooner than the cap lets their status requests out
    const sendable = this.tokens + (this.o.minMs * this.o.ratePerSec) / 1000;
    if (due.length <= sendable || now < this.listBackoffUntil) return false;
    const listMs = this.listMs ?? bytes / LIST_BYTES_PER_MS;
    return listSooner(listable, this.tokens, this.o.ratePerSec, listMs) && listCheaper(listable, bytes, CAPPED_LIST_FACTOR);
  }

  /** No list before then: the last one's round trip times the spacing, never more than the longest poll interval. */
  private listReadyAt(busy: boolean): number {
    if (this.listEndedAt === undefined || this.listMs === undefined) return 0;
    const spacing = busy ? LIST_SPACING : IDLE_LIST_SPACING;
    return this.listEndedAt + Math.min(spacing * this.listMs, this.o.maxMs);
  }

  // ---- requests ------------------------------------------------------------------------------

  private status(w: Wait, sentAt: number): void {
    w.inFlight = true;
    this.counters.status++;
    this.o.api.getIntegrationStatus(w.id).then(
      (s) => {
        w.inFlight = false;
        this.observe(w, s.status, sentAt);
      },
      (err: unknown) => {
        w.inFlight = false;
        if (!isNotFound(err)) this.failedPoll(w, err, sentAt);
        else if (w.op === 'delete') this.observe(w, 'gone', sentAt);
        else this.confirmGone(w, sentAt);
      },
    ).finally(() => this.wake(this.clock.monotonic()));
  }

  /** The status endpoint answered 404 for an integration being created or updated: ask `GET /integrations/{id}`. */
  private confirmGone(w: Wait, sentAt: number): void {
    w.inFlight = true;
    this.counters.status++;
    this.o.api.getIntegration(w.id).then(
      (live) => {
        w.inFlight = false;
        w.goneChecks = 0;
        delete w.goneSince;
        this.observe(w, live.status, sentAt);
      },
      (err: unknown) => {
        w.inFlight = false;
        if (!isNotFound(err)) return this.failedPoll(w, err, sentAt);
        w.goneChecks++;
        w.goneSince ??= sentAt;
        if (w.goneChecks >= GONE_CONFIRMATIONS && sentAt - w.goneSince >= GONE_CONFIRM_MS) return this.observe(w, 'gone', sentAt);
        this.o.logger?.debug({ id: w.id, checks: w.goneChecks }, 'integration not found right after its write: asking again before taking it as gone');
        w.statusOnly = true;
        w.lastPollAt = sentAt;
        w.lastMissAt = sentAt;
      },
    ).finally(() => this.wake(this.clock.monotonic()));
  }

  private list(sentAt: number): void {
    const covered = [...this.waits].filter((w) => !w.inFlight && !w.statusOnly && w.registeredAt <= sentAt);
    for (const w of covered) w.inFlight = true;
    this.listInFlight = true;
    this.counters.lists++;
    const createsBefore = this.creates;
    this.o.api.listIntegrationStatuses().then(
      ({ items: live, bytes }) => {
        this.listMs = this.clock.monotonic() - sentAt;
        this.listEndedAt = this.clock.monotonic(); // the next list is spaced from here (listReadyAt)
        // creates registered while the list was under way are not in it
        this.listSize = live.length + (this.creates - createsBefore);
        if (live.length > 0) this.bytesPerItem = bytes / live.length;
        const byId = new Map<string, IntegrationStatus>();
        for (const it of live) byId.set(it.id, it);
        // One list sees integrations whose transitions began at different moments: per type and operation,
        // the longest still under way and the shortest already over bracket the duration more tightly
        // than any one integration's polls (recorded when they agree: durations that vary may not). When they
        // agree, that bracket is all the list teaches for the key: each integration's own bracket would reach back
        // to its previous poll, a list spacing (LIST_SPACING) earlier, and pull the estimate towards the spacing.
        const cross = new Map<string, { lo: number; hi: number }>();
        const seen: Array<[Wait, string]> = [];
        for (const w of covered) {
          w.inFlight = false;
          if (!this.waits.has(w)) continue;
          const it = byId.get(w.id);
          const status = it ? it.status : w.op === 'delete' ? 'gone' : undefined;
          if (status === undefined) {
            w.statusOnly = true; // not listed (yet): its own status endpoint decides
            continue;
          }
          if (w.learn) {
            const c = cross.get(w.key) ?? { lo: -Infinity, hi: Infinity };
            const elapsed = sentAt - w.startedAt;
            if (status !== 'gone' && !isSettledStatus(status)) c.lo = Math.max(c.lo, elapsed); // a delete gone from the list is over
            else c.hi = Math.min(c.hi, elapsed);
            cross.set(w.key, c);
          }
          seen.push([w, status]);
        }
        const agreed = new Set<string>();
        for (const [key, { lo, hi }] of cross) {
          if (lo >= 0 && hi < Infinity && lo < hi) {
            this.o.stats.record(key, lo, hi);
            agreed.add(key);
          }
        }
        for (const [w, status] of seen) this.observe(w, status, sentAt, w.learn && !agreed.has(w.key));
      },
      (err: unknown) => {
        for (const w of covered) w.inFlight = false;
        this.listBackoffUntil = this.clock.monotonic() + LIST_BACKOFF_MS;
        this.o.logger?.debug({ err: { message: (err as Error).message } }, 'status list failed; polling one by one');
      },
    ).finally(() => {
      this.listInFlight = false;
      this.wake(this.clock.monotonic());
    });
  }

  /**
   * A poll that failed after the client's own retries: the write was accepted and the integration is in
   * transition, so a transient failure (the service busy or briefly unreachable) is a missed observation, polled
   * again at the next interval; a terminal one, or too many in a row, fails the wait.
   */
  private failedPoll(w: Wait, err: unknown, at: number): void {
    if (!this.waits.has(w)) return;
    if (!missedPollTolerated(err, ++w.failedPolls)) {
      this.settle(w, () => w.reject(err));
      return;
    }
    this.o.logger?.debug({ id: w.id, failedPolls: w.failedPolls, err: { message: (err as Error).message } }, 'status poll failed; polling again');
    w.lastPollAt = at;
  }

  /** `learn`: record this integration's own bracket when it settles (default: the wait's). */
  private observe(w: Wait, status: string, at: number, learn = w.learn): void {
    if (!this.waits.has(w)) return;
    w.failedPolls = 0;
    w.lastStatus = status;
    if (status !== 'gone' && !isSettledStatus(status)) {
      // Transitional, or a status the interface does not list: not settled, polled on until the timeout.
      const expected = this.o.stats.estimate(w.key);
      if (expected !== undefined && at >= w.startedAt + expected - 1) w.missesAfterEnd++;
      w.lastPollAt = at;
      w.lastMissAt = at;
      return;
    }
    if (learn) {
      const hi = at - w.startedAt;
      // Settled at its first look: it ended some time before; taken as within the last short interval
      // (or tenth of the time), which moves a late estimate down instead of taking "0" for a bound.
      const lo = w.lastMissAt !== undefined ? w.lastMissAt - w.startedAt : hi - Math.max(this.short(this.o.stats.estimate(w.key)), hi * 0.1);
      this.o.stats.record(w.key, Math.max(0, lo), hi);
    }
    this.settle(w, () => w.resolve(status));
  }

  private settle(w: Wait, done: () => void): void {
    if (!this.waits.delete(w)) return;
    done();
  }

  private timeout(w: Wait): void {
    this.settle(w, () =>
      w.reject(
        new ApplyFailure(ErrorCode.settleTimeout, `timed out waiting for integration ${w.id} to settle (${describeUnsettled(w.lastStatus)})`, {
          liveId: w.id,
          unsettled: describeUnsettled(w.lastStatus),
        }),
      ),
    );
  }

  private cancelAll(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const w of [...this.waits]) this.settle(w, () => w.reject(new CancelledError('wait abandoned: govops is shutting down')));
  }
}
