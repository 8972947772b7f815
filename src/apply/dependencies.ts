/**
 * Ordering between the tasks of one apply, as explicit dependencies (pure): a task starts once every task it
 * depends on has finished, and is skipped when one of them was not applied. Today's edges:
 * - a data source is registered after its integration's task (created, fixed, updated, adopted, replaced:
 *   the integration is `enabled` and its live id known when that task ends);
 * - an integration is deleted (or replaced) after the deletes of the data sources registered under it
 *   (the service would delete them with it; govops deletes what it manages first, explicitly);
 * - a new data source (a create, or the create half of a replace) is registered after the deletes of the data
 *   sources of its integration (a name or a prefix they free may be the one it takes);
 * - a new integration is created after the removals that free a unique value it takes (`freedBy`, set by the
 *   planner: src/plan/unique-taken.ts).
 */
import type { PlanChange } from '../plan/types.js';
import { appendTo } from '../util/multimap.js';

export const taskKey = (c: Pick<PlanChange, 'resourceKind' | 'name'>): string => `${c.resourceKind}/${c.name}`;

/** Changes that delete a live data source (a prune, a govops/delete, or the first half of a replace). */
function deletesDataSource(c: PlanChange): boolean {
  return c.resourceKind === 'DataSource' && c.liveId !== undefined && (c.action === 'delete' || c.action === 'replace');
}

/**
 * For every change that waits for others (by task key), the keys of the changes it waits for; a change that waits
 * for nothing has no entry (most of them: at 10,000 creates a map of 10,000 empty lists was 10-25 ms before the
 * first write, issue #26). Only changes of the apply are given: a change whose integration has nothing to do waits
 * for nothing. Throws on a cycle (a planner bug).
 */
export function taskDependencies(changes: readonly PlanChange[]): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  const waits = (key: string, on: string): void => appendTo(deps, key, on);
  // by the live id of the integration concerned, in the order of the changes: linear in the changes, not quadratic
  const dataSourceDeletes = new Map<string, string[]>();
  const integrationRemovals = new Map<string, string[]>();
  const integrations = new Set<string>();
  let dataSources = false;
  const keys = new Set<string>();
  let freed = false;
  for (const c of changes) {
    if (c.freedBy !== undefined) freed = true;
    if (c.resourceKind === 'Integration') {
      integrations.add(c.name);
      keys.add(taskKey(c));
      if ((c.action === 'delete' || c.action === 'replace') && c.liveId !== undefined) appendTo(integrationRemovals, c.liveId, taskKey(c));
    } else if (c.resourceKind === 'DataSource') {
      dataSources = true;
      if (c.action === 'delete' && deletesDataSource(c) && c.integration?.liveId !== undefined) appendTo(dataSourceDeletes, c.integration.liveId, taskKey(c));
    }
  }
  if (freed) {
    for (const c of changes) for (const k of c.freedBy ?? []) if (keys.has(k)) waits(taskKey(c), k);
  }
  // Every other edge starts at or ends in a data source.
  if (!dataSources) {
    assertAcyclic(deps);
    return deps;
  }
  for (const c of changes) {
    if (c.resourceKind !== 'DataSource') continue;
    if ((c.action === 'create' || c.action === 'replace') && c.integration?.name !== undefined && integrations.has(c.integration.name)) {
      waits(taskKey(c), `Integration/${c.integration.name}`);
    }
    // (a replace's create half too: it runs after the replace's own delete, which a taken name would leave without
    // a replacement)
    if ((c.action === 'create' || c.action === 'replace') && c.integration?.liveId !== undefined) {
      for (const d of dataSourceDeletes.get(c.integration.liveId) ?? []) waits(taskKey(c), d);
    }
    if (deletesDataSource(c) && c.integration?.liveId !== undefined) {
      for (const i of integrationRemovals.get(c.integration.liveId) ?? []) waits(i, taskKey(c));
    }
  }
  assertAcyclic(deps);
  return deps;
}

function assertAcyclic(deps: ReadonlyMap<string, readonly string[]>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (k: string): void => {
    const s = state.get(k);
    if (s === 'done') return;
    if (s === 'visiting') throw new Error(`apply bug: the tasks wait for each other: ${[...path, k].join(' -> ')}`);
    state.set(k, 'visiting');
    path.push(k);
    for (const d of deps.get(k) ?? []) visit(d);
    path.pop();
    state.set(k, 'done');
  };
  for (const k of deps.keys()) visit(k);
}
