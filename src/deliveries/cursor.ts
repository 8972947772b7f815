/**
 * Incremental reading of the delivery history: each poll returns only records not returned before,
 * reading pages newest first (createdAt desc, the interface's default) and stopping at the first record
 * that is both known (read by an earlier poll) and older than the newest record seen minus an overlap
 * window. See docs/decisions.md ("Webhook delivery operations") for why this is correct while records
 * arrive between page requests.
 *
 * - Offset paging over a list that grows at the front: records arriving while we page push older ones
 *   to later pages, so a record may come twice (dropped by its key); none is skipped.
 * - A record can be listed after newer ones (a delivery is stamped when it starts and listed when it
 *   ends, up to the receiver deadline later). Every record above the known boundary that we have not
 *   read is new, whatever its time; the overlap window decides how far below the newest record the
 *   boundary lies, i.e. how late a record may be listed and still be found.
 * - Keys of every record read by the last poll are remembered, so the boundary is recognised even when
 *   a clock jumped: a record dated in the future cannot hide the records that follow it.
 * - Nothing relies on ids increasing or on the service's clock agreeing with ours.
 */
import type { ServiceApi } from '../api/client-types.js';
import type { WebhookHistoryRecord } from '../api/types.js';
import { DEFAULT_PAGE_SIZE, grewSince } from './reader.js';
import { HistoryOrderError, assertNewestFirst, recordKey, timeOf } from './records.js';

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
  /**
   * A page brought no record this poll had not read already (by record id): the service does not page by offset
   * (every request answers the same records), so the poll stopped there; records it never sent were not read.
   */
  unpaged: boolean;
}

export { HistoryOrderError };

export const DEFAULT_OVERLAP_MS = 60_000;

export class HistoryCursor {
  private readonly pageSize: number;
  private readonly overlapMs: number;
  private readonly maxPages: number;
  /** Newest createdAt seen (ms); undefined before the first poll that saw a dated record. */
  private newest: number | undefined;
  /** Keys of the records within the overlap window, with their time. */
  private readonly seen = new Map<string, number>();
  /** Keys of every record the last poll read (the known boundary lies among them). */
  private lastRead = new Set<string>();
  private polled = false;

  constructor(options: CursorOptions = {}) {
    this.pageSize = Math.max(1, Math.floor(options.pageSize ?? DEFAULT_PAGE_SIZE));
    this.overlapMs = Math.max(0, options.overlapMs ?? DEFAULT_OVERLAP_MS);
    this.maxPages = Math.max(1, Math.floor(options.maxPages ?? 100));
  }

  /** Records remembered to tell repeats apart (the overlap window and the last poll's pages). */
  get remembered(): number {
    return new Set([...this.seen.keys(), ...this.lastRead]).size;
  }

  async poll(api: Pick<ServiceApi, 'listWebhookHistory'>, signal?: AbortSignal): Promise<PollResult> {
    const baseline = !this.polled;
    let cutoff = this.newest === undefined ? undefined : this.newest - this.overlapMs;
    let newest = this.newest;
    const read = new Set<string>();
    const fresh: WebhookHistoryRecord[] = [];
    /**
     * Keys of this poll's new records (with their time, NaN without one): remembered in `seen` only once the poll
     * completes. A poll that fails on a later page returns nothing, so what its first pages found must stay news
     * for the next poll (remembered at once, it was never returned nor counted).
     */
    const added = new Map<string, number>();
    let requests = 0;
    let received = 0;
    let truncated = false;
    let unpaged = false;
    let offset = 0;
    let lastCount: number | undefined;
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
      assertNewestFirst(page.records, '; incremental polling needs sortField=createdAt&sortOrder=desc');
      let boundary = false;
      const before = read.size;
      for (const r of page.records) {
        const key = recordKey(r);
        read.add(key);
        if (boundary) continue; // the rest of the boundary page: remembered, not news
        const t = timeOf(r);
        if (Number.isFinite(t)) cutoff ??= t - this.overlapMs; // first poll: the window hangs from the newest record there is
        const known = this.seen.has(key) || this.lastRead.has(key) || added.has(key);
        const old = cutoff !== undefined && Number.isFinite(t) && t < cutoff;
        if (old && (known || baseline)) {
          boundary = true;
          continue;
        }
        if (known) continue;
        added.set(key, t);
        if (Number.isFinite(t)) {
          if (newest === undefined || t > newest) newest = t;
        } else newest ??= Date.now();
        fresh.push(r);
      }
      if (boundary || page.records.length === 0) break;
      offset += page.records.length;
      if (page.count !== undefined && offset >= page.count) break;
      // Nothing this poll had not read: the service ignores the offset (100 requests a poll otherwise), unless the
      // history grew since the previous page (grewSince: a shift).
      const shift = grewSince(page.count, lastCount);
      lastCount = page.count ?? lastCount;
      if (read.size === before && !shift) {
        unpaged = true;
        break;
      }
    }
    this.completed(read, added, newest);
    return { records: fresh, baseline, requests, received, truncated, unpaged };
  }

  /** A poll read to its end: what it read and found becomes what the next poll knows. */
  private completed(read: Set<string>, added: ReadonlyMap<string, number>, newest: number | undefined): void {
    this.polled = true;
    this.newest = newest;
    this.lastRead = read;
    // A record without a date is never older than the boundary: every poll reads it again while it is within the
    // pages read, so the last poll's keys (`lastRead`) recognise it. Kept in `seen` it would be kept forever (no time
    // to forget it by): memory growing with every record a service that omits createdAt ever sent.
    for (const [key, t] of added) if (Number.isFinite(t)) this.seen.set(key, t);
    if (newest !== undefined) {
      const forget = newest - this.overlapMs;
      for (const [key, at] of this.seen) if (at < forget) this.seen.delete(key);
    }
  }
}
