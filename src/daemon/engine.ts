/** Wire the reconcile engine (src/reconcile/engine.ts) into the loop, reporting files as the user knows them. */
import type { ServiceApi } from '../api/client-types.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import type { ApplyTuning } from '../reconcile/types.js';
import { LoadCache, reconcile } from '../reconcile/engine.js';
import type { ManualStepsMode } from '../plan/types.js';
import type { ReconcileFn } from './loop.js';
import { rewriteResultPaths } from './paths.js';

export interface EngineSettings {
  statePath: string;
  prune: boolean;
  allowReplace: boolean;
  maxDeletes?: number;
  manualSteps?: ManualStepsMode;
  allowEmpty?: boolean;
  concurrency?: number;
  timeoutMs?: number;
  /** Status polling and webhook batches. */
  tuning?: ApplyTuning;
  env?: NodeJS.ProcessEnv;
  /** Which secrets manifests may reference (--secrets-dir, --secret-env-prefix). */
  secretScope?: SecretScope;
}

export function engineReconcileFn(api: ServiceApi, settings: EngineSettings): ReconcileFn {
  // A resync of an unchanged revision reuses its loaded manifests.
  const loadCache = new LoadCache();
  return async (req) => {
    const result = await reconcile(api, {
      loadCache,
      ...settings.tuning,
      root: req.revision.root,
      paths: req.revision.paths,
      // Nothing leaves the revision's folder (the repository); secrets default to it (or to the watched folder).
      sourceRoot: req.revision.root,
      ...(req.revision.origin !== undefined ? { secretsOrigin: req.revision.origin } : {}),
      ...(settings.secretScope ? { secretScope: settings.secretScope } : {}),
      revision: req.revision.id,
      apply: req.apply,
      prune: settings.prune,
      allowReplace: settings.allowReplace,
      maxDeletes: settings.maxDeletes,
      manualSteps: settings.manualSteps ?? 'require',
      allowEmpty: settings.allowEmpty,
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
      signal: req.signal,
      forceSignal: req.forceSignal,
      logger: req.logger,
      statePath: settings.statePath,
      env: settings.env ?? process.env,
    });
    return rewriteResultPaths(result, req.revision.root, req.revision.display);
  };
}
