/**
 * Wire handling of the webhook delivery endpoints (interface 4.3): the history query string, and
 * history pages, records and the actions list normalised to src/api/types.ts shapes. Lenient on
 * purpose: `count` may be a number or a string, ids numbers or strings, fields may be missing.
 */
import { ApiError } from '../errors.js';
import { listIn } from './envelope.js';
import { idString } from './normalize.js';

export { countOf } from './envelope.js';
import type { WebhookHistoryPage, WebhookHistoryQuery, WebhookHistoryRecord } from './types.js';
import { isPlainObject } from '../util/object.js';

type Obj = Record<string, unknown>;

const QUERY_ORDER: ReadonlyArray<keyof WebhookHistoryQuery> = [
  'offset',
  'pageSize',
  'sortField',
  'sortOrder',
  'notificationType',
  'includeGlobal',
  'includeUser',
  'successOrFailure',
];

/** `?offset=0&pageSize=100...` for the given fields (undefined ones are left out). */
export function historyQueryString(q: WebhookHistoryQuery): string {
  const params = new URLSearchParams();
  for (const key of QUERY_ORDER) {
    const v = q[key];
    if (v !== undefined) params.set(key, String(v));
  }
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

function optString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** Below this an epoch number is seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const EPOCH_SECONDS_BELOW = 1e11;

/**
 * A timestamp (2.13 types it `timestamp`, the format not shown) as an ISO 8601 string: ISO text as it is; an epoch
 * number, or a string of one, as the time it names (milliseconds as a Java service's Jackson writes dates by default,
 * seconds as PHP's `time()` or Python's `timestamp()` give them). Read as text it was no date at all: every record was
 * undated, so `--since` left them all out and each poll read the whole history again.
 */
function timestampFromWire(v: unknown): string | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(?:\.\d+)?\s*$/.test(v) ? Number(v) : undefined;
  if (n === undefined) return optString(v);
  const ms = n < EPOCH_SECONDS_BELOW ? n * 1000 : n;
  const date = new Date(ms);
  return Number.isFinite(date.getTime()) ? date.toISOString() : optString(v);
}

export function toHistoryRecord(v: unknown): WebhookHistoryRecord {
  const o = isPlainObject(v) ? v : {};
  const request = isPlainObject(o.request) ? o.request : {};
  const response = isPlainObject(o.response) ? o.response : {};
  const body = isPlainObject(response.body) ? response.body : {};
  const status = typeof o.statusCode === 'number' ? o.statusCode : Number(o.statusCode);
  const record: WebhookHistoryRecord = {
    id: idString(o.id),
    webhookId: idString(o.webhooksId ?? o.webhookId ?? request.webhookId),
    webhookName: optString(o.name) ?? optString(request.webhookName) ?? '',
    notificationType: optString(o.notificationType) ?? optString((request.metadata as Obj | undefined)?.notificationType) ?? '',
    statusCode: Number.isFinite(status) ? status : 0,
    webhooksActivityId: idString(o.webhooksActivityId),
    createdAt: timestampFromWire(o.createdAt) ?? '',
    request,
    response,
  };
  const code = optString(body.code);
  if (code !== undefined && code !== '') record.responseCode = code;
  if (typeof body.connect === 'boolean') record.connect = body.connect;
  const updatedAt = timestampFromWire(o.updatedAt);
  if (updatedAt !== undefined) record.updatedAt = updatedAt;
  const url = optString(o.url);
  if (url !== undefined) record.url = url;
  return record;
}

/**
 * A history page: `{ count, records }`. A bare array (a service that leaves out the envelope) is
 * read as the records without a count, another envelope (`items`, `data`...: api/envelope.ts) as `records`;
 * a body holding no list is an error, never an empty page (a poller would take it for "nothing new").
 */
export function toHistoryPage(v: unknown, method = 'GET', path = '/webhooks/history'): WebhookHistoryPage {
  const list = listIn(v);
  if (!list) {
    throw new ApiError(200, 'Invalid response', 'expected { count, records: [...] } from the webhook history', method, path, v);
  }
  const page: WebhookHistoryPage = { records: list.items.map(toHistoryRecord) };
  if (list.count !== undefined) page.count = list.count;
  return page;
}

/** GET /webhooks/actions: an array of strings (non-strings dropped); anything else is an error. */
export function toActions(v: unknown, method = 'GET', path = '/webhooks/actions'): string[] {
  if (!Array.isArray(v)) throw new ApiError(200, 'Invalid response', `expected an array of event names, got ${typeof v}`, method, path, v);
  return v.filter((x): x is string => typeof x === 'string');
}
