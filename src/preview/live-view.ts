/**
 * From the pull request's changes and the plans to what the comment shows (pure):
 * - each touched resource gets the live action merging causes (from the plan of the head), its live id and
 *   status, and its live field changes, each marked as caused by the pull request or not;
 * - differences between the service and the base revision (the plan of the base) that the pull request does
 *   not cause are drift, listed separately: merging applies them too.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import type { FieldChange, Plan, ResourceChange } from '../plan/types.js';
import { firstBy } from '../util/multimap.js';
import { byResource, type PrChange } from './pr-diff.js';
import type { DriftEntry, LiveFacts, PreviewResource } from './types.js';

export interface LiveLists {
  integrations: LiveIntegration[];
  webhooks: LiveWebhook[];
  /** Listed when data sources are in play (manifests of the head or the base, or state entries). */
  dataSources?: LiveDataSource[];
  /** Data sources are in play and the service could not list them (404/405): why. */
  dataSourcesUnsupported?: string;
}

const key = (kind: string, name: string): string => `${kind}/${name}`;

/** Plan paths (`config.port`, `url`) the pull request changes: its manifest `spec.` paths without `spec.`. */
export function prPaths(pr: PrChange | undefined): string[] {
  if (!pr) return [];
  return pr.fields.filter((f) => f.path.startsWith('spec.')).map((f) => f.path.slice('spec.'.length));
}

/** A plan path is covered by a changed manifest path when one contains the other. */
export function coveredBy(path: string, changed: readonly string[]): boolean {
  return changed.some((c) => path === c || path.startsWith(`${c}.`) || c.startsWith(`${path}.`));
}

/** The live integrations by id, as a scan finds them: made once per preview (a scan per resource was quadratic). */
type IntegrationsById = ReadonlyMap<string, LiveIntegration>;

function statusOf(c: ResourceChange, integrations: IntegrationsById): string | undefined {
  if (c.resourceKind !== 'Integration' || c.liveId === undefined) return undefined;
  return integrations.get(c.liveId)?.status;
}

function liveFacts(c: ResourceChange | undefined, pr: PrChange | undefined, integrations: IntegrationsById): LiveFacts {
  if (!c) {
    return { action: 'none', adopt: false, reasons: [], changes: [], forcesReplace: [] };
  }
  const changed = prPaths(pr);
  // without a base every difference is the change shown; with one, only what the pull request changes
  const fromPr = (f: FieldChange): boolean => !pr || pr.change === 'added' || coveredBy(f.path, changed);
  const facts: LiveFacts = {
    action: c.action,
    adopt: c.adopt,
    reasons: c.reasons.map((r) => r.message),
    changes: c.changes.map((f) => ({ ...f, fromPr: fromPr(f) })),
    forcesReplace: c.changes.filter((f) => f.forcesReplace).map((f) => f.path),
  };
  if (c.liveId !== undefined) facts.id = c.liveId;
  const status = statusOf(c, integrations);
  if (status !== undefined) facts.status = status;
  if (c.blocked !== undefined) {
    facts.blocked = c.blocked.message;
    facts.blockedCode = c.blocked.code;
  }
  if (c.notComparable) facts.notComparable = { paths: [...c.notComparable.paths], handling: c.notComparable.handling };
  return facts;
}

/**
 * A removal the head plan does nothing for (no --prune): where the base plan found it in the service (its id
 * and status), or nothing when the service does not have it, so the comment says whether it stays there.
 */
function removedFacts(facts: LiveFacts, base: ResourceChange | undefined, integrations: IntegrationsById): LiveFacts {
  if (base?.liveId === undefined || base.action === 'create') return facts;
  facts.id = base.liveId;
  const status = statusOf(base, integrations);
  if (status !== undefined) facts.status = status;
  return facts;
}

export function touchedResources(pr: readonly PrChange[], headPlan: Plan | undefined, live: LiveLists | undefined, basePlan?: Plan): PreviewResource[] {
  // the head plan's change of each touched resource (a removal: the plan of its old name, a prune candidate)
  const changes = headPlan && live ? firstBy(headPlan.changes, (c) => key(c.resourceKind, c.name)) : undefined;
  const baseChanges = basePlan ? firstBy(basePlan.changes, (c) => key(c.resourceKind, c.name)) : undefined;
  const integrations = live ? firstBy(live.integrations, (i) => i.id) : undefined;
  return pr.map((p) => {
    const r: PreviewResource = { resourceKind: p.resourceKind, name: p.name, change: p.change, source: p.source, fields: p.fields };
    if (p.integrationType !== undefined) r.integrationType = p.integrationType;
    if (p.renamedFrom !== undefined) r.renamedFrom = p.renamedFrom;
    if (p.baseSource !== undefined) r.baseSource = p.baseSource;
    if (changes && integrations) {
      const c = changes.get(key(p.resourceKind, p.name));
      r.live = liveFacts(c, p, integrations);
      if (!c && p.change === 'removed') r.live = removedFacts(r.live, baseChanges?.get(key(p.resourceKind, p.name)), integrations);
    }
    return r;
  });
}

/** Without --base: every resource of the plan with something to do. */
export function plannedResources(headPlan: Plan, live: LiveLists): PreviewResource[] {
  const integrations = firstBy(live.integrations, (i) => i.id);
  return headPlan.changes
    .filter((c) => c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined)
    .map((c) => {
      const r: PreviewResource = { resourceKind: c.resourceKind, name: c.name, fields: [], live: liveFacts(c, undefined, integrations) };
      if (c.integrationType !== undefined) r.integrationType = c.integrationType;
      if (c.source) r.source = { ...c.source };
      return r;
    });
}

/**
 * Drift: the base plan's differences. For an untouched resource, all of them; for a touched one, the fields
 * the pull request does not change (a touched resource the pull request adds or removes has none).
 */
export function driftEntries(basePlan: Plan, pr: readonly PrChange[]): DriftEntry[] {
  const touched = new Map<string, PrChange>();
  for (const p of pr) {
    touched.set(key(p.resourceKind, p.name), p);
    if (p.renamedFrom !== undefined) touched.set(key(p.resourceKind, p.renamedFrom), p);
  }
  const out: DriftEntry[] = [];
  for (const c of basePlan.changes) {
    if ((c.action === 'noop' || c.action === 'settle') && !c.adopt) continue;
    const p = touched.get(key(c.resourceKind, c.name));
    // added or removed by the pull request, or not yet created: the head's own action covers it
    if (p && (p.change === 'added' || p.change === 'removed' || c.action === 'create')) continue;
    const changes = p ? c.changes.filter((f) => !coveredBy(f.path, prPaths(p))) : c.changes;
    if (p && changes.length === 0) continue;
    const e: DriftEntry = {
      resourceKind: c.resourceKind,
      name: c.name,
      action: c.action,
      touched: p !== undefined,
      reasons: c.reasons.map((r) => r.message),
      changes,
    };
    if (c.integrationType !== undefined) e.integrationType = c.integrationType;
    if (c.liveId !== undefined) e.id = c.liveId;
    out.push(e);
  }
  return out.sort(byResource);
}
