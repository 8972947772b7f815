/**
 * A webhook's pending create that is held (pure): sent, no answer, not listed by the service yet (plan/pending.ts keeps
 * it pending, plan/adoption.ts blocks the manifest's create meanwhile).
 */
import type { ManagedResource } from '../state/types.js';

/**
 * How long a webhook's pending create (sent, no answer) that the service does not list yet is kept pending rather than
 * taken for "never landed": the service may list a new webhook late, and nothing in it refuses a second webhook of the
 * same name and url, so a create sent again while the first is not listed yet made a duplicate owned by no one. Once
 * this has passed since the intent was recorded, the create is planned again. (Integrations and data sources are
 * unique in the service: a second create of the same one is refused with 409, never a duplicate.)
 */
export const WEBHOOK_CREATE_HOLD_MS = 120_000;

/** A webhook's pending create recorded less than WEBHOOK_CREATE_HOLD_MS before `now` (undefined: no clock given). */
export function heldCreate(r: ManagedResource, now: number | undefined): string | undefined {
  if (now === undefined || r.kind !== 'Webhook' || r.pending !== 'create') return undefined;
  const at = Date.parse(r.updatedAt);
  if (!Number.isFinite(at) || now - at >= WEBHOOK_CREATE_HOLD_MS || now < at - WEBHOOK_CREATE_HOLD_MS) return undefined;
  return new Date(at + WEBHOOK_CREATE_HOLD_MS).toISOString();
}

