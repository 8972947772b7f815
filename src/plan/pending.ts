/**
 * Resolving intents left in the state by an interrupted run (pure). Apply records a create or a delete
 * as pending before sending it (src/apply/ledger.ts); if govops was killed before it learned the
 * outcome, the next run looks at live state:
 * - pending create with a known id: the resource is live → a normal entry; gone → dropped;
 * - pending create without an id: found by its natural key (integrations) or name (webhooks) among live
 *   resources no other entry owns → recorded with that id; not found → the create never landed: dropped (a webhook's
 *   or integration's recorded less than WEBHOOK_CREATE_HOLD_MS ago is kept pending: the service may list it late);
 * - pending delete: still live → a normal entry again (the plan decides anew); gone → dropped; a data source only
 *   soft-deleted (listed at the pending delete's id, marked deleted: api `unfinishedDeletes`) → kept pending, and
 *   planned as live (its delete planned again sends the hard delete).
 * A webhook intent that recorded its identity (name and URL) is found only by it; when more than one unowned live
 * webhook has it, the others made by the same creator are copies its own re-sent create made: recorded as the
 * entry's `copies` (plan/duplicates.ts deletes those with --prune, and no other webhook of that name).
 * Data sources are found by (integration id, prefix), which is recorded as their identity. When the service's data sources could not be listed
 * (`dataSources` undefined: not supported), their pending entries are kept as they are.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import { dataSourceKey } from '../service/data-sources.js';
import { attributeDataSources } from './data-sources.js';
import { keyedWebhookIdentity, recordedWebhookIdentity } from '../service/kinds.js';
import { liveNaturalKey } from '../kinds/registry.js';
import type { GovopsState, ManagedResource } from '../state/types.js';
import { groupBy } from '../util/multimap.js';
import { heldCreate } from './held-create.js';

export interface PendingResolution {
  state: GovopsState;
  /** One line per resolved entry (for the log). */
  notes: string[];
}

interface LiveRef {
  id: string;
  /** Undefined: an integration of a type govops does not know (no natural key: no pending create is one of it). */
  key: string | undefined;
  /** Webhooks: identity and creator, to tell govops' own copies from others'. */
  identity?: string;
  createdBy?: number;
}

