/** Persisted form of the webhook state (for `--data FILE`): plain JSON, secrets included. */
import type { HistoryStore } from './dispatcher.js';
import type { WebhookStore } from './store.js';
import type { HistoryRecord, StoredWebhook } from './types.js';
import { isPlainObject } from '../../util/object.js';

export interface WebhookSnapshot {
  version: 1;
  nextWebhookId: number;
  nextHistoryId: number;
  nextActivityId: number;
  webhooks: StoredWebhook[];
  history: HistoryRecord[];
}

export function toSnapshot(store: WebhookStore, history: HistoryStore, nextActivityId: number): WebhookSnapshot {
  return {
    version: 1,
    nextWebhookId: store.nextId,
    nextHistoryId: history.nextId,
    nextActivityId,
    webhooks: [...store.all()].map((w) => ({ ...w, notificationType: [...w.notificationType] })),
    history: history.records.map((r) => structuredClone(r)),
  };
}

function validWebhook(w: unknown): w is StoredWebhook {
  return (
    isPlainObject(w) &&
    Number.isSafeInteger(w.id) &&
    typeof w.url === 'string' &&
    typeof w.name === 'string' &&
    typeof w.global === 'boolean' &&
    Array.isArray(w.notificationType) &&
    Number.isSafeInteger(w.createdBy)
  );
}

function validRecord(r: unknown): r is HistoryRecord {
  return (
    isPlainObject(r) &&
    Number.isSafeInteger(r.id) &&
    Number.isSafeInteger(r.webhooksId) &&
    isPlainObject(r.request) &&
    Number.isSafeInteger(r.statusCode) &&
    // the next activity id is counted from these (one missing made every later event's id NaN, sent as null)
    Number.isSafeInteger(r.webhooksActivityId) &&
    typeof r.notificationType === 'string' &&
    typeof r.createdAt === 'string'
  );
}

export function fromSnapshot(data: unknown): WebhookSnapshot {
  if (data === undefined || data === null) {
    return { version: 1, nextWebhookId: 1, nextHistoryId: 1, nextActivityId: 1, webhooks: [], history: [] };
  }
  if (!isPlainObject(data) || data.version !== 1 || !Array.isArray(data.webhooks) || !Array.isArray(data.history)) {
    throw new Error('webhook state: expected { version: 1, webhooks: [...], history: [...] }');
  }
  const bad = data.webhooks.findIndex((w) => !validWebhook(w));
  if (bad >= 0) throw new Error(`webhook state: webhooks[${bad}] is malformed`);
  const badR = data.history.findIndex((r) => !validRecord(r));
  if (badR >= 0) throw new Error(`webhook state: history[${badR}] is malformed`);
  const num = (v: unknown): number => (Number.isSafeInteger(v) ? (v as number) : 1);
  return {
    version: 1,
    nextWebhookId: num(data.nextWebhookId),
    nextHistoryId: num(data.nextHistoryId),
    nextActivityId: num(data.nextActivityId),
    webhooks: data.webhooks as StoredWebhook[],
    history: (data.history as HistoryRecord[]).map((r) => ({ ...r, global: r.global === true })),
  };
}
