/**
 * The daemon: a source feeding the reconcile loop, with metrics and HTTP endpoints.
 * `startDaemon` returns once the endpoints listen and the source had its first look.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../errors.js';
import type { DeletionRefusal } from '../plan/types.js';
import type { Revision, Source } from '../sources/types.js';
import { heldBack, isSuccess, onlyCancelled } from './classify.js';
import { backgroundClock, type Clock } from '../util/clock.js';
import { ReconcileLoop, type Attempt, type LoopOptions, type ReconcileFn } from './loop.js';
import { ManifestWarningLog } from './manifest-warnings.js';
import { ManualStepLog } from './manual-steps.js';
import { DaemonMetrics } from './metrics.js';
import { garbageCollector } from './memory.js';
import type { Notifier } from './notify.js';
import { countByKind, resourceStates, type ResourceState } from './resources.js';
import { sectionValues, type BlockedResource, type DaemonStatus, type LastError, type ReconcileSummary, type SourceLastError, type StatusSections } from './status.js';
import { SecretsInForce } from './secrets-in-force.js';
import { startHttpServer, type HttpServerHandle, type Readiness } from './server.js';
import { followsRef } from './hooks.js';
import { redactText, secretRedactor } from '../util/redact.js';

export interface DaemonOptions {
  source: Source;
  reconcile: ReconcileFn;
  /** Whether a revision rejected for unreadable secret files loads now (the loop's `recheck`; engine.ts). */
  recheck?: LoopOptions['recheck'];
  /** Whether the state and the service can be read, while no revision is in force (the loop's `probe`; engine.ts). */
  probe?: LoopOptions['probe'];
  logger: Logger;
  listen: { host: string; port: number; anyHost?: true; loopbackOnly?: boolean };
  resyncMs: number;
  selfHeal: boolean;
  /** --observe: plan every revision and resync, never write (reported in logs, /status and metrics). */
  observe?: boolean;
  /** Posts a notification for each reconcile worth telling (--notify-url). */
  notifier?: Notifier;
  hookSecret?: string;
  /** Bearer token GET /status requires; unset: /status is open. */
  statusToken?: string;
  /** Branch watched (push notifications for other branches are ignored). */
  branch?: string;
  metrics?: DaemonMetrics;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Extra fields for /status (e.g. options in force). */
  info?: Record<string, unknown>;
  /** More /status sections, computed on each request (e.g. `webhookHealth`). */
  statusSections?: StatusSections;
  /** The loop's clock (retries, resyncs, how long a revision waits); default the system's. */
  clock?: Clock;
  /** Called for each push notification accepted (a standby passes it on to the leader). */
  onPush?: () => void;
  /**
   * Another reason not to be ready (e.g. the PostgreSQL state unreachable), or undefined: `reason` in words,
   * `detail` the error text (shown as /readyz's detail, only where /status would be).
   */
  notReady?: () => { reason: string; detail?: string } | undefined;
}

export class Daemon {
  readonly loop: ReconcileLoop;
  readonly metrics: DaemonMetrics;
  private http?: HttpServerHandle;
  private resources: ResourceState[] = [];
  private resourcesRevision?: string;
  /** The mass-deletion guard's refusal in the last plan, if any. */
  private refusal?: DeletionRefusal & { revision: string };
  private shuttingDown = false;
  /** Set when start() starts the source: a push notification before it triggers nothing of its own. */
  private sourceStarted = false;
  /** Whether the service lists data sources, as the last plan with data sources in play found (unknown before). */
  private dataSources?: { supported: boolean; message?: string; revision: string };
  private startWaiters: Array<(r: Revision) => void> = [];
  private manualSteps = new ManualStepLog();
  private manifestWarnings = new ManifestWarningLog();
  /** Memory tuning, chosen once at start (src/daemon/memory.ts). */
  private readonly collectGarbage = garbageCollector();
  /** The manifest secrets the redactor keeps: those of the reconciles whose results are still shown. */
  private readonly secrets = new SecretsInForce(secretRedactor);

