/**
 * Lazy paging through GET /webhooks/history (interface 4.3): offset/pageSize, newest first
 * (`sortField=createdAt&sortOrder=desc`, the documented default, sent explicitly). Pages are requested
 * only while the consumer wants more records, so `--limit 20` is one request.
 */
import { ApiError } from '../errors.js';
import type { ServiceApi } from '../api/client-types.js';
import type { WebhookHistoryQuery, WebhookHistoryRecord } from '../api/types.js';
import { assertNewestFirst, isDelivered, recordKey, timeOf } from './records.js';

/** Page size when reading many records (the interface's default is 20; its maximum is not shown). */
export const DEFAULT_PAGE_SIZE = 100;
/**
 * Pages read at most by default (100,000 records at the default page size): a service that never ends its history
 * (a page never empty, records without a date that `since` cannot stop at) is not read forever.
 */
export const DEFAULT_MAX_PAGES = 1000;

export type HistoryFilters = Pick<WebhookHistoryQuery, 'notificationType' | 'includeGlobal' | 'includeUser' | 'successOrFailure'>;

export interface ReadOptions {
  /** Server-side filters; `successOrFailure` and `notificationType` are also checked on every record. */
  filters?: HistoryFilters;
  pageSize?: number;
  /** Stop after this many matching records. */
  limit?: number;
  /** Stop at the first record created before this time (ms since the epoch). */
  sinceMs?: number;
  /** Client-side filter (e.g. one webhook: the interface has no webhook filter). */
  match?: (r: WebhookHistoryRecord) => boolean;
  /** Safety net: stop after this many requests. */
  maxPages?: number;
  signal?: AbortSignal;
  /** Called once when the service refused `successOrFailure` (400) and it is filtered here instead. */
  onFilterFallback?: (err: ApiError) => void;
}

/** What a read cost and found; filled in while iterating. */
export interface ReadStats {
  requests: number;
  /** `count` of the first page (all records matching the server-side filters), when the service sent one. */
  count?: number;
  /** Records received (before client-side filtering). */
  received: number;
  /** True when the history was read to its end (not stopped by limit, since or maxPages). */
  exhausted: boolean;
  /** True when maxPages stopped the read. */
  truncated: boolean;
  /**
   * True when a page brought no record not already read (by record id) and the read stopped there: the service
   * does not page by offset (it answers every request with the same records, e.g. its whole history as a bare
   * array without a count). What it never sent was not read.
   */
  unpaged?: boolean;
  /**
   * Records left out because they have no date (a service that omits `createdAt`) while a `since` was given: they
   * cannot be placed in the window, and taken as recent they made `retry --failed --since 24h` replay deliveries of
   * any age.
   */
  undated?: number;
}

function matchesFilters(r: WebhookHistoryRecord, f: HistoryFilters): boolean {
  if (f.successOrFailure === 'success' && !isDelivered(r)) return false;
  if (f.successOrFailure === 'failure' && isDelivered(r)) return false;
  if (f.notificationType !== undefined && f.notificationType !== 'ALL_NOTIFICATIONS' && r.notificationType !== '' && r.notificationType !== f.notificationType) return false;
  return true;
}

/**
 * The history's `count` grew since the previous page: a page of records already read is then a shift (a page of
 * deliveries arrived between two requests), not a service that ignores the offset; the records further on remain.
 */
export function grewSince(count: number | undefined, previous: number | undefined): boolean {
  return count !== undefined && previous !== undefined && count > previous;
}

/** Where a record lies relative to `since`; one without a date is counted (once) in `stats.undated`. */
function window(r: WebhookHistoryRecord, key: string, sinceMs: number, undated: Set<string>, stats: ReadStats): 'in' | 'before' | 'undated' {
  const t = timeOf(r);
  if (t < sinceMs) return 'before';
  if (!Number.isNaN(t)) return 'in';
  undated.add(key);
  stats.undated = undated.size;
  return 'undated';
}

/**
 * Yield matching records newest first, requesting pages lazily. Records that arrive while paging shift
 * the pages by their number: a record may then come twice (it is yielded once, by its key: the id, else webhook,
 * activity, time and status); none is skipped,
 * since newer records only go to the front. A page holding only records already read ends the read
 * (`stats.unpaged`): the service does not page by offset.
 */
export async function* readHistory(
  api: Pick<ServiceApi, 'listWebhookHistory'>,
  options: ReadOptions = {},
  stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false },
): AsyncGenerator<WebhookHistoryRecord, ReadStats, undefined> {
  const wanted: HistoryFilters = { ...options.filters };
  let serverSide: HistoryFilters = { ...wanted };
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? DEFAULT_PAGE_SIZE));
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const yielded = new Set<string>();
  /** Every record received (not only those yielded): a page of nothing else ends the read. */
  const received = new Set<string>();
  /** Records without a date left out because of `sinceMs` (each counted once, however often it is read). */
  const undated = new Set<string>();
  let matched = 0;
  let offset = 0;
  /** The history's `count` at the previous page (grewSince). */
  let lastCount: number | undefined;
  for (;;) {
    if (options.limit !== undefined && matched >= options.limit) return stats;
    if (stats.requests >= maxPages) {
      stats.truncated = true;
      return stats;
    }
    options.signal?.throwIfAborted();
    let page;
    try {
      page = await api.listWebhookHistory({ offset, pageSize, sortField: 'createdAt', sortOrder: 'desc', ...serverSide });
    } catch (err) {
      stats.requests++;
      // successOrFailure's values are not shown in the interface: if the service refuses ours, filter here.
      if (err instanceof ApiError && err.statusCode === 400 && serverSide.successOrFailure !== undefined && offset === 0) {
        options.onFilterFallback?.(err);
        const { successOrFailure: _dropped, ...rest } = serverSide;
        void _dropped;
        serverSide = rest;
        stats.count = undefined;
        continue;
      }
      throw err;
    }
    stats.requests++;
    // `count` of a fallback read counts failures and successes alike: not what the caller asked for.
    if (stats.count === undefined && page.count !== undefined && serverSide.successOrFailure === wanted.successOrFailure) stats.count = page.count;
    stats.received += page.records.length;
    // Oldest first (a service that ignores sortOrder=desc), the read would stop at its first record when --since is
    // given (nothing to retry, silently) and show the oldest records as the newest: refused, as the daemon's cursor does.
    assertNewestFirst(page.records, ': the service ignored sortField=createdAt&sortOrder=desc; govops reads it newest first');
    let fresh = false;
    for (const r of page.records) {
      const key = recordKey(r);
      if (!received.has(key)) {
        received.add(key);
        fresh = true;
      }
      const place = options.sinceMs === undefined ? 'in' : window(r, key, options.sinceMs, undated, stats);
      if (place === 'before') return stats;
      if (place === 'undated') continue;
      if (yielded.has(key)) continue;
      if (!matchesFilters(r, wanted) || (options.match && !options.match(r))) continue;
      yielded.add(key);
      matched++;
      yield r;
      if (options.limit !== undefined && matched >= options.limit) return stats;
    }
    offset += page.records.length;
    if (page.records.length === 0 || (page.count !== undefined && offset >= page.count)) {
      stats.exhausted = true;
      return stats;
    }
    const shift = grewSince(page.count, lastCount);
    lastCount = page.count ?? lastCount;
    // A service that ignores the offset answers every page with the records already read (a bare array without a
    // count never says where the history ends): without this, 1,000 requests for 3 records. Not after a shift.
    if (!fresh && !shift) {
      stats.unpaged = true;
      return stats;
    }
  }
}
