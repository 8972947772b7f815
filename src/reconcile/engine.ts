/**
 * One reconcile of one revision: load + validate manifests, resolve secrets, fetch live state
 * (the two list calls; a recorded id they leave out is asked for by id), plan, and apply when asked (under the
 * state lock).
 * Shared by `govops plan`, `govops apply` and the daemon. Expected failures come back as a result
 * (stage + error), never as a throw.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveDataSource } from '../api/types.js';
import { applyPlan, awaitingOutcome } from '../apply/applier.js';
import {
  ApiError,
  DataSourcesUnsupportedError,
  ErrorCode,
  TransportError,
  UserError,
  classify,
  describeApiError,
  failure as failureOf,
  failureKind,
  type FailureInfo,
} from '../errors.js';
import { loadManifests, type LoadResult } from '../manifests/loader.js';
import { STDIN_PATH } from '../manifests/stream.js';
import { withManualStep } from './manual-step-token.js';
import { resolveAllSecrets } from '../manifests/secrets.js';
import { configShapes } from '../manifests/shapes.js';
import type { Diagnostic } from '../manifests/types.js';
import { toDesired } from '../plan/desired.js';
import { isAwaitingManualStep, withoutAwaiting } from '../plan/manual-steps.js';
import { resolvePending } from '../plan/pending.js';
import { forgetStale } from '../plan/stale.js';
import { confirmRecorded } from './confirm.js';
import { actionable, planChanges } from '../plan/planner.js';
import type { LiveIntegration, LiveWebhook } from '../api/types.js';
import type { Manifest } from '../manifests/types.js';
import { changeKey, compareFacts, comparePlans, planFacts, type PlanFacts } from '../plan/facts.js';
import { preserveIgnoredFields } from '../plan/ignore.js';
import { recordSuspension } from '../plan/suspend.js';
import type { DesiredResource, Plan, PlanChange } from '../plan/types.js';
import { withStateLock } from '../state/lock.js';
import { StateWriter } from '../state/journal.js';
import { hashingFor, loadState, saveState } from '../state/store.js';
import type { GovopsState } from '../state/types.js';
import type { ReconcileOptions, ReconcileResult, ResourceOutcome } from './types.js';
import { isPgLocation } from '../state/location.js';

export type EngineOptions = ReconcileOptions & {
  statePath: string;
  env?: NodeJS.ProcessEnv;
  /** Keeps the last revision's loaded manifests, so a resync of an unchanged revision does not read them again (the daemon). */
  loadCache?: LoadCache;
};

/**
 * The manifests of one revision, loaded and validated, kept for the next reconcile of the same revision
 * (a revision's folder never changes: a Git checkout or a directory snapshot, named by its content).
 * Only the latest is kept. Secrets are not part of it: they are resolved again on every reconcile.
 */
export class LoadCache {
  private entry?: { key: string; set: LoadResult };

  get(key: string): LoadResult | undefined {
    return this.entry?.key === key ? this.entry.set : undefined;
  }

  set(key: string, set: LoadResult): void {
    this.entry = { key, set };
  }

  clear(): void {
    this.entry = undefined;
  }
}

export function formatDiagnostic(d: Diagnostic): string {
  const who = d.kind && d.name ? `${d.kind}/${d.name}: ` : '';
  return `${d.file}:${d.line}:${d.column}: ${who}${d.message}`;
}