/** Numeric ids in numeric order, others after them as text. */
function byId(a: LiveRef, b: LiveRef): number {
  const na = Number(a.id);
  const nb = Number(b.id);
  if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * A data source's identity is the key its pending create was found by, (integration id, prefix): recorded as the
 * create's answer would have recorded it (stale.ts checks only entries that hold one; before, a resolved create had none).
 */
function foundIdentity(r: ManagedResource): Pick<ManagedResource, 'identity'> {
  return r.kind === 'DataSource' && r.identity === undefined && r.key !== undefined ? { identity: r.key } : {};
}

/**
 * A pending delete: still live → a normal entry again (the plan decides anew); gone → dropped; only soft-deleted (the
 * service's first DELETE; the second, hard one was not sent) → kept pending, so the next run lists it again if this
 * one does not finish it, and planned as a live data source (deleted again: finished).
 */
function resolvedDelete(r: ManagedResource, entry: ManagedResource, at: 'live' | 'soft-deleted' | 'gone', notes: string[]): ManagedResource | undefined {
  const who = `${r.kind}/${r.name}`;
  if (at === 'gone') notes.push(`${who}: the interrupted delete went through; entry removed`);
  else if (at === 'live') notes.push(`${who}: an interrupted delete left id ${r.id} live; it is planned again`);
  else notes.push(`${who}: an interrupted delete left id ${r.id} soft-deleted (listed, marked deleted); it is planned again to finish it`);
  return at === 'gone' ? undefined : at === 'live' ? entry : r;
}

export function resolvePending(
  state: GovopsState,
  live: { integrations: readonly LiveIntegration[]; webhooks: readonly LiveWebhook[]; dataSources?: readonly LiveDataSource[] | undefined },
  /** The time of day (ms): with it, a recent webhook create that is not listed yet stays pending (heldCreate). */
  now?: number,
): PendingResolution {
  if (!state.resources.some((r) => r.pending !== undefined)) return { state, notes: [] };
  // Each kind's live resources by id and by key, made once: an interrupted 10,000-webhook apply leaves as many
  // pending entries, and a scan of the live list for each was 10^8 comparisons.
  const indexed = (refs: LiveRef[]) => ({
    ids: new Set(refs.map((l) => l.id)),
    byKey: groupBy(refs.filter((l) => l.key !== undefined), (l) => l.key!),
  });
  const byUrl = state.resources.some((r) => r.pending === 'create' && r.kind === 'Webhook' && r.identity !== undefined);
  const liveOf: Record<ManagedResource['kind'], ReturnType<typeof indexed>> = {
    Integration: indexed(live.integrations.map((l) => ({ id: l.id, key: liveNaturalKey(l.type, l.config) }))),
    // identities as the state records them (the url by its fingerprint under the state's key), made only when needed
    Webhook: indexed(
      live.webhooks.map((l) => ({ id: l.id, key: l.name, ...(byUrl ? { identity: keyedWebhookIdentity(l.name, l.url, state.fingerprintKey) } : {}), createdBy: l.createdBy })),
    ),
    // (records that do not name their integration: the one whose location holds the prefix, as the planner reads them)
    DataSource: indexed(attributeDataSources(live.dataSources ?? [], live.integrations, state.resources).map((l) => ({ id: l.id, key: dataSourceKey(l.integrationId, l.prefix) }))),
  };
  const claimed = new Set(state.resources.filter((r) => !r.pending && r.id !== '').map((r) => `${r.kind}\0${r.id}`));
  const softDeletedIds = new Set((live.dataSources ?? []).filter((d) => d.softDeleted).map((d) => d.id));
  // (a disabled data source is never what a pending create made: its prefix was free again for that create)
  for (const id of softDeletedIds) claimed.add(`DataSource\0${id}`);
  const notes: string[] = [];
  const out: ManagedResource[] = [];
  for (const r of state.resources) {
    if (!r.pending || (r.kind === 'DataSource' && live.dataSources === undefined)) {
      out.push(r);
      continue;
    }
    const { pending, preexisting: _preexisting, ...entry } = r;
    void _preexisting;
    const refs = liveOf[r.kind];
    const who = `${r.kind}/${r.name}`;
    const isLive = r.id !== '' && refs.ids.has(r.id);
    if (pending === 'delete') {
      const kept = resolvedDelete(r, entry, isLive ? (r.kind === 'DataSource' && softDeletedIds.has(r.id) ? 'soft-deleted' : 'live') : 'gone', notes);
      if (kept) out.push(kept);
      continue;
    }
    if (isLive) {
      claimed.add(`${r.kind}\0${r.id}`);
      out.push(entry);
      notes.push(`${who}: the interrupted create of id ${r.id} went through`);
      continue;
    }
    const byIdentity = r.kind === 'Webhook' && r.identity !== undefined;
    const identity = byIdentity ? recordedWebhookIdentity(r.identity!, state.fingerprintKey) : undefined;
    // Live before the intent was recorded (another's webhook of the same name and url): never what the create made.
    const before = new Set(r.preexisting ?? []);
    const found =
      r.key === undefined
        ? []
        : (refs.byKey.get(r.key) ?? [])
            .filter((l) => (!byIdentity || l.identity === identity) && !before.has(l.id) && !claimed.has(`${r.kind}\0${l.id}`))
            .sort(byId);
    const hit = found[0];
    const heldUntil = hit ? undefined : heldCreate(r, now);
    if (hit) {
      claimed.add(`${r.kind}\0${hit.id}`);
      const copies = byIdentity ? found.slice(1).filter((l) => l.createdBy === hit.createdBy).map((l) => l.id) : [];
      for (const id of copies) claimed.add(`${r.kind}\0${id}`);
      out.push({ ...entry, id: hit.id, ...foundIdentity(r), ...(copies.length ? { copies } : {}) });
      notes.push(`${who}: the interrupted create went through; found id ${hit.id} by ${r.key}${copies.length ? ` (and copies ${copies.join(', ')} it made)` : ''}`);
    } else if (heldUntil !== undefined) {
      // (kept whole, still pending: the planner blocks the create until it is listed or the hold has passed)
      out.push(r);
      notes.push(`${who}: the create sent at ${r.updatedAt} is not listed yet; kept pending until ${heldUntil}`);
    } else {
      notes.push(`${who}: the interrupted create never landed; entry removed`);
    }
  }
  return { state: { ...state, resources: out }, notes };
}
