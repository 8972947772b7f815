/**
 * Unique config values still held once the plan is final (pure). Besides its natural key, a kind may keep a config
 * field unique across its integrations (interface 8, "Uniqueness": object_store `cloudLocationPath`). `validate`
 * compares the manifests with each other; this compares a create with the live integrations. A create (or the
 * create half of a replace) whose value a live integration holds, and that this plan does not delete, would be
 * refused by the service with a 409 after every retry: it is blocked here, in the plan, naming the holder, which
 * may be another team's (never deleted: not owned) or one of govops' own that the plan keeps (suspended, left out
 * by --only, held back by the guard, not pruned). A create whose value a removal of this plan frees waits for that
 * removal (`freedBy`): run side by side, the create would meet the value still taken. Two creates of this plan taking
 * one value (secret references that resolve alike, which `validate` cannot compare) block the second. A replace's new
 * natural key is checked too (`blockNaturalKeysTaken`).
 */
import type { LiveIntegration } from '../api/types.js';
import { isIntegrationType, kindOf, liveNaturalKey, naturalKey, uniqueLookalikeKey, uniqueValueKey } from '../kinds/registry.js';
import { blocked } from './notes.js';
import { appendTo, groupBy } from '../util/multimap.js';
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
  blockNaturalKeysTaken(creates, byName, removed, live);
  // live integrations by unique value as written (`uniqueValueKey`): one pass, not one per create (10,000 object-store
  // creates against 10,000 live ones would be 10^8 comparisons)
  const holdersOf = new Map<string, LiveIntegration[]>();
  // the ones this plan removes, by a value the service may hold to be the same (`uniqueLookalikeKey`): a create waits
  // for their removal (ordering only: a value written otherwise is never blocked)
  const removedLookalikes = new Map<string, LiveIntegration[]>();
  for (const l of live) {
    if (!isIntegrationType(l.type)) continue;
    for (const field of kindOf(l.type).uniqueFields ?? []) {
      const value = l.config[field];
      if (typeof value !== 'string') continue;
      appendTo(holdersOf, uniqueValueKey(l.type, field, value), l);
      const lookalike = removed.has(l.id) ? uniqueLookalikeKey(l.type, field, value) : undefined;
      if (lookalike !== undefined) appendTo(removedLookalikes, lookalike, l);
    }
  }
  // the values the creates of this plan take, in plan order: `validate` compares the manifests' values, but not one
  // that is a secret reference (not known offline); resolved here, two alike would both be created, the second
  // refused by the service after every retry
  const claimed = new Map<string, PlanChange>();
  for (const c of creates) {
    const d = byName.get(c.name);
    if (!d || !isIntegrationType(d.body.type) || c.blocked) continue;
    const keys: string[] = [];
    for (const field of kindOf(d.body.type).uniqueFields ?? []) {
      const value = d.body.config?.[field];
      if (typeof value !== 'string') continue;
      const key = uniqueValueKey(d.body.type, field, value);
      keys.push(key);
      const first = claimed.get(key);
      if (first) {
        c.blocked = blocked(
          'value-taken',
          `config.${field} \`${value}\` is also taken by Integration/${first.name}, which this plan ${first.action === 'create' ? 'creates' : 'replaces'} with it: it is ` +
            `unique across ${d.body.type} integrations (the service refuses a second one). Give one of the two manifests another ${field} ` +
            `(once resolved, their values are the same)`,
        );
        break;
      }
      const holders = (holdersOf.get(key) ?? []).filter((l) => l.id !== c.liveId);
      const holder = holders.find((l) => !removed.has(l.id));
      if (!holder) {
        // A replace is a delete and a create in one task: ordering it after another replace could make two wait
        // for each other (two integrations swapping paths); it meets the value taken and retries as before.
        if (c.action === 'create') {
          for (const l of holders) (c.freedBy ??= []).push(`Integration/${removed.get(l.id)!.name}`);
          const lookalike = uniqueLookalikeKey(d.body.type, field, value);
          for (const l of lookalike === undefined ? [] : (removedLookalikes.get(lookalike) ?? [])) {
            const by = `Integration/${removed.get(l.id)!.name}`;
            if (l.id !== c.liveId && !c.freedBy?.includes(by)) (c.freedBy ??= []).push(by);
          }
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
    if (!c.blocked) for (const key of keys) claimed.set(key, c);
  }
}

/**
 * The natural key of a replace's new integration (interface 8: one integration per host and kind, "409 otherwise"):
 * a create's is never held (the manifest would have matched the holder), but a replace is matched by its recorded id,
 * and one that moves the integration onto a key another live integration holds was planned: the apply deleted the old
 * integration, then the service refused the new one (409, or 400 for a holder in createError, which the create then
 * "fixed" with a PUT on it). Blocked (`value-taken`) unless this plan removes the holder.
 */
function blockNaturalKeysTaken(
  creates: readonly PlanChange[],
  byName: ReadonlyMap<string, DesiredIntegration>,
  removed: ReadonlyMap<string, PlanChange>,
  live: readonly LiveIntegration[],
): void {
  let byKey: Map<string | undefined, LiveIntegration[]> | undefined;
  for (const c of creates) {
    const d = byName.get(c.name);
    if (c.action !== 'replace' || !d || !isIntegrationType(d.body.type)) continue;
    byKey ??= groupBy(live, (l) => liveNaturalKey(l.type, l.config));
    const key = naturalKey(d.body.type, d.body.config);
    const holder = (byKey.get(key) ?? []).find((l) => l.id !== c.liveId && !removed.has(l.id));
    if (!holder) continue;
    const field = kindOf(d.body.type).identityField.slice(1).join('.');
    c.blocked = blocked(
      'value-taken',
      `the replacement's ${field} (${key}) is held by integration ${holder.id} (status ${holder.status}), which this plan does not delete: ` +
        `the service allows only one (a second is refused), so integration ${c.liveId ?? '?'} would be deleted and its replacement ` +
        `never created. Use another ${field}, or remove that integration first (if it is govops': its manifest's govops/delete ` +
        `annotation, or --prune once its manifest is gone)`,
    );
  }
}
