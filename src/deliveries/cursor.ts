/**
 * Incremental reading of the delivery history: each poll returns only records not returned before,
 * reading pages newest first and stopping at the first page that reaches records older than the
 * previous poll's newest record minus an overlap window. See docs/decisions.md ("Webhook delivery
 * operations") for why this is correct while records arrive between page requests.
 *
 * - The interface pages by offset over a list sorted by createdAt, newest first. Records arriving
 *   while we page push older ones towards later pages: a record may show up twice (dropped by id),
 *   none is skipped.
 * - A record can appear in the history after newer ones (a delivery is stamped when it starts and
 *   listed when it ends, up to the receiver deadline later). Records created up to `overlapMs`
 *   before the newest one seen are re-read on every poll and told apart by id, so such late records
 *   are still found as long as they are listed within the overlap.
 * - Nothing relies on ids being increasing or on the service's clock agreeing with ours.
 */
import type { ServiceApi } from '../api/client-types.js';
import type { WebhookHistoryRecord } from '../api/types.js';
import { DEFAULT_PAGE_SIZE } from './reader.js';
import { recordKey, timeOf } from './records.js';

export interface CursorOptions {
  pageSize?: number;
  /** How far before the newest record seen a late record may still be created. Default 60 s. */
  overlapMs?: number;
  /** Requests per poll at most (the rest of a huge burst is not read). Default 100. */
  maxPages?: number;
}

export interface PollResult {
  /** Records not returned by an earlier poll, newest first. */
  records: WebhookHistoryRecord[];
  /** The first poll: the records are recent history (within the overlap of the newest), not news. */
  baseline: boolean;
  requests: number;
  /** Records received, repeats included. */
  received: number;
  /** maxPages stopped the poll before it reached known records: older new records were not read. */
  truncated: boolean;
}

/** The service does not list its history newest first: incremental reading cannot work. */
export class HistoryOrderError extends Error {
  override readonly name = 'HistoryOrderError';
}

export const DEFAULT_OVERLAP_MS = 60_000;

export class HistoryCursor {
  private readonly pageSize: number;
  private readonly overlapMs: number;
  private readonly maxPages: number;
  /** Newest createdAt seen (ms); undefined before the first poll that saw a dated record. */
  private newest: number | undefined;
  /** Keys of the records within the overlap window, with their time. */
  private readonly seen = new Map<string, number>();
  private polled = false;

  constructor(options: CursorOptions = {}) {
    this.pageSize = Math.max(1, Math.floor(options.pageSize ?? DEFAULT_PAGE_SIZE));
    this.overlapMs = Math.max(0, options.overlapMs ?? DEFAULT_OVERLAP_MS);
    this.maxPages = Math.max(1, Math.floor(options.maxPages ?? 100));
  }

  /** Records remembered to tell repeats apart (those within the overlap window). */
  get remembered(): number {
    return this.seen.size;
  }

  async poll(api: Pick<ServiceApi, 'listWebhookHistory'>, signal?: AbortSignal): Promise<PollResult> {
    const baseline = !this.polled;
    let cutoff = this.newest === undefined ? undefined : this.newest - this.overlapMs;
    let newest = this.newest;
    const fresh: WebhookHistoryRecord[] = [];
    let requests = 0;
    let received = 0;
    let truncated = false;
    let offset = 0;
    for (;;) {
      if (requests >= this.maxPages) {
        truncated = true;
        break;
      }
      signal?.throwIfAborted();
      const page = await api.listWebhookHistory({
        offset,
        pageSize: this.pageSize,
        sortField: 'createdAt',
        sortOrder: 'desc',
        includeGlobal: true,
        includeUser: true,
      });
      requests++;
      received += page.records.length;
      let reachedKnown = false;
      let previous = Number.POSITIVE_INFINITY;
      for (const r of page.records) {
        const t = timeOf(r);
        if (Number.isFinite(t)) {
          if (t > previous) {
            throw new HistoryOrderError(
              `the webhook history is not sorted newest first (record ${r.id} at ${r.createdAt} after an older one); ` +
                'incremental polling needs sortField=createdAt&sortOrder=desc',
            );
          }
          previous = t;
          // First poll: the window is set by the newest record there is.
          cutoff ??= t - this.overlapMs;
          if (t < cutoff) {
            reachedKnown = true;
            break; // newest first: the rest of the page is older still
          }
        }
        const key = recordKey(r);
        if (this.seen.has(key)) continue;
        const at = Number.isFinite(t) ? t : (newest ?? Date.now());
        this.seen.set(key, at);
        if (newest === undefined || at > newest) newest = at;
        fresh.push(r);
      }
      if (reachedKnown || page.records.length === 0) break;
      offset += page.records.length;
      if (page.count !== undefined && offset >= page.count) break;
    }
    this.polled = true;
    this.newest = newest;
    if (newest !== undefined) {
      const forget = newest - this.overlapMs;
      for (const [key, at] of this.seen) if (at < forget) this.seen.delete(key);
    }
    return { records: fresh, baseline, requests, received, truncated };
  }
}
