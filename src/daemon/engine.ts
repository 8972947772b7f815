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
import { STDIN_PATH } from '../manifests/stream.js';
import { RenderError, runRender, type RenderCommand } from '../sources/render.js';
import { linksLeaving } from '../sources/links-out.js';
import { isInside } from '../util/inside.js';
import type { ReconcileResult } from '../reconcile/types.js';
import type { Revision } from '../sources/types.js';
import type { Logger } from 'pino';
import { loadStage } from '../reconcile/load.js';
import { stopped, type EngineOptions } from '../reconcile/stages.js';
import { loadState } from '../state/store.js';
import { agree } from '../util/plural.js';

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

/** The revision's rendered manifests as a stream (`--render`), rendering again only when the revision changed. */
class RenderedRevision {
  private rendered?: { key: string; text: string };

  constructor(private readonly settings: EngineSettings & { render: RenderCommand }) {}

  /** The output of the render command for `revision`; throws RenderError when it fails or links lead out. */
  async text(revision: Revision, signal: AbortSignal): Promise<string> {
    const key = `${revision.id}\u0000${revision.root}`;
    if (this.rendered?.key !== key) {
      const folder = renderFolder(revision);
      // An --path that leads out of the checkout (absolute, or with ..) would run the command in a folder of the host
      // and apply what it printed; without --render the loader refuses it the same way.
      if (!isInside(path.resolve(revision.root), folder)) {
        throw new RenderError(`--path ${revision.paths[0] ?? '.'} is outside the revision: the render command runs in a folder of the repository (a relative path, without ..)`, 'folder');
      }
      const links = await linksLeaving(revision.root);
      if (links.length > 0) {
        throw new RenderError(
          `${agree(links.length, 'a symbolic link', 'symbolic links')} leading outside the revision, refused before rendering (the render command could read what they point to): ${links.join(', ')}; commit the files themselves instead`,
          'links',
        );
      }
      this.rendered = { key, text: await runRender(this.settings.render, folder, { env: this.settings.env ?? process.env, signal }) };
    }
    return this.rendered.text;
  }
}

/** Where the engine reads one revision's manifests: its folder, or the render command's output. */
function sourceOf(revision: Revision, settings: EngineSettings, text: string | undefined): EngineOptions['source'] {
  return {
    root: revision.root,
    paths: text !== undefined ? [STDIN_PATH] : revision.paths,
    stream: text !== undefined ? { read: () => Promise.resolve(text), label: RENDER_LABEL } : undefined,
    // Nothing leaves the revision's folder (the repository); secrets default to it (or to the watched folder).
    sourceRoot: revision.root,
    secretsOrigin: revision.origin,
    secretScope: settings.secretScope,
  };
}

export function engineReconcileFn(api: ServiceApi, settings: EngineSettings): ReconcileFn {
  // A resync of an unchanged revision reuses its loaded manifests.
  const loadCache = new LoadCache();
  const clock = settings.clock ?? systemClock;
  // The last rendered revision's output: a resync of it renders nothing again (its folder never changes).
  const rendered = settings.render ? new RenderedRevision({ ...settings, render: settings.render }) : undefined;
  return async (req) => {
    let text: string | undefined;
    if (rendered) {
      const startedAt = new Date(clock.now()).toISOString();
      try {
        text = await rendered.text(req.revision, req.signal);
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
    const result = await reconcile(api, {
      loadCache,
      source: sourceOf(req.revision, settings, text),
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

/**
 * The loop's `recheck`: whether a revision rejected for secret files it could not read loads now (its manifests
 * read, checked, every secret resolved). Nothing is sent, no state read or lock taken; its own cache, so the
 * reconciles' cache keeps the revision in force.
 */
export function engineRecheckFn(settings: EngineSettings, logger: Logger): (revision: Revision, signal: AbortSignal) => Promise<boolean> {
  const loadCache = new LoadCache();
  const rendered = settings.render ? new RenderedRevision({ ...settings, render: settings.render }) : undefined;
  return async (revision, signal) => {
    const text = rendered ? await rendered.text(revision, signal) : undefined;
    const loaded = await loadStage(
      { loadCache, source: sourceOf(revision, settings, text), plan: settings.plan, revision: revision.id, apply: false, logger, statePath: settings.statePath, env: settings.env ?? process.env },
      logger,
    );
    return !stopped(loaded);
  };
}

/**
 * The loop's `probe`: whether govops could work while no revision is in force (every revision since the start
 * rejected): the state read (a corrupt one stops all work) and the service's integrations listed, as a plan's first
 * reads. Nothing written, no lock taken.
 */
export function engineProbeFn(api: ServiceApi, settings: Pick<EngineSettings, 'statePath'>): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    await loadState(settings.statePath);
    await api.withSignal(signal).listIntegrations();
  };
}
