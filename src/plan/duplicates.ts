/**
 * Duplicate webhooks (pure). Webhooks have no unique key in the service, so one name may have several live
 * webhooks. govops deletes only what it owns: for a name it manages (a state entry with a live id), a further
 * live webhook is deleted with --prune only when state records it as a copy govops' own create made
 * (`ManagedResource.copies`, recorded when an interrupted create was resolved: plan/pending.ts). Any other
 * webhook with that name (another URL, another creator, made by someone else with the same token) is not govops'
 * and is only reported, with or without --prune.
 */
import type { LiveWebhook } from '../api/types.js';
import type { ManagedResource } from '../state/types.js';
import { reason, warning, type PlanWarning } from './notes.js';
import type { PlanOptions, ResourceChange } from './types.js';
import { appendTo } from '../util/multimap.js';

export interface DuplicateFindings {
  /** Deletes of govops' own extra copies (with --prune). */
  changes: ResourceChange[];
  /** One line per managed name with other live webhooks: what govops does (or leaves alone) and why. */
  warnings: PlanWarning[];
}

/**
 * `kept`: manifest (or state) name → the live id govops keeps for it, for every managed webhook whose
 * recorded id is live. Ids that belong to any state entry are never duplicates.
 */
export function findDuplicateWebhooks(
  kept: ReadonlyMap<string, string>,
  live: readonly LiveWebhook[],
  state: readonly ManagedResource[],
  options: PlanOptions,
): DuplicateFindings {
  const webhooks = state.filter((s) => s.kind === 'Webhook');
  const owned = new Set(webhooks.map((s) => s.id));
  // The copies each kept id's entry records (govops' own creates): the only extras it may delete.
  const copiesOf = new Map<string, Set<string>>();
  for (const s of webhooks) if (s.copies?.length) copiesOf.set(s.id, new Set(s.copies));
  const out: DuplicateFindings = { changes: [], warnings: [] };
  // The live ids of each name, in list order: one pass over the list, not one per managed name.
  const idsByName = new Map<string, string[]>();
  for (const w of live) appendTo(idsByName, w.name, w.id);
  for (const [name, keptId] of [...kept].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const extra = (idsByName.get(name) ?? []).filter((id) => id !== keptId && !owned.has(id));
    if (extra.length === 0) continue;
    const copies = copiesOf.get(keptId);
    const ours = extra.filter((id) => copies?.has(id));
    const others = extra.filter((id) => !copies?.has(id));
    if (others.length) {
      out.warnings.push(
        warning(
          'duplicate',
          `Webhook/${name}: ${others.length === 1 ? 'another live webhook has' : `${others.length} other live webhooks have`} this name ` +
          `(${others.length === 1 ? 'id' : 'ids'} ${others.join(', ')}); govops did not create ${others.length === 1 ? 'it' : 'them'} ` +
          `and never deletes ${others.length === 1 ? 'it' : 'them'} (govops keeps id ${keptId}, recorded in state)`,
          { kind: 'Webhook', name },
        ),
      );
    }
    if (ours.length === 0) continue;
    if (!options.prune) {
      out.warnings.push(
        warning(
          'duplicate',
          `Webhook/${name}: govops' own create left ${ours.length === 1 ? 'a copy' : `${ours.length} copies`} (${ours.length === 1 ? 'id' : 'ids'} ` +
          `${ours.join(', ')}); govops keeps id ${keptId} (recorded in state): run with --prune to delete the extra ${ours.length === 1 ? 'copy' : 'copies'}`,
          { kind: 'Webhook', name },
        ),
      );
      continue;
    }
    for (const id of ours) {
      out.changes.push({
        resourceKind: 'Webhook',
        name,
        action: 'delete',
        adopt: false,
        liveId: id,
        duplicateOf: keptId,
        changes: [],
        reasons: [reason('duplicate', `duplicate: a copy govops' own create made (id ${id}, recorded in state); govops keeps id ${keptId}`)],
      });
    }
  }
  return out;
}
