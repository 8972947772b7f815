/**
 * One reconcile of one revision: load + validate manifests, resolve secrets, fetch live state
 * (only the two list calls), plan, and apply when asked (under the state lock).
 * Shared by `govops plan`, `govops apply` and the daemon. Expected failures come back as a result
 * (stage + error), never as a throw.
 */
import path from 'node:path';
import type { ServiceApi } from '../api/client-types.js';
import { applyPlan } from '../apply/applier.js';
import { ApiError, TransportError, UserError } from '../errors.js';
import { loadManifests } from '../manifests/loader.js';
import { withManualStep } from './manual-step-token.js';
import { resolveAllSecrets } from '../manifests/secrets.js';
import { configShapes } from '../manifests/shapes.js';
import type { Diagnostic } from '../manifests/types.js';
import { toDesired } from '../plan/desired.js';
import { isAwaitingManualStep, withoutAwaiting } from '../plan/manual-steps.js';
import { needsApply, planChanges } from '../plan/planner.js';
import type { DesiredResource, Plan } from '../plan/types.js';
import { withStateLock } from '../state/lock.js';
import { hashingFor, loadState, saveState } from '../state/store.js';
import type { GovopsState } from '../state/types.js';
import type { ReconcileOptions, ReconcileResult, ResourceOutcome } from './types.js';

export type EngineOptions = ReconcileOptions & { statePath: string; env?: NodeJS.ProcessEnv };

export function formatDiagnostic(d: Diagnostic): string {
  const who = d.kind && d.name ? `${d.kind}/${d.name}: ` : '';
  return `${d.file}:${d.line}:${d.column}: ${who}${d.message}`;
}