  constructor(private readonly opts: DaemonOptions) {
    this.metrics = opts.metrics ?? new DaemonMetrics();
    const clock = opts.clock ?? backgroundClock;
    this.loop = new ReconcileLoop({
      reconcile: opts.reconcile,
      ...(opts.recheck ? { recheck: opts.recheck } : {}),
      ...(opts.probe ? { probe: opts.probe } : {}),
      logger: opts.logger,
      resyncMs: opts.resyncMs,
      selfHeal: opts.selfHeal,
      ...(opts.observe ? { observe: true } : {}),
      retryBaseMs: opts.retryBaseMs,
      retryMaxMs: opts.retryMaxMs,
      onStart: (r) => {
        this.secrets.begin();
        for (const w of this.startWaiters.splice(0)) w(r.revision);
      },
      onAttempt: (a) => this.afterAttempt(a),
      clock,
    });
    this.metrics.watchWaiting(() => this.loop.snapshot().waiting, () => this.loop.waitingForMs());
    this.metrics.watchReady(() => this.readiness().ready);
    opts.source.onRevision((r) => this.loop.submit(r));
  }

  get url(): string {
    if (!this.http) throw new Error('daemon not started');
    return this.http.url;
  }

  /**
   * Serve the HTTP endpoints (once). Called before anything start-up waits for (the first lease request of a PostgreSQL
   * state, up to the driver's query timeout; the first clone): /healthz answers from the start, as the Kubernetes
   * examples' startup probe expects, and /readyz says why the daemon is not ready yet.
   */
  async listen(): Promise<void> {
    if (this.http) return;
    this.http = await startHttpServer(
      this.opts.listen,
      {
        ready: () => this.readiness(),
        status: () => this.status(),
        registry: this.metrics.registry,
        hookSecret: this.opts.hookSecret,
        ...(this.opts.statusToken !== undefined ? { statusToken: this.opts.statusToken } : {}),
        onPush: (v) => {
          if (this.shuttingDown) return 'stopping';
          if (!followsRef(v.ref, this.opts.branch)) return false;
          // before the source starts, its first fetch (or scan) is still to come and sees the push
          if (this.sourceStarted) void this.opts.source.refresh();
          this.opts.onPush?.();
          return true;
        },
      },
      this.opts.logger,
    );
    this.opts.logger.info({ url: this.http.url, source: this.opts.source.describe() }, 'govops daemon listening');
  }

  /** Serve the HTTP endpoints (unless `listen` did already), then start the source (its first fetch or scan). */
  async start(): Promise<void> {
    await this.listen();
    this.sourceStarted = true;
    await this.opts.source.start();
  }

  /** Resolves when the next reconcile starts (benchmarks). */
  nextStart(): Promise<Revision> {
    return new Promise((r) => this.startWaiters.push(r));
  }

  /** Ready or why not: `reason` in words and codes, `detail` the error text (shown by /readyz with the status token). */
  readiness(): Readiness {
    const s = this.loop.snapshot();
    if (this.shuttingDown) return { ready: false, reason: 'shutting down' };
    const extra = this.opts.notReady?.();
    if (extra) return { ready: false, ...extra };
    if (s.ready) return { ready: true };
    if (s.probe && !s.probe.ok) {
      const code = s.probe.failure ? ` (${s.probe.failure.code})` : '';
      const why = s.probe.verdict === 'unreachable' ? `service unreachable${code}` : `the state or the service could not be read${code}`;
      return { ready: false, reason: `${why}; no revision in force (the newest was rejected)`, ...(s.probe.error !== undefined ? { detail: s.probe.error } : {}) };
    }
    const last = s.lastAttempt;
    if (!last) {
      const source = this.opts.source.health();
      if (!this.opts.source.current() && source.ok === false) return { ready: false, reason: 'no revision yet: the source fails', detail: source.error ?? 'unknown error' };
      return { ready: false, reason: 'no reconcile finished yet' };
    }
    const code = last.failure ? ` (${last.failure.code})` : '';
    const detail = last.error !== undefined ? { detail: last.error } : {};
    if (last.verdict === 'unreachable') return { ready: false, reason: `service unreachable${code}`, ...detail };
    if (!s.lastSuccess) return { ready: false, reason: `no successful reconcile yet (last: ${last.verdict}${code})`, ...detail };
    return { ready: false, reason: `the last reconcile failed${code}${last.error === undefined ? `: ${last.verdict}` : ''}`, ...detail };
  }

