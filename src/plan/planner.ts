/**
 * planChanges: a pure function of (desired resources, live resources, govops state, options) → Plan.
 * No I/O, no clock, no randomness: the same input always gives the same plan.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import { isIntegrationType, kindOf, naturalKey } from '../kinds/registry.js';
import type { GovopsState } from '../state/types.js';
import { naturalCompare } from '../util/natural.js';
import { guardAdoption } from './adoption.js';
import { blockUnderBlockedIntegrations, planDataSources, targetDataSources } from './data-sources.js';
import { planIntegration, planOrphanIntegration, type PlanContext } from './integrations.js';
import { findDuplicateWebhooks } from './duplicates.js';
import { guardDeletions } from './guard.js';
import { gateManualSteps } from './manual-steps.js';
import { matchResources, type MatchResult } from './match.js';
import { blockNamesStillTaken } from './names-taken.js';
import { blockUniqueValuesTaken } from './unique-taken.js';
import { orphanWarning } from './orphans.js';
import { guardUnsettledCreate } from './adoption.js';
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
import { pushAll } from '../util/multimap.js';

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
  /**
   * The time of day (ms since the epoch, from the run's clock). With it, a webhook create sent recently that got no
   * answer and is not listed yet stays pending, and its manifest's create is blocked (`create-unsettled`) until it is
   * listed or WEBHOOK_CREATE_HOLD_MS has passed (plan/pending.ts). Without it, such an intent is dropped.
   */
  now?: number;
}

/** Plan order: integrations, then the data sources registered under them, then webhooks. */
const KIND_ORDER: Record<ResourceChange['resourceKind'], number> = { Integration: 0, DataSource: 1, Webhook: 2 };

/** What the plan's steps have found so far, in plan-building order (sorted at the end). */
interface PlanDraft {
  changes: ResourceChange[];
  errors: PlanProblem[];
  warnings: PlanWarning[];
}

export function planChanges(input: PlanInput): Plan {
  const { options, shapes } = input;
  const normalise = comparableMemo(shapes);
  const pc: Required<PlanContext> = { shapes, options, normalise };
  // Intents an interrupted run left behind are settled against live state first, then records whose id now
  // names another item are forgotten (the engine does both too, to save the result; here it makes every caller
  // see the same plan).
  const stale = forgetStale(resolvePending(input.state, input.live, input.now).state, input.live, input.desired);
  const state = stale.state;
  const draft: PlanDraft = { changes: [], errors: [], warnings: [...stale.notes] };

  const integrations = input.desired.filter((d): d is DesiredIntegration => d.kind === 'Integration');
  planIntegrationChanges(integrations, input, state, pc, draft);
  const webhooks = input.desired.filter((d): d is DesiredWebhook => d.kind === 'Webhook');
  const wm = planWebhookChanges(webhooks, input, state, draft);
  const suspendedNames = new Set(input.desired.filter((d) => d.suspended).map((d) => `${d.kind}/${d.name}`));
  const unsupported = planDataSourceChanges(input, state, suspendedNames, draft);
  planDuplicateWebhooks(webhooks, wm, input, state, draft);

  gateManualSteps(draft.changes, {
    desired: new Map(integrations.map((d) => [d.name, d])),
    live: new Map(input.live.integrations.map((l) => [l.id, l])),
    state: new Map(state.resources.filter((r) => r.kind === 'Integration').map((r) => [r.name, r])),
    mode: options.manualSteps ?? 'require',
  });
  const { selected, targets } = selectChanges(draft, suspendedNames, state, options);
  warnDeletesNotDone(selected, draft.warnings);
  warnFollowUps(selected, draft.warnings);
  sortInPlanOrder(selected);
  const planned: PlanChange[] = selected.map(toPlanChange);
  const refusal = guardDeletions(planned, { desiredCount: input.desired.length, managed: state.resources.length, options });
  if (refusal) draft.warnings.push(warning('deletion-guard', refusal.message));
  // (after suspension, --only and the guard: a delete they keep back leaves its data source's name taken)
  blockNamesStillTaken(planned, input.desired, input.live, state.resources);
  blockUniqueValuesTaken(planned, input.desired, input.live.integrations);
  blockUnderBlockedIntegrations(planned);
  const plan: Plan = { formatVersion: PLAN_FORMAT_VERSION, changes: planned, summary: summarize(planned), errors: draft.errors.map((e) => e.message), warnings: draft.warnings };
  if (refusal) plan.deletionRefusal = refusal;
  if (unsupported !== undefined) plan.dataSourcesUnsupported = unsupported;
  if (targets) plan.targets = targets;
  if (input.revision !== undefined) plan.revision = input.revision;
  return plan;
}

