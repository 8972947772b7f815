/**
 * Leader election for `govops run` with a PostgreSQL state (client-go's lease: duration, renew deadline,
 * retry period; defaults 15s / 10s / 2s). One replica leads and reconciles; the others stand by: they keep
 * loading and planning revisions (never writing) and take the lease once it expires.
 *
 * Safety: the leader counts itself leading only until `renew deadline` after the start of its last
 * successful renewal, measured on the monotonic clock, which is shorter than the lease the database
 * gave it — so it stops sending writes to the service (`gate`, asked before every write) and aborts its
 * reconcile before any other replica can take over, even after being frozen (SIGSTOP). Every state write
 * checks the lease term in its own transaction (the fence), so a deposed leader's writes are refused.
 *
 * Push hooks: a replica that is not leading announces an accepted push with NOTIFY; the leader LISTENs
 * and fetches. An outage of the database is reported (status, readiness, metric) and ends by itself.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ErrorCode, UserError } from '../errors.js';
import { pgStateFor, type PgState } from '../state/pg/backend.js';
import { HOOK_CHANNEL, readLease, releaseLease, renewLease, tryAcquireLease, type LeaseRecord } from '../state/pg/lease.js';
import { backgroundClock, type Clock } from '../util/clock.js';
import { formatDuration } from '../util/duration.js';

export interface LeaseSettings {
  durationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const DEFAULT_LEASE: LeaseSettings = { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Why lease settings cannot work (retry < renew deadline < duration), or undefined. */
export function leaseSettingsProblem(s: LeaseSettings): string | undefined {
  if (!(s.retryPeriodMs > 0 && s.retryPeriodMs < s.renewDeadlineMs)) return '--lease-retry-period must be shorter than --lease-renew-deadline';
  if (!(s.renewDeadlineMs < s.durationMs)) return '--lease-renew-deadline must be shorter than --lease-duration';
  return undefined;
}

/** A replica's default identity: its host name (a pod's name) and a random suffix (a restart is another replica). */
export function defaultIdentity(): string {
  return `${os.hostname()}_${randomBytes(3).toString('hex')}`;
}

export type Role = 'leader' | 'standby';

export interface LeaderOptions {
  statePath: string;
  identity: string;
  lease?: LeaseSettings;
  logger: Logger;
  registry: Registry;
  /** This replica now leads (reconcile the last good revision). */
  onElected(): void;
  /** A push was announced by another replica (the leader fetches). */
  onHook(): void;
  /** Monotonic clock in ms (default: `clock`'s). */
  now?: () => number;
  /**
   * The time of day of what /status shows (`since`) and the timer that reports the database unreachable when a lease
   * request goes unanswered (default: the system's, timers unref'd; tests inject one they move by hand).
   */
  clock?: Clock;
}

export class LeaderElector {
  readonly identity: string;
  readonly lease: LeaseSettings;
  private readonly state: PgState;
  private readonly log: Logger;
  private role: Role = 'standby';
  private term?: number;
  private since: string;
  /** Monotonic time (now()) until which this replica counts itself leading. */
  private leadingUntil = 0;
  private lost = new AbortController();
  private seen?: LeaseRecord;
  private db: { up: boolean; since: string; error?: string };
  private timer?: NodeJS.Timeout;
  private deadline?: NodeJS.Timeout;
  private ticking = false;
  /** The lease request under way (stop waits for it, within its time). */
  private inFlight?: Promise<void>;
  private stopped = false;
  private listener?: pg.Client;
  private listenRetry?: NodeJS.Timeout;
  /** The listener has sent LISTEN and not failed since. */
  private listening = false;
  /** A listener that was listening failed (a push may have been announced while none listened). */
  private listenerLost = false;
  private pinging = false;
  private readonly leaderGauge: Gauge;
  private readonly termGauge: Gauge;
  private readonly dbGauge: Gauge;
  private readonly transitions: Counter;
  private readonly now: () => number;
  private readonly clock: Clock;

