/**
 * planChanges: a pure function of (desired resources, live resources, govops state, options) → Plan.
 * No I/O, no clock, no randomness: the same input always gives the same plan.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import { naturalKey } from '../kinds/registry.js';
import type { GovopsState } from '../state/types.js';
import { naturalCompare } from '../util/natural.js';
import { planDataSources, targetDataSources } from './data-sources.js';
import { planIntegration, planOrphanIntegration, type PlanContext } from './integrations.js';
import { findDuplicateWebhooks } from './duplicates.js';
import { guardDeletions } from './guard.js';
import { gateManualSteps } from './manual-steps.js';
import { matchResources } from './match.js';
import { orphanWarning } from './orphans.js';
import { resolvePending } from './pending.js';
import { forgetStale } from './stale.js';
import { comparableMemo, type ConfigShapes } from './shape.js';
import { applySuspension } from './suspend.js';
import { applyTargets } from './target.js';
import { warning, type PlanProblem, type PlanWarning } from './notes.js';
import {
  PLAN_FORMAT_VERSION,
  toPlanChange,
  type DesiredDataSource,
  type DesiredIntegration,
  type DesiredResource,
  type DesiredWebhook,
  type Plan,
  type PlanChange,
  type PlanOptions,
  type PlanSummary,
  type ResourceChange,
} from './types.js';
import { planOrphanWebhook, planWebhook } from './webhooks.js';

export interface PlanInput {
  desired: DesiredResource[];
  live: {
    integrations: LiveIntegration[];
    webhooks: LiveWebhook[];
    /**
     * Object-store data sources; listed only when data sources are in play (manifests or state entries).
     * Undefined with data sources in play: they could not be listed (`dataSourcesUnsupported` says why).
     */
    dataSources?: LiveDataSource[];
    dataSourcesUnsupported?: string;
  };
  state: GovopsState;
  options: PlanOptions;
  /** The config shapes of the kinds (from schemas/, via manifests/shapes.ts `configShapes()`): injected. */
  shapes: ConfigShapes;
  revision?: string;
}

/** Plan order: integrations, then the data sources registered under them, then webhooks. */
const KIND_ORDER: Record<ResourceChange['resourceKind'], number> = { Integration: 0, DataSource: 1, Webhook: 2 };