/** Integration manifests matched to live ones and planned; state entries without a manifest pruned or warned of. */
function planIntegrationChanges(integrations: DesiredIntegration[], input: PlanInput, state: GovopsState, pc: Required<PlanContext>, draft: PlanDraft): void {
  const { shapes, normalise, options } = pc;
  const im = matchResources<DesiredIntegration, LiveIntegration>({
    kind: 'Integration',
    desired: integrations,
    live: input.live.integrations,
    state: state.resources,
    nameOf: (d) => d.name,
    keyOfDesired: (d) => naturalKey(d.body.type, normalise(d.body.type, d.body.config)),
    // A live integration of a type govops does not know matches no manifest (never adopted); one govops owns
    // is matched by its recorded id and planned as a type change (plan/integrations.ts).
    keyOfLive: (l) => (isIntegrationType(l.type) ? naturalKey(l.type, shapes[l.type] ? normalise(l.type, l.config) : l.config) : undefined),
  });
  pushAll(draft.errors, im.errors);
  for (const d of integrations) {
    const m = im.matches.get(d.name)!;
    draft.changes.push(guardAdoption(planIntegration(d, m, pc), m, options));
  }
  for (const o of im.orphans) {
    // Recorded by `state adopt` and never applied: not owned yet, so never pruned.
    const c = o.state.explicitAdopt ? undefined : planOrphanIntegration(o.state, o.live, options);
    if (c) draft.changes.push(c);
    else draft.warnings.push(orphanWarning('Integration', o.state, o.live !== undefined));
  }
}

/** Webhook manifests matched (by name) and planned; orphans as for integrations. Returns the match. */
function planWebhookChanges(webhooks: DesiredWebhook[], input: PlanInput, state: GovopsState, draft: PlanDraft): MatchResult<LiveWebhook> {
  const { options } = input;
  const wm = matchResources<DesiredWebhook, LiveWebhook>({
    kind: 'Webhook',
    desired: webhooks,
    live: input.live.webhooks,
    state: state.resources,
    nameOf: (d) => d.name,
    keyOfDesired: (d) => d.body.name,
    keyOfLive: (l) => l.name,
  });
  pushAll(draft.errors, wm.errors);
  for (const d of webhooks) {
    const m = wm.matches.get(d.name)!;
    draft.changes.push(guardUnsettledCreate(guardAdoption(planWebhook(d, m, options), m, options), m, input.now));
  }
  for (const o of wm.orphans) {
    const c = o.state.explicitAdopt ? undefined : planOrphanWebhook(o.state, o.live, options);
    if (c) draft.changes.push(c);
    else draft.warnings.push(orphanWarning('Webhook', o.state, o.live !== undefined));
  }
  return wm;
}

/**
 * Data sources, when in play (manifests or state entries), planned against the integration changes so far.
 * Returns why the service's data sources could not be listed, if so.
 */
function planDataSourceChanges(input: PlanInput, state: GovopsState, suspendedNames: ReadonlySet<string>, draft: PlanDraft): string | undefined {
  const dataSources = input.desired.filter((d): d is DesiredDataSource => d.kind === 'DataSource');
  if (dataSources.length === 0 && !state.resources.some((r) => r.kind === 'DataSource')) return undefined;
  // Against the integrations as they will be: a suspended integration is left as it is live.
  const integrationChanges = applySuspension(
    draft.changes.filter((c) => c.resourceKind === 'Integration'),
    suspendedNames,
    state.resources,
  );
  const byName = new Map(integrationChanges.map((c) => [c.name, c]));
  let unsupported: string | undefined;
  if (input.live.dataSources === undefined) unsupported = input.live.dataSourcesUnsupported ?? 'data sources were not listed';
  const ds = planDataSources({
    desired: dataSources,
    live: input.live.dataSources,
    unsupported,
    liveIntegrations: input.live.integrations,
    integrationChanges: byName,
    state: state.resources,
    options: input.options,
  });
  pushAll(draft.changes, ds.changes);
  pushAll(draft.errors, ds.errors);
  pushAll(draft.warnings, ds.warnings);
  return unsupported;
}

