/** Assemble a daemon from settings (shared by `govops run` and `npm start`). */
import { join, relative, resolve } from 'node:path';
import type { Logger } from 'pino';
import { CancelledError, UserError } from '../errors.js';
import type { ServiceApi } from '../api/client-types.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import type { ApplyTuning } from '../reconcile/types.js';
import type { RequestEvent } from '../api/client.js';
import { DirSource } from '../sources/dir.js';
import { GitSource } from '../sources/git.js';
import { claimWorkdir } from './workdir-claim.js';
import type { PlanOptions } from '../plan/types.js';
import type { Source } from '../sources/types.js';
import { Daemon } from './daemon.js';
import { engineReconcileFn, engineRecheckFn, engineProbeFn } from './engine.js';
import type { RenderCommand } from '../sources/render.js';
import type { ReconcileFn } from './loop.js';
import { DaemonMetrics } from './metrics.js';
import { Notifier, notifyUrlLabel, type NotifyTarget } from './notify.js';
import { redactUrl } from '../sources/redact.js';
import type { AutoRetryPolicy } from '../deliveries/auto-retry.js';
import { WebhookHealth, managedWebhooksFromState } from './webhook-health.js';
import { describeStateLocation, isPgLocation } from '../state/location.js';
import { assertStateLockHeld } from '../state/lock.js';
import { LeaderElector, defaultIdentity, type LeaseSettings } from './leader.js';
import { leaderReconcileFn } from './standby.js';

export interface RunSettings {
  repo?: string;
  branch: string;
  path: string;
  dir?: string;
  intervalMs: number;
  /** Each git command of the Git source is killed after this long (`--git-timeout`; default 120s). */
  gitTimeoutMs?: number;
  resyncMs: number;
  selfHeal: boolean;
  /** The planner's options (--prune, --allow-replace, --max-deletes, --allow-empty, --no-adopt, --manual-steps), passed down whole. */
  plan: PlanOptions;
  /** How plans are carried out (--concurrency, --timeout, --poll-*, --webhook-batch-*), passed down whole. */
  tuning?: ApplyTuning;
  /** `loopbackOnly`: answer only loopback Host names (DNS-rebinding protection; `npm start`). */
  listen: { host: string; port: number; anyHost?: true; loopbackOnly?: boolean };
  statePath: string;
  hookSecret?: string;
  /** Bearer token GET /status requires (`--status-token-file`, GOVOPS_STATUS_TOKEN); unset: /status is open. */
  statusToken?: string;
  workdir: string;
  /** Directory source debounce (default 300ms). */
  debounceMs?: number;
  /**
   * `--grace`: how long a stop asked for during start-up waits for the first lease request still under way (default
   * 30s; a stop after start-up gives `shutdown` its grace).
   */
  graceMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Which secrets manifests may reference (--secrets-dir, --secret-env-prefix). */
  secretScope?: SecretScope;
  /** `--render`: each revision's manifests are this command's output (src/sources/render.ts). */
  render?: RenderCommand;
  /** Delivery-health polling of the webhook history (off when unset). */
  webhookHealth?: WebhookHealthSettings;
  /** --observe: plan only, never write. */
  observe?: boolean;
  /** --notify-url targets (none: no notifications). */
  notify?: NotifyTarget[];
  /** Notification retries: first backoff in ms (default 1s; tests shorten it). */
  notifyBackoffMs?: number;
  /** With a PostgreSQL state: this replica's name in the lease and the User-Agent (default host name + random suffix). */
  identity?: string;
  /** With a PostgreSQL state: the leader lease (default 15s / 10s / 2s). */
  lease?: LeaseSettings;
}

/** What the daemon gives the service client it asks for. */
export interface ApiExtras {
  /** This replica's identity (for the User-Agent and the notifications' `govopsidentity`). */
  identity?: string;
  /** Asked before every write (refuses unless this replica leads). */
  writeGate?: (method: string, path: string) => void;
}

