/**
 * Pure facts about delivery records (interface 2.13): success, failure code, the delivery a record
 * belongs to, its time. Shared by the CLI (`govops webhooks`) and the daemon's health polling.
 */
import type { WebhookHistoryRecord } from '../api/types.js';

/**
 * The service does not list its history newest first (it ignores `sortOrder=desc`): neither incremental polling nor
 * a read that stops at `--since` can work.
 */
export class HistoryOrderError extends Error {
  override readonly name = 'HistoryOrderError';
}

/** The first record of `page` dated after an earlier one (the page is not newest first), if any. */
export function outOfOrder(page: readonly WebhookHistoryRecord[]): WebhookHistoryRecord | undefined {
  let previous = Number.POSITIVE_INFINITY;
  for (const r of page) {
    const t = timeOf(r);
    if (!Number.isFinite(t)) continue;
    if (t > previous) return r;
    previous = t;
  }
  return undefined;
}

/**
 * Refuse a page that is not newest first: HistoryOrderError naming the first record out of order, then `tail` (what
 * the caller needed the order for).
 */
export function assertNewestFirst(page: readonly WebhookHistoryRecord[], tail: string): void {
  const late = outOfOrder(page);
  if (late) throw new HistoryOrderError(`the webhook history is not sorted newest first (record ${late.id} at ${late.createdAt} after an older one)${tail}`);
}

/** 2xx is a delivered notification (interface 2.13: "200 is success"; any 2xx is an answer the receiver accepted). */
export function isDelivered(r: Pick<WebhookHistoryRecord, 'statusCode'>): boolean {
  return r.statusCode >= 200 && r.statusCode < 300;
}

/** What went wrong: the response code the service recorded (ESOCKETTIMEDOUT...), else `HTTP <status>`. */
export function failureCode(r: Pick<WebhookHistoryRecord, 'statusCode' | 'responseCode'>): string {
  return r.responseCode ?? `HTTP ${r.statusCode}`;
}

/** Milliseconds since the epoch of `createdAt`; NaN when missing or unreadable. */
export function timeOf(r: Pick<WebhookHistoryRecord, 'createdAt'>): number {
  return r.createdAt === '' ? NaN : Date.parse(r.createdAt);
}

/** A key for one record, also when the service sent no id. */
export function recordKey(r: WebhookHistoryRecord): string {
  return r.id !== '' ? r.id : `~${r.webhookId}|${r.webhooksActivityId}|${r.createdAt}|${r.statusCode}`;
}

/** JSON with object keys sorted at every level: one text for one value, whatever order the service wrote. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The delivery a record belongs to: one event (`webhooksActivityId`) to one webhook. A retry of a record keeps its
 * activity id (sandbox; the interface is silent), so the original and its retries share this key and the newest of
 * them tells whether the notification got through. A record without an activity id (a service that omits it) is
 * grouped by what a retry re-sends (4.3: the record's `request`): its webhook, event name, `text` and `metadata`.
 * Two events whose payloads are the same are then one delivery (the receiver cannot tell them apart either, and
 * processes a retry's same payload idempotently). A record without activity id and without a payload (no `text`, no
 * `metadata`) belongs to no delivery govops can find: `undefined`, and it is never retried but by its id.
 */
export function deliveryKey(r: WebhookHistoryRecord): string | undefined {
  if (r.webhooksActivityId !== '') return `${r.webhookId}:${r.webhooksActivityId}`;
  const { text, metadata } = r.request;
  if (text === undefined && metadata === undefined) return undefined;
  return `${r.webhookId}~${canonical([r.notificationType, text ?? null, metadata ?? null])}`;
}

/** Newest first by createdAt, then by id (numeric when both are), as the service sorts by default. */
export function newestFirst(a: WebhookHistoryRecord, b: WebhookHistoryRecord): number {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (ta !== tb && Number.isFinite(ta) && Number.isFinite(tb)) return tb - ta;
  const na = Number(a.id);
  const nb = Number(b.id);
  if (Number.isFinite(na) && Number.isFinite(nb) && a.id !== '' && b.id !== '') return nb - na;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export interface FailedDelivery {
  /** The newest record of the delivery (a failure): the one to retry. */
  record: WebhookHistoryRecord;
  /** How many failed records the delivery has among those read. */
  failures: number;
}

/**
 * Deliveries whose newest record (among `records`) is a failure, oldest delivery first — the ones
 * still to replay. A delivery that got through on a later retry is left out, so it is never sent
 * twice; each delivery is listed once however often it failed. A failed record of no delivery (`deliveryKey`
 * undefined: a retry of it may have got through since) is left out too, and pushed to `ungrouped`.
 */
export function failedDeliveries(records: Iterable<WebhookHistoryRecord>, ungrouped: WebhookHistoryRecord[] = []): FailedDelivery[] {
  const newest = new Map<string, { record: WebhookHistoryRecord; failures: number }>();
  for (const r of records) {
    const key = deliveryKey(r);
    if (key === undefined) {
      if (!isDelivered(r)) ungrouped.push(r);
      continue;
    }
    const seen = newest.get(key);
    const failures = (seen?.failures ?? 0) + (isDelivered(r) ? 0 : 1);
    if (!seen || newestFirst(r, seen.record) < 0) newest.set(key, { record: r, failures });
    else seen.failures = failures;
  }
  return [...newest.values()].filter((d) => !isDelivered(d.record)).sort((a, b) => newestFirst(b.record, a.record));
}