  status(): DaemonStatus {
    const s = this.loop.snapshot();
    const latest = this.opts.source.current();
    const source = this.opts.source.health();
    const failed = s.lastAttempt && !isSuccess(s.lastAttempt.verdict) ? s.lastAttempt : undefined;
    const rejectedIsLatest = rejectedShown(s, latest) !== undefined;
    const reconcileError = (failed ?? (rejectedIsLatest ? s.rejected : undefined)) && errorOf((failed ?? s.rejected)!);
    // The newest problem: a source failing since after the last reconcile's error is what needs attention now.
    const sourceError: SourceLastError | undefined = source.ok === false && source.failingSince && !(reconcileError && String(reconcileError.at) > source.failingSince)
      ? { stage: 'source', result: 'fetch-failed', code: ErrorCode.sourceFetch, retry: 'backoff', at: source.lastAttemptAt, since: source.failingSince, message: source.error }
      : undefined;
    return {
      source: { ...this.opts.source.describe(), ...source },
      revision: {
        latest: latest?.id,
        lastGood: s.lastGood?.id,
        lastApplied: s.lastApplied?.revision,
        lastAppliedAt: s.lastApplied?.at,
        pending: s.pending,
        rejected: rejectedIsLatest ? s.rejected!.revision : undefined,
        ...(s.waiting ? { waiting: s.waiting } : {}),
      },
      ready: this.readiness().ready,
      observe: this.opts.observe === true,
      drift: s.drift,
      lastDrift: s.lastDrift,
      pendingChanges: this.resources
        .filter((r) => r.syncState === 'out_of_sync' || r.syncState === 'blocked')
        .map((r) => ({ kind: r.kind, name: r.name, action: r.action, syncState: r.syncState })),
      running: s.running,
      lastReconcile: s.lastAttempt && summarize(s.lastAttempt),
      lastSuccess: s.lastSuccess && summarize(s.lastSuccess),
      lastError: sourceError ?? reconcileError,
      nextRetryAt: s.nextRetryAt,
      consecutiveFailures: s.consecutiveFailures,
      deletionGuard: this.refusal,
      resources: this.resources,
      resourceCounts: countByKind(this.resources),
      resourcesRevision: this.resourcesRevision,
      ...(this.dataSources ? { dataSources: this.dataSources } : {}),
      ...(this.opts.info ? { options: this.opts.info } : {}),
      ...sectionValues(this.opts.statusSections),
    };
  }

  /**
   * Stop accepting work, let the in-flight reconcile finish and notifications go out, close the endpoints: all
   * within `graceMs` (real time, as the orchestrator's kill timer counts it: monotonic, never the time of day, which
   * NTP may set forward meanwhile), each step getting what the one before left.
   */
  async stop(graceMs: number): Promise<boolean> {
    const deadline = performance.now() + graceMs;
    const left = (): number => Math.max(0, deadline - performance.now());
    this.shuttingDown = true;
    await this.opts.source.stop();
    const finished = await this.loop.stop(left());
    await this.opts.notifier?.stop(Math.min(left(), 5000));
    await this.http?.close();
    return finished;
  }

  /** "Not supported" is logged once, when it is first seen (and again only after the service had them). */
  private noteDataSources(plan: { dataSourcesUnsupported?: string; changes: ReadonlyArray<{ resourceKind: string }> }, revision: string): void {
    const message = plan.dataSourcesUnsupported;
    if (message !== undefined) {
      if (this.dataSources?.supported !== false) this.opts.logger.warn({ code: ErrorCode.dataSourcesUnsupported, revision }, message);
      // Redacted now, with the secrets of the reconcile that saw it: it may be shown for long after (it changes only
      // when support does), and must not keep that reconcile's secrets in force meanwhile.
      this.dataSources = { supported: false, message: redactText(message), revision };
    } else if (plan.changes.some((c) => c.resourceKind === 'DataSource')) {
      if (this.dataSources?.supported === false) this.opts.logger.info({ revision }, 'data sources are supported by the service now');
      this.dataSources = { supported: true, revision };
    }
  }