export interface WebhookHealthSettings {
  intervalMs: number;
  overlapMs?: number;
  /** Retry failed deliveries of managed webhooks automatically. */
  autoRetry?: AutoRetryPolicy;
}

export interface RunningDaemon {
  daemon: Daemon;
  api: ServiceApi;
  /** Present with a PostgreSQL state (not with --observe). */
  elector?: LeaderElector;
  /** Present when webhook delivery-health polling is on. */
  webhookHealth?: WebhookHealth;
  /** Stop the daemon within the grace period, then close the API client. True when nothing was cut short. */
  shutdown(graceMs: number): Promise<boolean>;
  /** During shutdown: abort the calls in flight now (a second signal), the state still saved. */
  forceShutdown(): void;
}

/** The folders of the work folder govops clears on start: the state file must not be in one. */
const CLEARED = ['repo.git', 'revs', 'snapshots'];

export function makeSource(s: RunSettings, logger: Logger, metrics: DaemonMetrics): Source {
  if (s.repo && s.dir) throw new Error('give either --repo or --dir, not both');
  const state = resolve(s.statePath);
  const cleared = CLEARED.map((c) => join(resolve(s.workdir), c)).find((c) => !relative(c, state).startsWith('..'));
  if (cleared) {
    throw new UserError(`the state file ${s.statePath} is inside ${cleared}, a folder govops clears and fills with its own copies`, 'put --state outside the --workdir folders (repo.git, revs, snapshots)');
  }
  if (s.repo) {
    return new GitSource({
      url: s.repo,
      branch: s.branch,
      path: s.path,
      workdir: s.workdir,
      intervalMs: s.intervalMs,
      ...(s.gitTimeoutMs !== undefined ? { commandTimeoutMs: s.gitTimeoutMs } : {}),
      logger: logger.child({ component: 'git' }),
      env: s.env,
      hooks: { onFetch: metrics.onGitFetch },
    });
  }
  if (s.dir) {
    return new DirSource({
      dir: s.dir,
      workdir: s.workdir,
      logger: logger.child({ component: 'dir' }),
      intervalMs: s.intervalMs,
      debounceMs: s.debounceMs,
      statePath: s.statePath,
      allFiles: s.render !== undefined,
    });
  }
  throw new Error('give a source: --repo URL or --dir PATH');
}

/** With a PostgreSQL state several replicas may run; one leads (src/daemon/leader.ts). Observers never write. */
function makeElector(s: RunSettings, identity: string, logger: Logger, metrics: DaemonMetrics, source: Source, loop: () => Daemon['loop'] | undefined): LeaderElector | undefined {
  if (!isPgLocation(s.statePath) || s.observe) return undefined;
  return new LeaderElector({
    statePath: s.statePath,
    identity,
    lease: s.lease,
    logger,
    registry: metrics.registry,
    onElected: () => {
      const l = loop();
      const last = l?.snapshot().lastGood;
      if (l && last) l.submitAgain(last);
    },
    onHook: () => void source.refresh(),
  });
}

function makeHealth(s: RunSettings, api: ServiceApi, logger: Logger, metrics: DaemonMetrics, elector?: LeaderElector): WebhookHealth | undefined {
  if (!s.webhookHealth) return undefined;
  return new WebhookHealth({
    ...(elector ? { mayWrite: () => elector.isLeading() } : {}),
    api,
    logger: logger.child({ component: 'webhook-health' }),
    registry: metrics.registry,
    intervalMs: s.webhookHealth.intervalMs,
    overlapMs: s.webhookHealth.overlapMs,
    autoRetry: s.webhookHealth.autoRetry,
    managed: managedWebhooksFromState(s.statePath),
  });
}

