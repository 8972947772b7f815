/** Wire the reconcile engine (src/reconcile/engine.ts) into the loop, reporting files as the user knows them. */
import type { ServiceApi } from '../api/client-types.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import type { ApplyTuning } from '../reconcile/types.js';
import { systemClock, type Clock } from '../util/clock.js';
import { LoadCache, reconcile } from '../reconcile/engine.js';
import type { PlanOptions } from '../plan/types.js';
import type { ReconcileFn } from './loop.js';
import { rewriteResultPaths } from './paths.js';
import path from 'node:path';
import { CancelledError, ErrorCode } from '../errors.js';
import type { ManifestStream } from '../manifests/loader.js';
import { STDIN_PATH } from '../manifests/stream.js';
import { RenderError, runRender, type RenderCommand } from '../sources/render.js';
import { linksLeaving } from '../sources/links-out.js';
import type { ReconcileResult } from '../reconcile/types.js';

/** What every reconcile of the daemon shares: built once from the flags (src/cli/commands/run-action.ts), passed down whole. */
export interface EngineSettings {
  statePath: string;
  /** The planner's options (src/cli/settings.ts). */
  plan: PlanOptions;
  /** How plans are carried out: slots, timeout, status polling and webhook batches. */
  tuning?: ApplyTuning;
  env?: NodeJS.ProcessEnv;
  /** Which secrets manifests may reference (--secrets-dir, --secret-env-prefix). */
  secretScope?: SecretScope;
  /** `--render`: the command whose output is each revision's manifests (src/sources/render.ts). */
  render?: RenderCommand;
  /** The applies' clock (default the system's): tests share one with the sandbox. */
  clock?: Clock;
}

/** Where the render command runs: the revision's manifest folder (`--path` of a Git source), else its root. */
function renderFolder(revision: { root: string; paths: string[] }): string {
  return path.resolve(revision.root, revision.paths.length === 1 ? revision.paths[0]! : '.');
}

/** The label of the rendered stream in diagnostics: `render:doc 3:12:5`. */
export const RENDER_LABEL = 'render';

/** A revision whose render failed: rejected as an invalid manifest set is (terminal until a new revision). */
function renderRejected(revision: string, err: RenderError, startedAt: string, finishedAt: string): ReconcileResult {
  const diagnostic = { file: RENDER_LABEL, line: 1, column: 1, severity: 'error' as const, message: err.message };
  return {
    revision,
    stage: 'load',
    ok: false,
    diagnostics: [diagnostic],
    outcomes: [],
    changed: false,
    error: `${RENDER_LABEL}: ${err.message}`,
    failure: { code: ErrorCode.invalidRevision, failureClass: 'terminal' },
    startedAt,
    finishedAt,
  };
}

export function engineReconcileFn(api: ServiceApi, settings: EngineSettings): ReconcileFn {
  // A resync of an unchanged revision reuses its loaded manifests.
  const loadCache = new LoadCache();
  const clock = settings.clock ?? systemClock;
  // The last rendered revision's output: a resync of it renders nothing again (its folder never changes).
  let rendered: { key: string; text: string } | undefined;
  return async (req) => {
    let stream: { paths: string[]; stream: ManifestStream } | undefined;
    if (settings.render) {
      const key = `${req.revision.id}\u0000${req.revision.root}`;
      if (rendered?.key !== key) {
        const startedAt = new Date(clock.now()).toISOString();
        try {
          const links = await linksLeaving(req.revision.root);
          if (links.length > 0) {
            throw new RenderError(
              `symbolic link(s) leading outside the revision, refused before rendering (the render command could read what they point to): ${links.join(', ')}; commit the files themselves instead`,
              'links',
            );
          }
          rendered = { key, text: await runRender(settings.render, renderFolder(req.revision), { env: settings.env ?? process.env, signal: req.signal }) };
        } catch (err) {
          if (err instanceof RenderError && err.reason !== 'aborted') {
            req.logger.warn({ err: { message: err.message, reason: err.reason } }, 'render command failed: revision rejected');
            return renderRejected(req.revision.id, err, startedAt, new Date(clock.now()).toISOString());
          }
          // Stopped (shutting down, leadership lost): a cancellation, as an apply's is (it was GOVOPS_INTERNAL, "a bug").
          if (err instanceof RenderError) throw new CancelledError(err.message);
          throw err;
        }
      }
      const text = rendered.text;
      stream = { paths: [STDIN_PATH], stream: { read: () => Promise.resolve(text), label: RENDER_LABEL } };
    }
    const result = await reconcile(api, {
      loadCache,
      source: {
        root: req.revision.root,
        paths: stream?.paths ?? req.revision.paths,
        stream: stream?.stream,
        // Nothing leaves the revision's folder (the repository); secrets default to it (or to the watched folder).
        sourceRoot: req.revision.root,
        secretsOrigin: req.revision.origin,
        secretScope: settings.secretScope,
      },
      plan: settings.plan,
      tuning: settings.tuning,
      revision: req.revision.id,
      apply: req.apply,
      signal: req.signal,
      forceSignal: req.forceSignal,
      ...(settings.clock ? { clock: settings.clock } : {}),
      logger: req.logger,
      statePath: settings.statePath,
      env: settings.env ?? process.env,
    });
    return rewriteResultPaths(result, req.revision.root, req.revision.display);
  };
}
