/**
 * Duplicate webhooks (pure). Webhooks have no unique key in the service, so an ambiguous create that
 * was re-sent (by govops before it waited for the first request, or by a person) leaves two live
 * webhooks with one name. For every name govops manages (a state entry with a live id), the other live
 * webhooks with that name are extra copies: reported, and deleted with --prune (the copy recorded in
 * state is kept).
 */
import type { LiveWebhook } from '../api/types.js';
import type { ManagedResource } from '../state/types.js';
import type { PlanOptions, ResourceChange } from './types.js';

export interface DuplicateFindings {
  /** Deletes of the extra copies (with --prune). */
  changes: ResourceChange[];
  /** One line per managed name with copies (without --prune, what to do). */
  warnings: string[];
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
  const owned = new Set(state.filter((s) => s.kind === 'Webhook').map((s) => s.id));
  const out: DuplicateFindings = { changes: [], warnings: [] };
  // The live ids of each name, in list order: one pass over the list, not one per managed name.
  const idsByName = new Map<string, string[]>();
  for (const w of live) {
    const ids = idsByName.get(w.name);
    if (ids) ids.push(w.id);
    else idsByName.set(w.name, [w.id]);
  }
  for (const [name, keptId] of [...kept].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const extra = (idsByName.get(name) ?? []).filter((id) => id !== keptId && !owned.has(id));
    if (extra.length === 0) continue;
    if (!options.prune) {
      out.warnings.push(
        `Webhook/${name}: ${extra.length + 1} live webhooks have this name (ids ${[keptId, ...extra].join(', ')}); ` +
          `govops keeps id ${keptId} (recorded in state): run with --prune to delete the extra ${extra.length === 1 ? 'copy' : 'copies'}`,
      );
      continue;
    }
    for (const id of extra) {
      out.changes.push({
        resourceKind: 'Webhook',
        name,
        action: 'delete',
        adopt: false,
        liveId: id,
        duplicateOf: keptId,
        changes: [],
        reasons: [`duplicate: another live webhook named ${name} (id ${id}); govops keeps id ${keptId}, recorded in state`],
      });
    }
  }
  return out;
}
