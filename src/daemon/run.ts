/** Assemble a daemon from settings (shared by `govops run` and `npm start`). */
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { RequestEvent } from '../api/client.js';
import { DirSource } from '../sources/dir.js';
import { GitSource } from '../sources/git.js';
import type { Source } from '../sources/types.js';
import { Daemon } from './daemon.js';
import { engineReconcileFn } from './engine.js';
import type { ReconcileFn } from './loop.js';
import { DaemonMetrics } from './metrics.js';

export interface RunSettings {
  repo?: string;
  branch: string;
  path: string;
  dir?: string;
  intervalMs: number;
  resyncMs: number;
  selfHeal: boolean;
  prune: boolean;
  allowReplace: boolean;
  maxDeletes?: number;
  allowEmpty?: boolean;
  concurrency?: number;
  timeoutMs?: number;
  listen: { host: string; port: number };
  statePath: string;
  hookSecret?: string;
  workdir: string;
  /** Directory source debounce (default 300ms). */
  debounceMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface RunningDaemon {
  daemon: Daemon;
  api: ServiceApi;
  /** Stop the daemon within the grace period, then close the API client. True when nothing was cut short. */
  shutdown(graceMs: number): Promise<boolean>;
}

export function makeSource(s: RunSettings, logger: Logger, metrics: DaemonMetrics): Source {
  if (s.repo && s.dir) throw new Error('give either --repo or --dir, not both');
  if (s.repo) {
    return new GitSource({
      url: s.repo,
      branch: s.branch,
      path: s.path,
      workdir: s.workdir,
      intervalMs: s.intervalMs,
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
    });
  }
  throw new Error('give a source: --repo URL or --dir PATH');
}

export async function startRunning(
  s: RunSettings,
  logger: Logger,
  makeApi: (onRequest: (e: RequestEvent) => void) => ServiceApi,
  reconcileOverride?: ReconcileFn,
): Promise<RunningDaemon> {
  const metrics = new DaemonMetrics();
  const source = makeSource(s, logger, metrics);
  const api = makeApi(metrics.onRequest);
  const reconcile =
    reconcileOverride ??
    engineReconcileFn(api, {
      statePath: s.statePath,
      prune: s.prune,
      allowReplace: s.allowReplace,
      maxDeletes: s.maxDeletes,
      allowEmpty: s.allowEmpty,
      concurrency: s.concurrency,
      timeoutMs: s.timeoutMs,
      env: s.env,
    });
  const daemon = new Daemon({
    source,
    reconcile,
    logger,
    listen: s.listen,
    resyncMs: s.resyncMs,
    selfHeal: s.selfHeal,
    hookSecret: s.hookSecret,
    branch: s.repo ? s.branch : undefined,
    metrics,
    retryBaseMs: s.retryBaseMs,
    retryMaxMs: s.retryMaxMs,
    info: {
      selfHeal: s.selfHeal,
      prune: s.prune,
      allowReplace: s.allowReplace,
      maxDeletes: s.maxDeletes,
      allowEmpty: s.allowEmpty,
      intervalMs: s.intervalMs,
      resyncMs: s.resyncMs,
      statePath: s.statePath,
    },
  });
  try {
    await daemon.start();
  } catch (err) {
    await daemon.stop(0).catch(() => undefined);
    await api.close().catch(() => undefined);
    throw err;
  }
  return {
    daemon,
    api,
    async shutdown(graceMs) {
      const finished = await daemon.stop(graceMs);
      await api.close().catch(() => undefined);
      return finished;
    },
  };
}