function describeFailure(err: unknown): string {
  if (err instanceof TransportError) return `cannot reach the service: ${err.method} ${err.path}: ${err.message}`;
  if (err instanceof ApiError) return describeApiError(err);
  if (err instanceof UserError) return err.hint ? `${err.message} (${err.hint})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

const needsApply = (plan: Plan): boolean => actionable(plan).length > 0;

/**
 * The failure that decides what an apply's failed outcomes mean (the catalogue decides the order): a failure that
 * stops all work first (the state could not be written, the service is down), then transient ones.
 */
export function applyFailure(outcomes: readonly ResourceOutcome[]): FailureInfo | undefined {
  const failed = outcomes.filter((o) => o.result !== 'ok' && o.result !== 'blocked' && o.code !== undefined);
  const pick =
    failed.find((o) => failureKind(o.code!).blocksReadiness && !failureKind(o.code!).unreachable) ??
    failed.find((o) => failureKind(o.code!).unreachable) ??
    failed.find((o) => failureKind(o.code!).failureClass === 'transient') ??
    failed[0];
  return pick ? failureOf(pick.code!) : undefined;
}

/** The revision folder must exist: a missing one is an I/O failure of the source (retried), not an invalid revision. */
async function checkRoot(root: string): Promise<void> {
  try {
    const st = await stat(root);
    if (!st.isDirectory()) throw new Error(`${root} is not a folder`);
  } catch (err) {
    throw new UserError(`cannot read the revision folder ${root}: ${(err as Error).message}`, 'retried on the next attempt', {
      code: ErrorCode.sourceIo,
    });
  }
}

interface Prepared {
  desired: (state: GovopsState) => DesiredResource[];
  /** The manifests include DataSources (their live list is needed). */
  dataSources: boolean;
  /** The manifests as written (secret references, not values): the facts of a saved plan. */
  manifests: Manifest[];
}

/** Load, validate and resolve secrets. Returns diagnostics (errors stop the reconcile). */
async function prepare(opts: EngineOptions): Promise<{ diagnostics: Diagnostic[]; prepared?: Prepared }> {
  const paths = (opts.paths.length ? opts.paths : ['.']).map((p) => (p === STDIN_PATH ? p : path.resolve(opts.root, p)));
  await checkRoot(opts.root);
  const key =
    opts.loadCache && opts.revision !== undefined
      ? JSON.stringify([opts.revision, opts.root, paths, opts.sourceRoot, opts.secretScope, opts.secretsOrigin])
      : undefined;
  let set = key !== undefined ? opts.loadCache!.get(key) : undefined;
  if (!set) {
    set = await loadManifests(paths, {
      cwd: opts.root,
      // the state file (and its journal, lock) is never a manifest, even inside the folder; a PostgreSQL state has none
      ...(isPgLocation(opts.statePath) ? {} : { stateFiles: [path.resolve(opts.statePath)] }),
      ...(opts.sourceRoot !== undefined ? { root: opts.sourceRoot } : {}),
      ...(opts.secretScope ? { secretScope: opts.secretScope } : {}),
      ...(opts.secretsOrigin !== undefined ? { secretsOrigin: opts.secretsOrigin } : {}),
      ...(opts.stream ? { stream: opts.stream } : {}),
    });
    // Unreadable files are the source's trouble (retried): only a revision that was read is kept.
    if (key !== undefined && !set.diagnostics.some((d) => d.code === ErrorCode.sourceIo)) opts.loadCache!.set(key, set);
  }
  const diagnostics = [...set.diagnostics];
  if (diagnostics.some((d) => d.severity === 'error')) return { diagnostics };
  const { resolved, diagnostics: secretDiags } = resolveAllSecrets(set.manifests, {
    env: opts.env ?? process.env,
    ...(opts.secretScope ? { scope: opts.secretScope } : {}),
    ...(opts.secretsOrigin !== undefined ? { secretsOrigin: opts.secretsOrigin } : {}),
  });
  diagnostics.push(...secretDiags);
  if (secretDiags.some((d) => d.severity === 'error')) return { diagnostics };
  // The resolved copies are needed only to make the desired resources: let go of them once made.
  let pending: typeof resolved | undefined = resolved;
  let made: { key: string; desired: DesiredResource[] } | undefined;
  const prepared: Prepared = {
    desired: (state) => {
      if (made?.key === state.fingerprintKey) return made.desired;
      if (!pending) throw new Error('desired resources already made under another fingerprint key');
      const hashing = hashingFor(state.fingerprintKey);
      const list = pending;
      // the resolved copies are ours and dropped below: their objects become the bodies (owned, not copied again)
      const desired = list.map((r, i) => withManualStep(toDesired(r.manifest, set.manifests[i]!.source, r.secretPaths, hashing, true), set.manifests[i]!.manifest));
      pending = undefined;
      made = { key: state.fingerprintKey, desired };
      return desired;
    },
    dataSources: set.manifests.some((m) => m.manifest.kind === 'DataSource'),
    manifests: set.manifests.map((m) => m.manifest),
  };
  return { diagnostics, prepared };
}

/**
 * The live data sources, listed only when data sources are in play (a DataSource manifest or state entry):
 * a service without them is not asked. A service answering the list with 404/405 has none: `unsupported`.
 */
export async function observeDataSources(api: ServiceApi, inPlay: boolean): Promise<{ list?: LiveDataSource[]; unsupported?: string }> {
  if (!inPlay) return {};
  try {
    return { list: await api.listDataSources() };
  } catch (err) {
    if (err instanceof DataSourcesUnsupportedError) return { unsupported: err.message };
    throw err;
  }
}

export async function reconcile(api: ServiceApi, opts: EngineOptions): Promise<ReconcileResult> {
  const startedAt = new Date().toISOString();
  const result = (r: Omit<ReconcileResult, 'startedAt' | 'finishedAt' | 'revision'>): ReconcileResult => {
    const out: ReconcileResult = { ...r, startedAt, finishedAt: new Date().toISOString() };
    if (opts.revision !== undefined) out.revision = opts.revision;
    return out;
  };
  const log = opts.logger.child({ revision: opts.revision });

  let diagnostics: Diagnostic[];
  let prepared: Prepared | undefined;
  try {
    ({ diagnostics, prepared } = await prepare(opts));
  } catch (err) {
    return result({ stage: 'load', ok: false, diagnostics: [], outcomes: [], changed: false, error: describeFailure(err), failure: classify(err) });
  }
  if (!prepared) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const first = errors[0]!;
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    // Files that could not be read are the source's failure (retried); anything else rejects the revision.
    const io = errors.every((d) => d.code === ErrorCode.sourceIo);
    const failure: FailureInfo = io
      ? failureOf(ErrorCode.sourceIo)
      : failureOf(ErrorCode.invalidRevision);
    // The result carries every diagnostic: the daemon logs them one per line, one-shot commands print them.
    log.debug({ errors: errors.length, code: failure.code }, io ? 'revision files could not be read; retrying' : 'revision rejected: invalid manifests or unresolvable secrets');
    return result({ stage: 'load', ok: false, diagnostics, outcomes: [], changed: false, error: `${formatDiagnostic(first)}${more}`, failure });
  }
  const ready = prepared;

  /**
   * Plan against a state; on failure to observe the service, a stage-'plan' result. Intents an
   * interrupted run left in the state are resolved against live state first (`resolved`).
   */
  type Live = { integrations: LiveIntegration[]; webhooks: LiveWebhook[]; dataSources?: LiveDataSource[] };
  type Planned = { plan: Plan; desired: DesiredResource[]; state: GovopsState; resolved: boolean; live: Live };
  const planWith = async (loaded: GovopsState): Promise<Planned | ReconcileResult> => {
    let integrations, webhooks, dataSources;
    try {
      [integrations, webhooks, dataSources] = await Promise.all([
        api.listIntegrations(),
        api.listWebhooks(),
        observeDataSources(api, ready.dataSources || loaded.resources.some((r) => r.kind === 'DataSource')),
      ]);
      // A recorded id the lists left out is asked for by id: a list may lag behind writes.
      ({ integrations, webhooks } = await confirmRecorded(api, loaded, { integrations, webhooks }, log));
    } catch (err) {
      return result({ stage: 'plan', ok: false, diagnostics, outcomes: [], changed: false, error: describeFailure(err), failure: classify(err) });
    }
    const pending = resolvePending(loaded, { integrations, webhooks, dataSources: dataSources.list });
    for (const note of pending.notes) log.info({ note }, 'resolved an intent left by an interrupted run');
    const desired = ready.desired(pending.state);
    // Records whose id now names another item are forgotten (saved before an apply); the planner does the same
    // and reports each in the plan's warnings.
    const stale = forgetStale(pending.state, { integrations, webhooks, ...(dataSources.list ? { dataSources: dataSources.list } : {}) }, desired);
    for (const note of stale.notes) log.warn({ note: note.message }, 'forgot a stale record: its id now names another item');
    const state = stale.state;
    const plan = planChanges({
      desired,
      live: {
        integrations,
        webhooks,
        ...(dataSources.list ? { dataSources: dataSources.list } : {}),
        ...(dataSources.unsupported ? { dataSourcesUnsupported: dataSources.unsupported } : {}),
      },
      state: pending.state,
      options: {
        prune: opts.prune,
        allowReplace: opts.allowReplace,
        ...(opts.maxDeletes !== undefined ? { maxDeletes: opts.maxDeletes } : {}),
        ...(opts.allowEmpty ? { allowEmpty: true } : {}),
        manualSteps: opts.manualSteps ?? 'require',
        ...(opts.resendSecrets ? { resendSecrets: true } : {}),
        ...(opts.only?.length ? { only: opts.only } : {}),
      },
      shapes: configShapes(),
      ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
    });
    if (!opts.saved) opts.onPlan?.(plan);
    return { plan, desired, state, resolved: pending.notes.length > 0 || stale.notes.length > 0, live: { integrations, webhooks, ...(dataSources.list ? { dataSources: dataSources.list } : {}) } };
  };
  const factsOf = (planned: Planned, plan: Plan, ids?: (c: PlanChange) => string | undefined): PlanFacts =>
    planFacts(
      plan,
      {
        manifests: ready.manifests,
        desired: planned.desired,
        state: planned.state,
        live: planned.live,
        shapes: configShapes(),
        hashing: hashingFor(planned.state.fingerprintKey),
      },
      ids,
    );
  const planFailed = (plan: Plan): ReconcileResult =>
    result({
      stage: 'plan',
      ok: false,
      diagnostics,
      plan,
      outcomes: [],
      changed: needsApply(withoutAwaiting(plan)),
      error: plan.errors.join('; '),
      failure: failureOf(ErrorCode.planError),
    });

  try {
    if (!opts.apply) {
      const planned = await planWith(await loadState(opts.statePath));
      if ('stage' in planned) return planned;
      if (planned.plan.errors.length) return planFailed(planned.plan);
      const facts = opts.recordFacts ? { facts: factsOf(planned, planned.plan) } : {};
      return result({ stage: 'done', ok: true, diagnostics, plan: planned.plan, outcomes: [], changed: needsApply(withoutAwaiting(planned.plan)), ...facts });
    }
    return await withStateLock(opts.statePath, async () => {
      const planned = await planWith(await loadState(opts.statePath));
      if ('stage' in planned) return planned;
      const { desired, live, plan } = planned;
      let { state } = planned;
      if (opts.saved) {
        // apply FILE: the same facts and the same plan as when it was saved, or nothing at all.
        const saved = opts.saved;
        const liveIdNow = new Map(plan.changes.map((c) => [changeKey(c), c.liveId]));
        const stale = compareFacts(saved.facts, factsOf(planned, saved.plan, (c) => c.liveId ?? liveIdNow.get(changeKey(c))));
        if (stale.length === 0) stale.push(...comparePlans(saved.plan, plan));
        if (stale.length) {
          // the caller (apply FILE) prints the refusal with each difference: logged for debugging only, not twice
          log.debug({ stale }, 'saved plan refused: it no longer matches');
          return result({
            stage: 'plan',
            ok: false,
            diagnostics,
            plan: saved.plan,
            outcomes: [],
            changed: false,
            stale,
            error: `the saved plan is stale, nothing was applied: ${stale.join('; ')}`,
            failure: failureOf(ErrorCode.stalePlan),
          });
        }
        opts.onPlan?.(plan);
      }
      if (planned.resolved) await saveState(opts.statePath, state);
      if (plan.errors.length) return planFailed(plan);
      // Suspension is recorded in state, so a suspended resource is not pruned once its manifest is gone.
      const marked = recordSuspension(state, plan.changes);
      if (marked !== state) {
        state = marked;
        await saveState(opts.statePath, state);
      }
      // Changes awaiting a manual step are not sent (the runner reports them `blocked`); with nothing else to
      // do no apply starts, so a resync finding only them is quiet (the daemon logs the wait once per revision).
      const changed = needsApply(withoutAwaiting(plan));
      if (!changed) {
        return result({ stage: 'done', ok: true, diagnostics, plan, outcomes: plan.changes.filter(isAwaitingManualStep).map(awaitingOutcome), changed });
      }
      log.info({ summary: plan.summary }, 'applying plan');
      const writer = new StateWriter(opts.statePath);
      const applied = await applyPlan({
        api,
        plan,
        // Ignored fields (govops/ignore-fields) keep their live values when a resource is changed in place.
        desired: preserveIgnoredFields(desired, plan, live, configShapes()),
        state,
        persist: (s) => writer.writeFull(s),
        journal: (entries) => writer.append(entries),
        liveIntegrations: planned.live.integrations.length,
        liveWebhookIds: new Set(planned.live.webhooks.map((w) => w.id)),
        logger: log,
        tuning: opts, // ReconcileOptions extends ApplyTuning (the apply reads its tuning fields only)
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.forceSignal ? { forceSignal: opts.forceSignal } : {}),
        ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
        ...(opts.onOutcome ? { onOutcome: opts.onOutcome } : {}),
      }).finally(() => writer.close());
      const failed = applied.outcomes.filter((o) => o.result !== 'ok' && o.result !== 'blocked');
      const error = failed.length
        ? `${failed.length} of ${applied.outcomes.length} resources not applied: ${failed
            .map((o) => `${o.resourceKind}/${o.name}: ${o.error ?? o.result}`)
            .join('; ')}`
        : undefined;
      const failure = applied.ok ? undefined : applyFailure(applied.outcomes);
      return result({
        stage: applied.ok ? 'done' : 'apply',
        ok: applied.ok,
        diagnostics,
        plan,
        outcomes: applied.outcomes,
        changed,
        polls: applied.polls,
        ...(error ? { error } : {}),
        ...(failure ? { failure } : {}),
      });
    });
  } catch (err) {
    return result({ stage: 'plan', ok: false, diagnostics, outcomes: [], changed: false, error: describeFailure(err), failure: classify(err) });
  }
}