function describeFailure(err: unknown): string {
  if (err instanceof TransportError) return `cannot reach the service: ${err.method} ${err.path}: ${err.message}`;
  if (err instanceof ApiError) return `service error: ${err.toString()}`;
  if (err instanceof UserError) return err.hint ? `${err.message} (${err.hint})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

interface Prepared {
  desired: (state: GovopsState) => DesiredResource[];
}

/** Load, validate and resolve secrets. Returns diagnostics (errors stop the reconcile). */
async function prepare(opts: EngineOptions): Promise<{ diagnostics: Diagnostic[]; prepared?: Prepared }> {
  const paths = (opts.paths.length ? opts.paths : ['.']).map((p) => path.resolve(opts.root, p));
  const set = await loadManifests(paths, {
    cwd: opts.root,
    ...(opts.sourceRoot !== undefined ? { root: opts.sourceRoot } : {}),
    ...(opts.secretScope ? { secretScope: opts.secretScope } : {}),
    ...(opts.secretsOrigin !== undefined ? { secretsOrigin: opts.secretsOrigin } : {}),
  });
  const diagnostics = [...set.diagnostics];
  if (diagnostics.some((d) => d.severity === 'error')) return { diagnostics };
  const { resolved, diagnostics: secretDiags } = resolveAllSecrets(set.manifests, {
    env: opts.env ?? process.env,
    ...(opts.secretScope ? { scope: opts.secretScope } : {}),
    ...(opts.secretsOrigin !== undefined ? { secretsOrigin: opts.secretsOrigin } : {}),
  });
  diagnostics.push(...secretDiags);
  if (secretDiags.some((d) => d.severity === 'error')) return { diagnostics };
  const prepared: Prepared = {
    desired: (state) => {
      const hashing = hashingFor(state.fingerprintKey);
      return resolved.map((r, i) => withManualStep(toDesired(r.manifest, set.manifests[i]!.source, r.secretPaths, hashing), set.manifests[i]!.manifest));
    },
  };
  return { diagnostics, prepared };
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
    return result({ stage: 'load', ok: false, diagnostics: [], outcomes: [], changed: false, error: describeFailure(err) });
  }
  if (!prepared) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const first = errors[0]!;
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    log.warn({ errors: errors.length }, 'revision rejected: invalid manifests or unresolvable secrets');
    return result({ stage: 'load', ok: false, diagnostics, outcomes: [], changed: false, error: `${formatDiagnostic(first)}${more}` });
  }
  const ready = prepared;

  /** Plan against a state; on failure to observe the service, a stage-'plan' result. */
  const planWith = async (state: GovopsState): Promise<{ plan: Plan; desired: DesiredResource[] } | ReconcileResult> => {
    let integrations, webhooks;
    try {
      [integrations, webhooks] = await Promise.all([api.listIntegrations(), api.listWebhooks()]);
    } catch (err) {
      return result({ stage: 'plan', ok: false, diagnostics, outcomes: [], changed: false, error: describeFailure(err) });
    }
    const desired = ready.desired(state);
    const plan = planChanges({
      desired,
      live: { integrations, webhooks },
      state,
      options: {
        prune: opts.prune,
        allowReplace: opts.allowReplace,
        maxDeletes: opts.maxDeletes,
        manualSteps: opts.manualSteps ?? 'require',
        ...(opts.resendSecrets ? { resendSecrets: true } : {}),
      },
      shapes: configShapes(),
      ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
    });
    opts.onPlan?.(plan);
    return { plan, desired };
  };
  const planFailed = (plan: Plan): ReconcileResult =>
    result({ stage: 'plan', ok: false, diagnostics, plan, outcomes: [], changed: needsApply(withoutAwaiting(plan)), error: plan.errors.join('; ') });
  /** Changes awaiting a manual step: not applied, reported as `blocked` (the rest of the plan goes ahead). */
  const blockedOutcomes = (plan: Plan): ResourceOutcome[] =>
    plan.changes.filter(isAwaitingManualStep).map((c) => ({
      resourceKind: c.resourceKind,
      name: c.name,
      action: c.adopt && c.action !== 'adopt' ? `adopt+${c.action}` : c.action,
      result: 'blocked',
      durationMs: 0,
      error: c.blocked ?? 'awaiting manual step',
    }));

  try {
    if (!opts.apply) {
      const planned = await planWith(await loadState(opts.statePath));
      if ('stage' in planned) return planned;
      if (planned.plan.errors.length) return planFailed(planned.plan);
      return result({ stage: 'done', ok: true, diagnostics, plan: planned.plan, outcomes: [], changed: needsApply(withoutAwaiting(planned.plan)) });
    }
    return await withStateLock(opts.statePath, async () => {
      const state = await loadState(opts.statePath);
      const planned = await planWith(state);
      if ('stage' in planned) return planned;
      const { plan, desired } = planned;
      if (plan.errors.length) return planFailed(plan);
      const blocked = blockedOutcomes(plan);
      const toApply = withoutAwaiting(plan);
      if (!needsApply(toApply)) return result({ stage: 'done', ok: true, diagnostics, plan, outcomes: blocked, changed: false });
      log.info({ summary: plan.summary, ...(blocked.length ? { awaitingManualStep: blocked.length } : {}) }, 'applying plan');
      const applied = await applyPlan({
        api,
        plan: toApply,
        desired,
        state,
        persist: (s) => saveState(opts.statePath, s),
        logger: log,
        ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
        ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
        ...(opts.pollMaxIntervalMs !== undefined ? { pollMaxIntervalMs: opts.pollMaxIntervalMs } : {}),
        ...(opts.onOutcome ? { onOutcome: opts.onOutcome } : {}),
      });
      const failed = applied.outcomes.filter((o) => o.result !== 'ok');
      const error = failed.length
        ? `${failed.length} of ${applied.outcomes.length} resources not applied: ${failed
            .map((o) => `${o.resourceKind}/${o.name}: ${o.error ?? o.result}`)
            .join('; ')}`
        : undefined;
      return result({
        stage: applied.ok ? 'done' : 'apply',
        ok: applied.ok,
        diagnostics,
        plan,
        outcomes: [...applied.outcomes, ...blocked],
        changed: true,
        ...(error ? { error } : {}),
      });
    });
  } catch (err) {
    return result({ stage: 'plan', ok: false, diagnostics, outcomes: [], changed: false, error: describeFailure(err) });
  }
}