  constructor(private readonly o: LeaderOptions) {
    this.identity = o.identity;
    this.clock = o.clock ?? backgroundClock;
    this.now = o.now ?? (() => this.clock.monotonic());
    this.since = this.isoNow();
    this.db = { up: true, since: this.since };
    this.lease = o.lease ?? DEFAULT_LEASE;
    this.state = pgStateFor(o.statePath);
    this.log = o.logger.child({ component: 'leader', identity: o.identity });
    this.state.fence = { identity: this.identity, term: -1 };
    // A lock held by another replica that no longer leads is broken by the leader (see PgState.breakLockOf).
    this.state.breakLockOf = (h) => this.isLeading() && h.identity !== undefined && h.identity !== this.identity;
    this.leaderGauge = new Gauge({ name: 'govops_leader', help: '1 while this replica leads (holds the lease), 0 on standby', registers: [o.registry] });
    this.termGauge = new Gauge({ name: 'govops_leader_term', help: 'The lease term this replica leads (0 on standby)', registers: [o.registry] });
    this.dbGauge = new Gauge({ name: 'govops_state_database_up', help: '1 when the last query to the PostgreSQL state succeeded', registers: [o.registry] });
    this.transitions = new Counter({
      name: 'govops_leader_transitions_total',
      help: 'Role changes of this replica (to="leader": elected, to="standby": lost or gave up the lease)',
      labelNames: ['to'],
      registers: [o.registry],
    });
    this.transitions.inc({ to: 'leader' }, 0);
    this.transitions.inc({ to: 'standby' }, 0);
    this.dbGauge.set(1);
  }

  async start(): Promise<void> {
    await this.tick();
    if (this.stopped) return; // stopped during the first request: no timer, no listener left behind
    this.timer = setInterval(() => void this.tick(), this.lease.retryPeriodMs);
    this.listen();
  }

  /** Whether this replica may write now (holds the lease, renewed within the renew deadline). */
  isLeading(): boolean {
    return this.role === 'leader' && this.now() < this.leadingUntil;
  }

  /** Asked before every write to the service: refuses (unsent) unless this replica leads. */
  gate(method: string, path: string): void {
    if (this.isLeading()) return;
    if (this.role === 'leader') this.stepDown('the renew deadline passed');
    throw new UserError(`${method} ${path} not sent: this replica (${this.identity}) does not hold the lease`, 'the leader applies; this replica stands by', {
      code: ErrorCode.stateFenced,
    });
  }

  /** Aborted when the current leadership ends (the reconcile in progress stops). */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  get databaseUp(): boolean {
    return this.db.up;
  }

  status(): Record<string, unknown> {
    return {
      role: this.role,
      identity: this.identity,
      ...(this.term !== undefined ? { term: this.term } : {}),
      since: this.since,
      leader: this.seen?.live ? { identity: this.seen.holder, term: this.seen.term, since: this.seen.acquiredAt, expiresAt: this.seen.expiresAt } : null,
      lease: this.lease,
      database: this.db,
    };
  }

  /**
   * Readiness: why not ready because of the database, or undefined. The reason in words (anyone may read it);
   * the database's error text (host, address, user) as detail (/readyz shows it only where /status would be).
   */
  readinessProblem(): { reason: string; detail?: string } | undefined {
    if (this.db.up) return undefined;
    const reason = `the PostgreSQL state is unreachable since ${this.db.since}`;
    return this.db.error ? { reason, detail: this.db.error } : { reason };
  }

