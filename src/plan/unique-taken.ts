/**
 * Unique config values still held once the plan is final (pure). Besides its natural key, a kind may keep a config
 * field unique across its integrations (interface 8, "Uniqueness": object_store `cloudLocationPath`). `validate`
 * compares the manifests with each other; this compares a create with the live integrations. A create (or the
 * create half of a replace) whose value a live integration holds, and that this plan does not delete, would be
 * refused by the service with a 409 after every retry: it is blocked here, in the plan, naming the holder, which
 * may be another team's (never deleted: not owned) or one of govops' own that the plan keeps (suspended, left out
 * by --only, held back by the guard, not pruned). A create whose value a removal of this plan frees waits for that
 * removal (`freedBy`): run side by side, the create would meet the value still taken.
 */
import type { LiveIntegration } from '../api/types.js';
import { isIntegrationType, kindOf } from '../kinds/registry.js';
import { blocked } from './notes.js';
import { appendTo } from '../util/multimap.js';
import type { DesiredIntegration, DesiredResource, PlanChange } from './types.js';

/**
 * Blocks (`value-taken`) each integration create or replace whose unique value a live integration this plan keeps
 * holds; a create whose value a removal frees gets `freedBy`.
 */
export function blockUniqueValuesTaken(changes: readonly PlanChange[], desired: readonly DesiredResource[], live: readonly LiveIntegration[]): void {
  const creates = changes.filter((c) => c.resourceKind === 'Integration' && (c.action === 'create' || c.action === 'replace') && !c.blocked);
  if (creates.length === 0) return;
  const byName = new Map<string, DesiredIntegration>();
  for (const d of desired) if (d.kind === 'Integration') byName.set(d.name, d);
  /** The removal of each live integration this plan removes, by live id. */
  const removed = new Map<string, PlanChange>();
  for (const c of changes) {
    if (c.resourceKind === 'Integration' && (c.action === 'delete' || c.action === 'replace') && !c.blocked && c.liveId !== undefined) removed.set(c.liveId, c);
  }
  // live integrations by unique value (`type field=value`): one pass, not one per create (10,000 object-store creates
  // against 10,000 live ones would be 10^8 comparisons)
  const holdersOf = new Map<string, LiveIntegration[]>();
  for (const l of live) {
    if (!isIntegrationType(l.type)) continue;
    for (const field of kindOf(l.type).uniqueFields ?? []) {
      const value = l.config[field];
      if (typeof value === 'string') appendTo(holdersOf, `${l.type} ${field}=${value}`, l);
    }
  }
  if (holdersOf.size === 0) return;
  for (const c of creates) {
    const d = byName.get(c.name);
    if (!d || !isIntegrationType(d.body.type)) continue;
    for (const field of kindOf(d.body.type).uniqueFields ?? []) {
      const value = d.body.config?.[field];
      if (typeof value !== 'string') continue;
      const holders = (holdersOf.get(`${d.body.type} ${field}=${value}`) ?? []).filter((l) => l.id !== c.liveId);
      const holder = holders.find((l) => !removed.has(l.id));
      if (!holder) {
        // A replace is a delete and a create in one task: ordering it after another replace could make two wait
        // for each other (two integrations swapping paths); it meets the value taken and retries as before.
        if (c.action === 'create') {
          for (const l of holders) (c.freedBy ??= []).push(`Integration/${removed.get(l.id)!.name}`);
        }
        continue;
      }
      c.blocked = blocked(
        'value-taken',
        `config.${field} \`${value}\` is used by integration ${holder.id} (status ${holder.status}), which this plan does not delete: it is unique ` +
          `across ${d.body.type} integrations (the service refuses a second one). Use another ${field}, or remove that integration first ` +
          `(if it is govops': its manifest's govops/delete annotation, or --prune once its manifest is gone)`,
      );
      break;
    }
  }
}
