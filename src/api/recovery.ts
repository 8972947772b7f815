/**
 * After an ambiguous failure of a create (the request may have reached the service), the client looks
 * the resource up by its identity instead of re-sending blindly. These pure functions do the matching.
 */
import { naturalKey } from '../kinds/registry.js';
import type { IntegrationBody, LiveIntegration, LiveWebhook, WebhookInput } from './types.js';
import { webhookIdentity } from '../service/kinds.js';
import { appendTo } from '../util/multimap.js';
import { isPlainObject } from '../util/object.js';

/** The live integration a create of `body` would have made (same type and natural key). */
export function findCreatedIntegration(
  live: readonly LiveIntegration[],
  body: IntegrationBody,
): { hit?: LiveIntegration; key: string; count: number } {
  const key = naturalKey(body.type, body.config);
  const found = live.filter((i) => i.type === body.type && naturalKey(i.type, i.config) === key);
  return found.length === 1 ? { hit: found[0]!, key, count: 1 } : { key, count: found.length };
}

/**
 * Split a webhook batch into those already live (by identity: name and url, not yet claimed) and those still missing.
 * A live webhook of the name with another url is another's (a webhook's url cannot be edited): never taken for one sent.
 */
export function splitCreatedWebhooks(
  live: readonly LiveWebhook[],
  pending: readonly WebhookInput[],
  claimedIds: ReadonlySet<string>,
): { found: LiveWebhook[]; missing: WebhookInput[] } {
  const taken = new Set(claimedIds);
  const found: LiveWebhook[] = [];
  const missing: WebhookInput[] = [];
  const byIdentity = new Map<string, LiveWebhook[]>();
  for (const w of live) appendTo(byIdentity, webhookIdentity(w.name, w.url), w);
  for (const item of pending) {
    const hit = byIdentity.get(webhookIdentity(item.name, item.url))?.find((w) => !taken.has(w.id));
    if (hit) {
      taken.add(hit.id);
      found.push(hit);
    } else {
      missing.push(item);
    }
  }
  return { found, missing };
}

/**
 * A webhook item error answering a request of `sent` (a part of `items`), its `index` made the position in `items`;
 * an index naming no sent item is dropped (the error is then matched by its name, or to none).
 */
export function webhookErrorAt(e: unknown, sent: readonly WebhookInput[], items: readonly WebhookInput[]): unknown {
  if (!isPlainObject(e) || typeof e.index !== 'number') return e;
  const item = sent[e.index];
  const at = item === undefined ? -1 : items.indexOf(item);
  if (at >= 0) return { ...e, index: at };
  const { index: _index, ...rest } = e;
  void _index;
  return rest;
}