/** Live webhooks that repeat the name of one govops keeps: deleted when govops made them, else warned of. */
function planDuplicateWebhooks(webhooks: DesiredWebhook[], wm: MatchResult<LiveWebhook>, input: PlanInput, state: GovopsState, draft: PlanDraft): void {
  const kept = new Map<string, string>();
  for (const d of webhooks) {
    const m = wm.matches.get(d.name)!;
    if (m.live && m.state?.id === m.live.id) kept.set(d.body.name, m.live.id);
  }
  for (const o of wm.orphans) if (o.live) kept.set(o.live.name, o.live.id);
  const duplicates = findDuplicateWebhooks(kept, input.live.webhooks, state.resources, input.options);
  pushAll(draft.changes, duplicates.changes);
  pushAll(draft.warnings, duplicates.warnings);
}

/**
 * Suspended resources are left alone; a targeted plan keeps only what --only selects (before the guard), and
 * its errors replace the draft's.
 */
function selectChanges(
  draft: PlanDraft,
  suspendedNames: ReadonlySet<string>,
  state: GovopsState,
  options: PlanOptions,
): { selected: ResourceChange[]; targets?: Plan['targets'] } {
  const selected = applySuspension(draft.changes, suspendedNames, state.resources);
  if (!options.only?.length) return { selected };
  const t = applyTargets(selected, draft.errors, options.only);
  const ds = targetDataSources(selected, t.changes);
  pushAll(draft.warnings, ds.warnings);
  draft.errors.splice(0, draft.errors.length, ...t.errors);
  pushAll(draft.warnings, t.warnings);
  return { selected: ds.changes, targets: t.targets };
}

/** A resource marked govops/delete that this plan leaves: a warning says why. */
function warnDeletesNotDone(selected: readonly ResourceChange[], warnings: PlanWarning[]): void {
  for (const c of selected) {
    if (c.action === 'noop' && c.reasons.some((r) => r.code === 'delete-requested')) {
      const why = c.reasons[c.reasons.length - 1]!.message;
      warnings.push(warning('delete-not-done', `${c.resourceKind}/${c.name} is marked govops/delete but is not deleted: ${why}`, { kind: c.resourceKind, name: c.name }));
    }
  }
}

/** An update (not blocked) that changes a field of its kind's `followUps`: a warning says what the operator must do next. */
function warnFollowUps(selected: readonly ResourceChange[], warnings: PlanWarning[]): void {
  for (const c of selected) {
    if (c.resourceKind !== 'Integration' || !c.integrationType || c.blocked || (c.action !== 'update' && c.action !== 'adopt')) continue;
    for (const [field, what] of Object.entries(kindOf(c.integrationType).followUps ?? {})) {
      const path = `config.${field}`;
      // the field itself, or an object above it set or removed as a whole
      const hit = c.changes.some((f) => f.path === path || path.startsWith(`${f.path}.`));
      if (hit) warnings.push(warning('follow-up', `${c.resourceKind}/${c.name} changes ${path}: ${what}`, { kind: c.resourceKind, name: c.name }));
    }
  }
}

function sortInPlanOrder(changes: ResourceChange[]): void {
  changes.sort((a, b) =>
    a.resourceKind === b.resourceKind ? naturalCompare(a.name, b.name) : KIND_ORDER[a.resourceKind] - KIND_ORDER[b.resourceKind],
  );
}

export function summarize(changes: readonly ResourceChange[]): PlanSummary {
  const s: PlanSummary = { create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: 0 };
  for (const c of changes) {
    if (c.adopt) s.adopt++;
    if (c.action === 'settle') s.settle = (s.settle ?? 0) + 1;
    else if (c.action !== 'adopt') s[c.action]++;
  }
  return s;
}

/**
 * The changes apply acts on: API calls, state-only updates (adopt, rename, forgetting a resource already gone), and
 * waits (`settle`). Everything but plain no-ops; a plan needs applying when this is not empty.
 */
export function actionable(plan: Plan): PlanChange[] {
  return plan.changes.filter((c) => c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined);
}
