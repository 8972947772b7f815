/**
 * A pending create that is held (pure): sent, no answer, not listed by the service yet. plan/pending.ts keeps it
 * pending; for a webhook, plan/adoption.ts blocks the manifest's create meanwhile.
 */
import type { ManagedResource } from '../state/types.js';

/**
 * How long a pending create (sent, no answer) that the service does not list yet is kept pending rather than taken for
 * "never landed": the service may list a new item late (sandbox behaviour `list-lag`).
 * - A webhook: nothing in the service refuses a second one of the same name and url, so a create sent again while the
 *   first was not listed yet made a duplicate owned by no one: its create is blocked until it is listed or this has
 *   passed (then planned again).
 * - An integration: a second create is refused (409, one per natural key), so its create is planned as usual (one
 *   never sent, as many intents saved while their writes waited for a slot when the run was killed, is sent at once),
 *   but the intent is kept: dropped, the run after the refused create found govops' own integration by natural key as
 *   someone else's (adopted, or blocked for good under `--no-adopt`).
 * Data sources: the interface shows no list of them that lags; their intents are not held.
 */
export const WEBHOOK_CREATE_HOLD_MS = 120_000;

/** A webhook's or integration's pending create recorded less than WEBHOOK_CREATE_HOLD_MS before `now` (undefined: no clock given). */
export function heldCreate(r: ManagedResource, now: number | undefined): string | undefined {
  if (now === undefined || r.kind === 'DataSource' || r.pending !== 'create') return undefined;
  const at = Date.parse(r.updatedAt);
  if (!Number.isFinite(at) || now - at >= WEBHOOK_CREATE_HOLD_MS || now < at - WEBHOOK_CREATE_HOLD_MS) return undefined;
  return new Date(at + WEBHOOK_CREATE_HOLD_MS).toISOString();
}