  private async afterAttempt(a: Attempt): Promise<void> {
    this.secrets.record(a);
    // A rejected revision's warnings are logged with its errors; an accepted one's here, once per revision.
    if (a.verdict !== 'invalid') {
      this.manifestWarnings.report(a.revision, { diagnostics: a.result?.diagnostics, planWarnings: a.result?.plan?.warnings }, this.opts.logger);
    }
    if (a.result?.plan) {
      this.secrets.hold('plan', a);
      this.resources = resourceStates(a.result);
      this.resourcesRevision = a.revision;
      const refusal = a.result.plan.deletionRefusal;
      this.refusal = refusal ? { ...refusal, revision: a.revision } : undefined;
      if (refusal) this.opts.logger.error({ revision: a.revision, refusal }, 'mass deletion refused');
      this.noteDataSources(a.result.plan, a.revision);
      this.manualSteps.report(a.revision, a.result.plan, this.opts.logger);
    }
    const shown = this.loop.snapshot();
    // The rejected revision is shown only while it is the latest: once a newer one came, it no longer holds its
    // reconcile's secrets in force (it held them forever, so no rotated-away value was released after a rejection).
    this.secrets.release([shown.lastAttempt, shown.lastSuccess, rejectedShown(shown, this.opts.source.current())]);
    this.metrics.recordAttempt(a, this.loop.snapshot());
    // A reconcile cut short by this daemon's stop (SIGTERM: its waits abandoned, the state saved) failed nothing: the
    // next start carries on. Told as a failure, every rollout or node drain during an apply paged the receivers.
    if (!(this.shuttingDown && onlyCancelled(a))) this.opts.notifier?.notify(a);
    // The revision's files could not be read: have the source look again now (it restores the folder).
    if (a.failure?.code === ErrorCode.sourceIo && !this.shuttingDown) void this.opts.source.refresh();
    await this.opts.source.retain(this.loop.inUse());
    // What the reconcile allocated is garbage now: give it back before idling (src/daemon/memory.ts).
    this.collectGarbage();
  }
}

function summarize(a: Attempt): ReconcileSummary {
  return {
    revision: a.revision,
    reason: a.reason,
    apply: a.apply,
    result: a.verdict,
    ...(a.failure ? { code: a.failure.code, failureClass: a.failure.failureClass } : {}),
    startedAt: a.startedAt,
    finishedAt: a.finishedAt,
    durationSec: Math.round(a.durationSec * 1000) / 1000,
    stage: a.result?.stage,
    summary: a.result?.plan?.summary,
    // Changes held back for a person (a manual step, a refused replace or delete): which ones.
    ...(blockedOf(a).length ? { blocked: blockedOf(a) } : {}),
  };
}

function blockedOf(a: Attempt): BlockedResource[] {
  return (a.result?.outcomes ?? [])
    .filter((o) => o.result !== 'ok' && heldBack(o))
    .map((o) => ({ kind: o.resourceKind, name: o.name, action: o.action, ...(o.code ? { code: o.code } : {}) }));
}

function errorOf(a: Attempt): LastError {
  const diagnostics = (a.result?.diagnostics ?? [])
    .filter((d) => d.severity === 'error')
    .map((d) => ({ file: d.file, line: d.line, column: d.column, kind: d.kind, name: d.name, message: d.message, at: `${d.file}:${d.line}:${d.column}` }));
  const failures = (a.result?.outcomes ?? [])
    .filter((o) => o.result === 'failed')
    .map((o) => ({ kind: o.resourceKind, name: o.name, action: o.action, error: o.error, code: o.code }));
  return {
    revision: a.revision,
    result: a.verdict,
    code: a.failure?.code,
    retry: a.retry,
    at: a.finishedAt,
    message: a.error ?? (diagnostics[0] ? `${diagnostics[0].at}: ${diagnostics[0].message}` : undefined),
    diagnostics,
    planErrors: a.result?.plan?.errors ?? [],
    failures,
  };
}

/** Convenience: construct and start. */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const d = new Daemon(opts);
  await d.start();
  return d;
}

/** The rejected attempt, when /status shows it: only while its revision is the latest one. */
function rejectedShown(s: { rejected?: Attempt }, latest: { id: string } | undefined): Attempt | undefined {
  return s.rejected && latest && s.rejected.revision === latest.id ? s.rejected : undefined;
}
