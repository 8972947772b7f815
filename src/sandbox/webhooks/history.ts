/**
 * Delivery history (interface 2.13, GET /webhooks/history): storage, query parsing and the pure
 * filter / sort / page of a query.
 */
import { ALL_NOTIFICATIONS, isEventName } from '../../service/events.js';
import { HttpError, type Caller } from '../http.js';
import type { HistoryRecord } from './types.js';

export const SORT_FIELDS = [
  'id',
  'createdAt',
  'updatedAt',
  'statusCode',
  'notificationType',
  'webhooksActivityId',
  'webhooksId',
  'name',
  'url',
] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 10_000;

export interface HistoryQuery {
  offset: number;
  pageSize: number;
  sortField: SortField;
  sortOrder: 'asc' | 'desc';
  notificationType?: string;
  includeGlobal: boolean;
  includeUser: boolean;
  successOrFailure?: 'success' | 'failure';
}

const KNOWN_PARAMS = new Set([
  'offset',
  'pageSize',
  'sortField',
  'sortOrder',
  'notificationType',
  'includeGlobal',
  'includeUser',
  'successOrFailure',
]);

function intParam(q: URLSearchParams, name: string, min: number, max: number, dflt: number): number {
  const raw = q.get(name);
  if (raw === null) return dflt;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new HttpError(400, `query parameter "${name}" must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function boolParam(q: URLSearchParams, name: string, dflt: boolean): boolean {
  const raw = q.get(name);
  if (raw === null) return dflt;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new HttpError(400, `query parameter "${name}" must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(q: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const raw = q.get(name);
  if (raw === null) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new HttpError(400, `query parameter "${name}" must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** Parse and validate the query string; throws HttpError(400) on a bad value or unknown parameter. */
export function parseHistoryQuery(q: URLSearchParams): HistoryQuery {
  for (const key of q.keys()) {
    if (!KNOWN_PARAMS.has(key)) throw new HttpError(400, `unknown query parameter "${key}"; known: ${[...KNOWN_PARAMS].join(', ')}`);
  }
  const notificationType = q.get('notificationType') ?? undefined;
  if (notificationType !== undefined && notificationType !== ALL_NOTIFICATIONS && !isEventName(notificationType)) {
    throw new HttpError(400, `query parameter "notificationType" is not a known event name: "${notificationType}"`);
  }
  const query: HistoryQuery = {
    offset: intParam(q, 'offset', 0, Number.MAX_SAFE_INTEGER, 0),
    pageSize: intParam(q, 'pageSize', 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
    sortField: oneOf(q, 'sortField', SORT_FIELDS) ?? 'createdAt',
    sortOrder: oneOf(q, 'sortOrder', ['asc', 'desc'] as const) ?? 'desc',
    includeGlobal: boolParam(q, 'includeGlobal', false),
    includeUser: boolParam(q, 'includeUser', true),
  };
  // ALL_NOTIFICATIONS as a filter means "no filter".
  if (notificationType !== undefined && notificationType !== ALL_NOTIFICATIONS) query.notificationType = notificationType;
  const sf = oneOf(q, 'successOrFailure', ['success', 'failure'] as const);
  if (sf) query.successOrFailure = sf;
  return query;
}

export function isSuccess(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}

/**
 * Records a query selects (interface 4.3): `includeUser` (default true) returns the records of the
 * caller's own personal (non-global) webhooks — for administrators too; `includeGlobal` (default false)
 * adds the records of global webhooks, which administrators see all of and other users only of their own.
 */
export function selects(caller: Pick<Caller, 'role' | 'userId'>, q: HistoryQuery, r: HistoryRecord): boolean {
  if (r.global) {
    if (!q.includeGlobal) return false;
    if (caller.role !== 'admin' && r.createdBy !== caller.userId) return false;
  } else if (!q.includeUser || r.createdBy !== caller.userId) return false;
  if (q.notificationType !== undefined && r.notificationType !== q.notificationType) return false;
  if (q.successOrFailure === 'success' && !isSuccess(r.statusCode)) return false;
  if (q.successOrFailure === 'failure' && isSuccess(r.statusCode)) return false;
  return true;
}

function compare(a: HistoryRecord, b: HistoryRecord, field: SortField): number {
  const x = a[field];
  const y = b[field];
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
}

/** The records a query selects, sorted (ties broken by id in the same direction): every page of it. */
export function selectHistory(records: readonly HistoryRecord[], caller: Pick<Caller, 'role' | 'userId'>, q: HistoryQuery): HistoryRecord[] {
  const hits = records.filter((r) => selects(caller, q, r));
  const dir = q.sortOrder === 'asc' ? 1 : -1;
  hits.sort((a, b) => dir * (compare(a, b, q.sortField) || a.id - b.id));
  return hits;
}

/** What selects the same records in the same order, whatever the page (the key of a selection kept between pages). */
export function selectionKey(caller: Pick<Caller, 'role' | 'userId'>, q: HistoryQuery): string {
  return JSON.stringify([caller.role, caller.userId, q.sortField, q.sortOrder, q.notificationType, q.includeGlobal, q.includeUser, q.successOrFailure]);
}

/** Filter, sort and page. */
export function queryHistory(
  records: readonly HistoryRecord[],
  caller: Pick<Caller, 'role' | 'userId'>,
  q: HistoryQuery,
): { count: number; records: HistoryRecord[] } {
  return page(selectHistory(records, caller, q), q);
}

export function page(hits: readonly HistoryRecord[], q: HistoryQuery): { count: number; records: HistoryRecord[] } {
  return { count: hits.length, records: hits.slice(q.offset, q.offset + q.pageSize) };
}

/** The wire shape of a record (2.13): everything but the internal `global` flag. */
export function wireRecord(r: HistoryRecord): Omit<HistoryRecord, 'global'> {
  const { global: _global, ...rest } = r;
  void _global;
  return rest;
}