  /**
   * Stop electing. A leader releases its lease (the next replica takes over at once) only when `release`: after a
   * shutdown whose grace cut calls short, a POST already sent may still land, so the lease is left to expire, and the
   * next leader starts no sooner than a leader that froze would let it (the lease duration). `withinMs`: what is
   * left of the shutdown's grace; a database that answers nothing in it (a partition) is not waited for (the lease
   * then expires by itself).
   */
  async stop(options: { release?: boolean; withinMs?: number } = {}): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.deadline) clearTimeout(this.deadline);
    if (this.listenRetry) clearTimeout(this.listenRetry);
    const term = this.term;
    const wasLeader = this.role === 'leader';
    // a normal stop is no warning: only a release that failed (or a database that does not answer, below) is one
    if (wasLeader) this.stepDown('shutting down', 'info');
    const listener = this.listener;
    const inFlight = this.inFlight;
    const last = (async () => {
      await inFlight; // a lease request under way: a lease it takes is given back (tick), not left to expire
      if (wasLeader && term !== undefined && options.release !== false) {
        try {
          await releaseLease(this.state, this.identity, term);
          this.log.info({ term }, 'lease released: another replica can lead at once');
        } catch (err) {
          this.log.warn({ term, err: { message: (err as Error).message } }, 'could not release the lease: it is left to expire (the next leader waits for it)');
        }
      } else if (wasLeader && term !== undefined) {
        this.log.info({ term }, 'lease left to expire: a write sent before the stop may still land');
      }
      await listener?.end().catch(() => undefined);
    })();
    if (options.withinMs === undefined) return last;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([
      last.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), options.withinMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (gaveUp) this.log.warn({ withinMs: options.withinMs }, 'the PostgreSQL state did not answer within the grace period: the lease is left to expire');
  }

  /** Tell the leader about a push this replica accepted (when it is not the leader itself). */
  announcePush(): void {
    if (this.isLeading()) return;
    this.state.pool.query('SELECT pg_notify($1, $2)', [HOOK_CHANNEL, this.state.loc.key]).catch((err: unknown) => {
      this.log.warn({ err: { message: (err as Error).message } }, 'could not pass the push on to the leader');
    });
  }

  private tick(): Promise<void> {
    if (this.ticking || this.stopped) return Promise.resolve();
    const run = this.tickOnce();
    this.inFlight = run;
    return run;
  }

  /**
   * One lease request: a renewal (leader) or a takeover and a read (standby). A request still unanswered after the
   * renew deadline reports the database unreachable (the watchdog), whatever the replica's role: the leader's renewal
   * fails at it anyway, and a standby's takeover keeps waiting (up to the pool's query timeout, see lease.ts: given up
   * by the client, it might still take the lease) but no longer says meanwhile that all is well.
   */
  private async tickOnce(): Promise<void> {
    this.ticking = true;
    const t0 = this.now();
    const { renewDeadlineMs } = this.lease;
    const watchdog = this.clock.setTimeout(() => {
      if (this.ticking && !this.stopped) this.dbDown(new Error(`a lease request got no answer within ${formatDuration(renewDeadlineMs)} (the renew deadline)`));
    }, renewDeadlineMs);
    try {
      if (this.role === 'leader' && this.term !== undefined) {
        const renewed = await renewLease(this.state, this.identity, this.term, this.lease.durationMs, this.lease.renewDeadlineMs);
        this.dbUp();
        // what /status shows of the lease is the renewal's (it showed the first expiry for ever, soon in the past)
        if (renewed) this.seen = renewed;
        if (renewed && !this.stopped) this.leading(t0);
        else if (!renewed) this.stepDown('the lease is no longer ours');
      } else {
        const got = await tryAcquireLease(this.state, this.identity, this.lease.durationMs);
        this.dbUp();
        // Taken after stop(): this replica never led (sent nothing), so the lease is given back at once, not left to
        // expire while every other replica waits the lease duration.
        if (got && this.stopped) await releaseLease(this.state, this.identity, got.term);
        else if (got) this.elected(got, t0);
        else this.seen = await readLease(this.state, this.lease.renewDeadlineMs);
      }
    } catch (err) {
      this.dbDown(err);
      if (this.role === 'leader' && !this.isLeading()) this.stepDown('could not renew the lease within the renew deadline');
    } finally {
      this.clock.clearTimeout(watchdog);
      this.ticking = false;
    }
    this.pingListener();
  }

  private leading(t0: number): void {
    this.leadingUntil = t0 + this.lease.renewDeadlineMs;
    if (this.deadline) clearTimeout(this.deadline);
    // Step down at the deadline itself, even while a renewal hangs. The deadline counts from the renewal's start: a
    // renewal whose answer came late (sent just before the process was frozen, answered after it was thawed) is
    // already past it, and the replica stands down now; counted from its answer, it still said it led until the
    // next tick, whose renewal the database refused.
    this.deadline = setTimeout(() => {
      if (this.role === 'leader' && !this.isLeading()) this.stepDown('could not renew the lease within the renew deadline');
    }, Math.max(0, this.leadingUntil - this.now()) + 1);
  }

  private elected(lease: LeaseRecord, t0: number): void {
    this.role = 'leader';
    this.term = lease.term;
    this.seen = lease;
    this.since = this.isoNow();
    this.lost = new AbortController();
    this.state.fence = { identity: this.identity, term: lease.term };
    this.leading(t0);
    this.leaderGauge.set(1);
    this.termGauge.set(lease.term);
    this.transitions.inc({ to: 'leader' });
    this.log.info({ term: lease.term }, 'elected leader: reconciling');
    this.o.onElected();
  }

  /** No longer leading: a warning when leadership was lost, info when the replica gave it up (shutting down). */
  private stepDown(why: string, level: 'warn' | 'info' = 'warn'): void {
    if (this.role !== 'leader') return;
    this.role = 'standby';
    this.leadingUntil = 0;
    if (this.deadline) clearTimeout(this.deadline);
    this.state.fence = { identity: this.identity, term: -1 };
    this.since = this.isoNow();
    this.leaderGauge.set(0);
    this.termGauge.set(0);
    this.transitions.inc({ to: 'standby' });
    this.log[level]({ term: this.term, why }, 'no longer leader: standing by');
    this.term = undefined;
    this.lost.abort(new UserError(`leadership lost: ${why}`, undefined, { code: ErrorCode.stateFenced }));
  }

  private isoNow(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private dbUp(): void {
    if (this.db.up) return;
    this.db = { up: true, since: this.isoNow() };
    this.dbGauge.set(1);
    this.log.info('the PostgreSQL state is reachable again');
  }

  private dbDown(err: unknown): void {
    const error = err instanceof Error ? err.message : String(err);
    if (this.db.up) {
      this.db = { up: false, since: this.isoNow(), error };
      this.dbGauge.set(0);
      this.log.warn({ err: { message: error } }, 'the PostgreSQL state is unreachable: no write is sent until it is back');
    } else this.db.error = error;
  }

  /**
   * LISTEN for pushes other replicas received; reconnects after the database comes back. A connection dropped
   * silently (a NAT or firewall forgetting an idle flow) sends no error and no end: every lease tick sends the
   * listener a `SELECT 1`, and one not answered within the renew deadline ends it and connects anew. A push
   * announced while the listener was away is lost, so a leader whose listener came back fetches once.
   */
  private listen(): void {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.state.loc.connectionString,
      application_name: 'govops-listen',
      connectionTimeoutMillis: 5_000,
      query_timeout: this.lease.renewDeadlineMs, // the heartbeat's limit (pingListener)
    });
    this.listener = client;
    this.listening = false;
    client.on('error', () => this.relisten(client));
    client.on('end', () => this.relisten(client));
    client.on('notification', (n) => {
      if (n.channel === HOOK_CHANNEL && n.payload === this.state.loc.key && this.isLeading()) {
        this.log.info('push received by another replica: fetching');
        this.o.onHook();
      }
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${HOOK_CHANNEL}`))
      .then(() => {
        if (this.listener !== client) return;
        this.listening = true;
        if (this.listenerLost && this.isLeading()) {
          this.log.info('the push listener is connected again: fetching, in case a push was announced meanwhile');
          this.o.onHook();
        }
        this.listenerLost = false;
      })
      .catch(() => this.relisten(client));
  }

  /** End a listener that failed (or stopped answering) and connect anew after a retry period. */
  private relisten(client: pg.Client): void {
    if (this.stopped || this.listener !== client) return;
    if (this.listening) this.listenerLost = true;
    this.listener = undefined;
    this.listening = false;
    client.end().catch(() => undefined); // a query that hangs (the heartbeat) makes end() destroy the socket
    this.listenRetry = setTimeout(() => this.listen(), this.lease.retryPeriodMs);
  }

  /** The listener's heartbeat (see listen): one at a time, at each lease tick. */
  private pingListener(): void {
    const client = this.listener;
    if (!client || !this.listening || this.pinging || this.stopped) return;
    this.pinging = true;
    client
      .query('SELECT 1')
      .catch((err: unknown) => {
        if (this.listener !== client) return;
        this.log.warn({ err: { message: (err as Error).message } }, 'the push listener\'s connection does not answer: connecting anew');
        this.relisten(client);
      })
      .finally(() => {
        this.pinging = false;
      });
  }
}