export function planChanges(input: PlanInput): Plan {
  const { options, shapes } = input;
  const normalise = comparableMemo(shapes);
  const pc: PlanContext = { shapes, options, normalise };
  // Intents an interrupted run left behind are settled against live state first, then records whose id now
  // names another item are forgotten (the engine does both too, to save the result; here it makes every caller
  // see the same plan).
  const stale = forgetStale(resolvePending(input.state, input.live).state, input.live, input.desired);
  const state = stale.state;
  const errors: PlanProblem[] = [];
  const warnings: PlanWarning[] = [...stale.notes];
  const changes: ResourceChange[] = [];

  const integrations = input.desired.filter((d): d is DesiredIntegration => d.kind === 'Integration');
  const im = matchResources<DesiredIntegration, LiveIntegration>({
    kind: 'Integration',
    desired: integrations,
    live: input.live.integrations,
    state: state.resources,
    nameOf: (d) => d.name,
    keyOfDesired: (d) => naturalKey(d.body.type, normalise(d.body.type, d.body.config)),
    keyOfLive: (l) => naturalKey(l.type, shapes[l.type] ? normalise(l.type, l.config) : l.config),
  });
  errors.push(...im.errors);
  for (const d of integrations) changes.push(planIntegration(d, im.matches.get(d.name)!, pc));
  for (const o of im.orphans) {
    // Recorded by `state adopt` and never applied: not owned yet, so never pruned.
    const c = o.state.explicitAdopt ? undefined : planOrphanIntegration(o.state, o.live, options);
    if (c) changes.push(c);
    else warnings.push(orphanWarning('Integration', o.state, o.live !== undefined));
  }

  const webhooks = input.desired.filter((d): d is DesiredWebhook => d.kind === 'Webhook');
  const wm = matchResources<DesiredWebhook, LiveWebhook>({
    kind: 'Webhook',
    desired: webhooks,
    live: input.live.webhooks,
    state: state.resources,
    nameOf: (d) => d.name,
    keyOfDesired: (d) => d.body.name,
    keyOfLive: (l) => l.name,
  });
  errors.push(...wm.errors);
  for (const d of webhooks) changes.push(planWebhook(d, wm.matches.get(d.name)!, options));
  for (const o of wm.orphans) {
    const c = o.state.explicitAdopt ? undefined : planOrphanWebhook(o.state, o.live, options);
    if (c) changes.push(c);
    else warnings.push(orphanWarning('Webhook', o.state, o.live !== undefined));
  }
  const suspendedNames = new Set(input.desired.filter((d) => d.suspended).map((d) => `${d.kind}/${d.name}`));
  const dataSources = input.desired.filter((d): d is DesiredDataSource => d.kind === 'DataSource');
  let unsupported: string | undefined;
  if (dataSources.length > 0 || state.resources.some((r) => r.kind === 'DataSource')) {
    // Against the integrations as they will be: a suspended integration is left as it is live.
    const integrationChanges = applySuspension(
      changes.filter((c) => c.resourceKind === 'Integration'),
      suspendedNames,
      state.resources,
    );
    const byName = new Map(integrationChanges.map((c) => [c.name, c]));
    if (input.live.dataSources === undefined) unsupported = input.live.dataSourcesUnsupported ?? 'data sources were not listed';
    const ds = planDataSources({
      desired: dataSources,
      live: input.live.dataSources,
      unsupported,
      liveIntegrations: input.live.integrations,
      integrationChanges: byName,
      state: state.resources,
      options,
    });
    changes.push(...ds.changes);
    errors.push(...ds.errors);
    warnings.push(...ds.warnings);
  }

  const kept = new Map<string, string>();
  for (const d of webhooks) {
    const m = wm.matches.get(d.name)!;
    if (m.live && m.state?.id === m.live.id) kept.set(d.body.name, m.live.id);
  }
  for (const o of wm.orphans) if (o.live) kept.set(o.live.name, o.live.id);
  const duplicates = findDuplicateWebhooks(kept, input.live.webhooks, state.resources, options);
  changes.push(...duplicates.changes);
  warnings.push(...duplicates.warnings);

  gateManualSteps(changes, {
    desired: new Map(integrations.map((d) => [d.name, d])),
    live: new Map(input.live.integrations.map((l) => [l.id, l])),
    state: new Map(state.resources.filter((r) => r.kind === 'Integration').map((r) => [r.name, r])),
    mode: options.manualSteps ?? 'require',
  });
  // Suspended resources are left alone; a targeted plan keeps only what --only selects (before the guard).
  let selected = applySuspension(changes, suspendedNames, state.resources);
  let targets: Plan['targets'];
  if (options.only?.length) {
    const t = applyTargets(selected, errors, options.only);
    const ds = targetDataSources(selected, t.changes);
    selected = ds.changes;
    warnings.push(...ds.warnings);
    targets = t.targets;
    errors.splice(0, errors.length, ...t.errors);
    warnings.push(...t.warnings);
  }
  for (const c of selected) {
    if (c.action === 'noop' && c.reasons.some((r) => r.code === 'delete-requested')) {
      const why = c.reasons[c.reasons.length - 1]!.message;
      warnings.push(warning('delete-not-done', `${c.resourceKind}/${c.name} is marked govops/delete but is not deleted: ${why}`, { kind: c.resourceKind, name: c.name }));
    }
  }
  selected.sort((a, b) =>
    a.resourceKind === b.resourceKind ? naturalCompare(a.name, b.name) : KIND_ORDER[a.resourceKind] - KIND_ORDER[b.resourceKind],
  );
  const planned: PlanChange[] = selected.map(toPlanChange);
  const refusal = guardDeletions(planned, { desiredCount: input.desired.length, managed: state.resources.length, options });
  if (refusal) warnings.push(warning('deletion-guard', refusal.message));
  const plan: Plan = { formatVersion: PLAN_FORMAT_VERSION, changes: planned, summary: summarize(planned), errors: errors.map((e) => e.message), warnings };
  if (refusal) plan.deletionRefusal = refusal;
  if (unsupported !== undefined) plan.dataSourcesUnsupported = unsupported;
  if (targets) plan.targets = targets;
  if (input.revision !== undefined) plan.revision = input.revision;
  return plan;
}

export function summarize(changes: readonly ResourceChange[]): PlanSummary {
  const s: PlanSummary = { create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: 0 };
  for (const c of changes) {
    if (c.adopt) s.adopt++;
    if (c.action !== 'adopt') s[c.action]++;
  }
  return s;
}

/**
 * The changes apply acts on: API calls, and state-only updates (adopt, rename, forgetting a resource
 * already gone). Everything but plain no-ops; a plan needs applying when this is not empty.
 */
export function actionable(plan: Plan): PlanChange[] {
  return plan.changes.filter((c) => c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined);
}
