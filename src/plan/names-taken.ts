/**
 * Data-source names still taken once the plan is final (pure). Names are unique per integration (decisions.md,
 * "Names unique per integration"): a create whose name a live data source of its integration holds is blocked
 * unless the plan removes that data source. data-sources.ts counts the removals it plans (`leavingIds`), but
 * suspension, `--only` and the mass-deletion guard come after it and may keep one: a suspended data source whose
 * manifest is gone is never pruned, an untargeted prune is left out, a refused delete is held back. The name is
 * then still taken when the create runs (the service answers 409), so the create is blocked here, in the plan.
 */
import type { LiveDataSource, LiveIntegration } from '../api/types.js';
import { attributeDataSources } from './data-sources.js';
import { blocked } from './notes.js';
import type { DesiredDataSource, DesiredResource, PlanChange } from './types.js';
import type { ManagedResource } from '../state/types.js';
import { groupBy } from '../util/multimap.js';

/** Blocks (`name-taken`) each data-source create (or replace) whose name stays held by a live data source this plan keeps. */
export function blockNamesStillTaken(
  changes: readonly PlanChange[],
  desired: readonly DesiredResource[],
  live: { dataSources?: readonly LiveDataSource[]; integrations: readonly LiveIntegration[] },
  recorded: readonly ManagedResource[] = [],
): void {
  if (live.dataSources === undefined) return;
  // (a replace too: its create half comes after its delete, which a taken name would leave without a replacement)
  const creates = changes.filter((c) => c.resourceKind === 'DataSource' && (c.action === 'create' || c.action === 'replace') && !c.blocked && c.integration?.liveId !== undefined);
  if (creates.length === 0) return;
  const removed = new Set<string>();
  for (const c of changes) {
    if (c.resourceKind === 'DataSource' && (c.action === 'delete' || c.action === 'replace') && !c.blocked && c.liveId !== undefined) removed.add(c.liveId);
  }
  const byName = new Map<string, DesiredDataSource>();
  for (const d of desired) if (d.kind === 'DataSource') byName.set(d.name, d);
  // (attributed as the plan attributes them: by the state's record first, so with nested locations govops' own data
  // source of the outer integration does not hold a name of the inner one)
  const liveOf = groupBy(attributeDataSources(live.dataSources, live.integrations, recorded), (d) => d.integrationId);
  for (const c of creates) {
    const name = byName.get(c.name)?.body.dataSourceName;
    const taken = (liveOf.get(c.integration!.liveId!) ?? []).find((l) => l.dataSourceName === name && !removed.has(l.id));
    if (name === undefined || !taken) continue;
    c.blocked = blocked(
      'name-taken',
      `the name ${name} is taken by data source ${taken.id} (${taken.prefix}) of Integration/${c.integration!.name ?? c.integration!.liveId}, which this plan ` +
        `does not delete (suspended, left out by --only, or held back): delete it first, or rename one of them`,
    );
  }
}
