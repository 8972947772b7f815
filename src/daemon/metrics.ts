/** The daemon's Prometheus metrics, in a registry of its own (never prom-client's global one). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestEvent } from '../api/client.js';
import type { Verdict } from './classify.js';
import type { Attempt, WaitingRevision } from './loop.js';
import { countStates, resourceStates } from './resources.js';

/**
 * prom-client's default gauges that end in `_total`, a suffix the Prometheus naming rules keep for counters
 * (`promtool check metrics` fails on them). Each is the sum of its unsuffixed gauge by type
 * (`nodejs_active_handles` ...), so nothing is lost: `sum(nodejs_active_handles)`.
 */
export const DROPPED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Every reconcile result (a missing or unknown one fails to compile): each series exists from the start at 0. */
const RESULTS: Record<Verdict, true> = { applied: true, 'in-sync': true, blocked: true, drift: true, invalid: true, unreachable: true, failed: true };

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'govops_reconcile_total',
    help: 'Reconcile attempts by result (applied, in-sync, blocked, drift, invalid, unreachable, failed)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'govops_reconcile_duration_seconds',
    help: 'Duration of reconcile attempts by result',
    labelNames: ['result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly resources = new Gauge({
    name: 'govops_resources',
    help: 'Managed resources by kind (integration type, data_source or webhook) and sync state, as of the last reconcile',
    labelNames: ['kind', 'sync_state'],
    registers: [this.registry],
  });
  readonly lastAppliedRevision = new Gauge({
    name: 'govops_last_applied_revision_info',
    help: 'The revision last applied successfully (value 1)',
    labelNames: ['revision'],
    registers: [this.registry],
  });
  readonly lastAppliedTimestamp = new Gauge({
    name: 'govops_last_applied_timestamp_seconds',
    help: 'Unix time of the last successful apply by this process (no sample before one: a start, a standby)',
    registers: [this.registry],
  });
  readonly drift = new Gauge({
    name: 'govops_drift_detected',
    help: '1 when the last drift check found live state differing from the last good revision and did not repair it',
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: 'govops_revisions_rejected_total',
    help: 'Revisions rejected whole (invalid manifest, unresolvable secret, plan error)',
    registers: [this.registry],
  });
  /** What /readyz answers, read at each scrape (set by the daemon); unset: the value the last attempt recorded. */
  private readyProbe?: () => boolean;
  readonly ready: Gauge = new Gauge({
    name: 'govops_ready',
    help: '1 when /readyz answers 200',
    registers: [this.registry],
    // Readiness changes without a reconcile (shutting down, the PostgreSQL state unreachable): read it when scraped.
    collect: (): void => {
      if (this.readyProbe) this.ready.set(this.readyProbe() ? 1 : 0);
    },
  });
  readonly apiDuration = new Histogram({
    name: 'govops_api_request_duration_seconds',
    help: 'Service API requests (each HTTP attempt) by method, route template and status (0: no response)',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly gitFetchDuration = new Histogram({
    name: 'govops_git_fetch_duration_seconds',
    help: 'Duration of git fetches',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly deletionsRefused = new Gauge({
    name: 'govops_deletions_refused',
    help: 'Deletes the mass-deletion guard held back in the last plan (0 when none); see /status deletionGuard',
    registers: [this.registry],
  });
  readonly observe = new Gauge({
    name: 'govops_observe_mode',
    help: '1 when the daemon runs with --observe (plans only, never writes)',
    registers: [this.registry],
  });
  readonly pendingChanges = new Gauge({
    name: 'govops_pending_changes',
    help: 'Resources the last plan would change that were not applied (drift, --observe, blocked); see /status pendingChanges',
    registers: [this.registry],
  });
  /** What the two gauges below read when scraped (set by the daemon). */
  private waiting: { probe: () => WaitingRevision | undefined; ageMs: () => number | undefined } = { probe: () => undefined, ageMs: () => undefined };
  readonly revisionWaiting: Gauge = new Gauge({
    name: 'govops_revision_waiting',
    help: '1 while a revision that arrived is not applied yet (queued, running, or failed and retried); see /status revision.waiting',
    registers: [this.registry],
    collect: (): void => this.revisionWaiting.set(this.waiting.probe() ? 1 : 0),
  });
  readonly revisionWaitingSeconds: Gauge = new Gauge({
    name: 'govops_revision_waiting_seconds',
    help: 'Seconds since the revision waiting to be applied arrived (0 when none waits)',
    registers: [this.registry],
    collect: (): void => {
      const ms = this.waiting.ageMs();
      this.revisionWaitingSeconds.set(ms === undefined ? 0 : ms / 1000);
    },
  });
  readonly revisionWaitingAttempts: Gauge = new Gauge({
    name: 'govops_revision_waiting_attempts',
    help: 'Attempts made so far at the revision waiting to be applied (0 when none waits)',
    registers: [this.registry],
    collect: (): void => this.revisionWaitingAttempts.set(this.waiting.probe()?.attempts ?? 0),
  });
  readonly gitFetchFailures = new Counter({
    name: 'govops_git_fetch_failures_total',
    help: 'Failed git fetches',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of DROPPED_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
    }
    // No sample until this process applies (prom-client starts an unlabelled gauge at 0): 0 read as 1970, and
    // `time() - govops_last_applied_timestamp_seconds > 3600` paged at the first failed reconcile after every restart
    // or failover, and on a standby (which never applies) at every failed plan.
    this.lastAppliedTimestamp.remove();
    this.drift.set(0);
    this.ready.set(0);
    this.deletionsRefused.set(0);
    this.observe.set(0);
    this.pendingChanges.set(0);
    this.gitFetchFailures.inc(0);
    this.rejected.inc(0);
    // So that `increase(govops_reconcile_total{result="failed"}[..]) > 0` fires on the first failure after a restart.
    for (const result of Object.keys(RESULTS)) {
      this.reconcileTotal.inc({ result }, 0);
      this.reconcileDuration.zero({ result });
    }
  }

  /** Read readiness (what /readyz answers) at each scrape. */
  watchReady(probe: () => boolean): void {
    this.readyProbe = probe;
  }

  /**
   * Read the revision waiting to be applied, and how long it has waited (ms, on a monotonic clock: never the time of day
   * against its `since`, which a step of the wall clock would move by as much), at each scrape.
   */
  watchWaiting(probe: () => WaitingRevision | undefined, ageMs: () => number | undefined): void {
    this.waiting = { probe, ageMs };
  }

  onRequest = (e: RequestEvent): void => {
    this.apiDuration.observe({ method: e.method, route: e.route, status: String(e.status) }, e.durationMs / 1000);
  };

  onGitFetch = (durationSec: number, ok: boolean): void => {
    this.gitFetchDuration.observe(durationSec);
    if (!ok) this.gitFetchFailures.inc();
  };

  recordAttempt(a: Attempt, snapshot: { drift: boolean; ready: boolean; lastApplied?: { revision: string; at: string } }): void {
    this.reconcileTotal.inc({ result: a.verdict });
    this.reconcileDuration.observe({ result: a.verdict }, a.durationSec);
    if (a.verdict === 'invalid') this.rejected.inc();
    if (a.result?.plan) {
      this.deletionsRefused.set(a.result.plan.deletionRefusal?.refused ?? 0);
      this.resources.reset();
      const states = resourceStates(a.result);
      this.pendingChanges.set(states.filter((r) => r.syncState === 'out_of_sync' || r.syncState === 'blocked').length);
      for (const c of countStates(states).values()) {
        this.resources.set({ kind: c.kind, sync_state: c.syncState }, c.count);
      }
    }
    if (snapshot.lastApplied) {
      this.lastAppliedRevision.reset();
      this.lastAppliedRevision.set({ revision: snapshot.lastApplied.revision }, 1);
      this.lastAppliedTimestamp.set(Date.parse(snapshot.lastApplied.at) / 1000);
    }
    this.drift.set(snapshot.drift ? 1 : 0);
    this.ready.set(snapshot.ready ? 1 : 0);
  }
}