function makeNotifier(s: RunSettings, identity: string, logger: Logger, metrics: DaemonMetrics, elector: LeaderElector | undefined): Notifier | undefined {
  if (!s.notify?.length) return undefined;
  return new Notifier({
    targets: s.notify,
    logger: logger.child({ component: 'notify' }),
    registry: metrics.registry,
    observe: s.observe === true,
    identity,
    origin: s.repo ? `${redactUrl(s.repo)}#${s.branch}:${s.path}` : s.dir,
    ...(s.notifyBackoffMs !== undefined ? { backoffMs: s.notifyBackoffMs } : {}),
    // a standby's plans are the leader's to tell
    ...(elector ? { active: () => elector.isLeading() } : {}),
  });
}

/** The daemon's options as /status shows them. */
function daemonInfo(s: RunSettings): Record<string, unknown> {
  const { plan } = s;
  return {
    selfHeal: s.selfHeal,
    observe: s.observe === true,
    notify: (s.notify ?? []).map((t) => notifyUrlLabel(t.url)),
    prune: plan.prune,
    allowReplace: plan.allowReplace,
    maxDeletes: plan.maxDeletes,
    manualSteps: plan.manualSteps ?? 'require',
    allowEmpty: plan.allowEmpty ?? false,
    noAdopt: plan.noAdopt ?? false,
    intervalMs: s.intervalMs,
    resyncMs: s.resyncMs,
    statePath: describeStateLocation(s.statePath),
    secretEnvPrefix: s.secretScope?.envPrefix ?? 'GOVOPS_SECRET_',
    ...(s.secretScope?.dir ? { secretsDir: s.secretScope.dir } : {}),
    ...(s.webhookHealth ? { webhookHealthIntervalMs: s.webhookHealth.intervalMs, autoRetryFailed: s.webhookHealth.autoRetry ?? false } : {}),
  };
}


/**
 * A write leaves only while this replica leads (the lease) and, during a reconcile, holds the state's lock: a PostgreSQL
 * lock whose session ended (pg_terminate_backend, a failover) may be another writer's by now (a CI apply).
 */
function writeGateOf(statePath: string, elector: LeaderElector | undefined): (method: string, path: string) => void {
  return (m, p) => {
    elector?.gate(m, p);
    assertStateLockHeld(statePath, `${m} ${p}`);
  };
}
/**
 * Starts the daemon's HTTP server, then the elector (its first lease request), then the source's first fetch; on failure
 * everything started is stopped again. The HTTP server comes first: the first lease request can wait up to the driver's
 * query timeout (a database that accepts the session and answers nothing), longer than a startup probe allows for
 * /healthz. A stop asked for meanwhile (SIGTERM while the first clone runs) kills the running git command, undoes what was started and rejects with a
 * CancelledError: the caller exits as after any stop, not by the signal.
 */
async function startAll(daemon: Daemon, elector: LeaderElector | undefined, api: ServiceApi, source: Source, stop: AbortSignal | undefined, graceMs: number): Promise<void> {
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (onAbort = resolve));
  const onStop = (): void => {
    onAbort?.();
    void source.stop();
  };
  stop?.addEventListener('abort', onStop, { once: true });
  try {
    if (stop?.aborted) throw new CancelledError('stopped during start-up');
    await daemon.listen();
    if (stop?.aborted) throw new CancelledError('stopped during start-up');
    if (elector) {
      // The first lease request is not waited for past a stop: a database that answers nothing holds it up to the
      // driver's query timeout (60 s), past --grace and the pod's termination grace period. Should it take the lease
      // later, the elector, stopped, gives it back (or the lease expires).
      const electing = elector.start();
      electing.catch(() => undefined);
      await Promise.race([electing, stopped]);
    }
    if (stop?.aborted) throw new CancelledError('stopped during start-up');
    await daemon.start();
    if (stop?.aborted) throw new CancelledError('stopped during start-up');
  } catch (err) {
    await elector?.stop(stop?.aborted ? { withinMs: graceMs } : {}).catch(() => undefined);
    await daemon.stop(0).catch(() => undefined);
    await api.close().catch(() => undefined);
    throw stop?.aborted ? new CancelledError('stopped during start-up') : err;
  } finally {
    stop?.removeEventListener('abort', onStop);
  }
}

export async function startRunning(
  s: RunSettings,
  logger: Logger,
  makeApi: (onRequest: (e: RequestEvent) => void, extras: ApiExtras) => ServiceApi,
  reconcileOverride?: ReconcileFn,
  /** Aborted by a stop asked for before start-up finished: startRunning then rejects with a CancelledError. */
  stop?: AbortSignal,
): Promise<RunningDaemon> {
  const metrics = new DaemonMetrics();
  const source = makeSource(s, logger, metrics);
  // refused before anything is bound or claimed (the old code logged "govops daemon listening", then refused)
  await source.preflight?.();
  const releaseWorkdir = await claimWorkdir(s.workdir, s.statePath);
  const identity = s.identity ?? defaultIdentity();
  let daemonRef: Daemon | undefined;
  const elector = makeElector(s, identity, logger, metrics, source, () => daemonRef?.loop);
  const api = makeApi(metrics.onRequest, { identity, writeGate: writeGateOf(s.statePath, elector) });
  const engineSettings = { statePath: s.statePath, plan: s.plan, tuning: s.tuning, env: s.env, secretScope: s.secretScope, render: s.render };
  const engine = reconcileOverride ?? engineReconcileFn(api, engineSettings);
  const reconcile = elector ? leaderReconcileFn(engine, elector, (r) => daemonRef?.loop.submitAgain(r)) : engine;
  const health = makeHealth(s, api, logger, metrics, elector);
  metrics.observe.set(s.observe ? 1 : 0);
  const notifier = makeNotifier(s, identity, logger, metrics, elector);
  const daemon = new Daemon({
    source,
    reconcile,
    ...(reconcileOverride ? {} : { recheck: engineRecheckFn(engineSettings, logger), probe: engineProbeFn(api, engineSettings) }),
    logger,
    listen: s.listen,
    resyncMs: s.resyncMs,
    selfHeal: s.selfHeal,
    ...(s.observe ? { observe: true } : {}),
    ...(notifier ? { notifier } : {}),
    hookSecret: s.hookSecret,
    ...(s.statusToken !== undefined ? { statusToken: s.statusToken } : {}),
    branch: s.repo ? s.branch : undefined,
    metrics,
    retryBaseMs: s.retryBaseMs,
    retryMaxMs: s.retryMaxMs,
    info: daemonInfo(s),
    statusSections: {
      ...(health ? { webhookHealth: () => health.status() } : {}),
      ...(elector ? { leader: () => elector.status() } : {}),
    },
    ...(elector ? { onPush: () => elector.announcePush(), notReady: () => elector.readinessProblem() } : {}),
  });
  daemonRef = daemon;
  try {
    await startAll(daemon, elector, api, source, stop, s.graceMs ?? 30_000);
  } catch (err) {
    await releaseWorkdir().catch(() => undefined);
    throw err;
  }
  health?.start();
  return {
    daemon,
    api,
    ...(elector ? { elector } : {}),
    ...(health ? { webhookHealth: health } : {}),
    forceShutdown() {
      daemon.loop.forceStop();
    },
    async shutdown(graceMs) {
      const deadline = performance.now() + graceMs; // monotonic: the time of day may be set meanwhile
      const stopping = health?.stop(Math.min(graceMs, 5000));
      const finished = await daemon.stop(graceMs);
      // calls cut short by the grace may still land: the lease is then left to expire, not handed over at once;
      // and a database that answers nothing is not waited for past the grace
      await elector?.stop({ release: finished, withinMs: Math.max(0, deadline - performance.now()) });
      await stopping;
      // A request still in flight (one the reconcile cut short by the grace was waiting for, until its own timeout)
      // is aborted when the grace is over: the process exits within it, not after the orchestrator's SIGKILL.
      await api.close(Math.max(0, deadline - performance.now())).catch(() => undefined);
      await releaseWorkdir().catch(() => undefined);
      return finished;
    },
  };
}
