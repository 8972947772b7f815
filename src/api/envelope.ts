/**
 * Lists in the bodies the interface does not pin down (GET /webhooks "returns webhook objects", the data-source
 * list, the webhook history's `{ count, records }`): one reading for all of them. A body is a bare array, or an
 * object holding the list under the resource's own name (`webhooks`, `dataSources`) or a generic key (`records`,
 * `items`, `data`, `results`, `hits`), with an optional total (`count`). A body holding no list is never read as
 * an empty one: the caller reports it (an empty list means "nothing is live", which a plan prunes by).
 */
import { ApiError } from '../errors.js';
import { isPlainObject } from '../util/object.js';

/** Generic keys of a list envelope, after the resource's own name. */
export const ENVELOPE_KEYS = ['records', 'items', 'data', 'results', 'hits'] as const;

/** A count the wire sends as a number or a numeric string; undefined when absent or unreadable. */
export function countOf(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.floor(v);
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) return Number(v.trim());
  return undefined;
}

export interface ListBody {
  items: unknown[];
  /** The envelope's `count`, when it gives one. */
  count?: number;
}

/**
 * The list a body holds (see the module comment), with the envelope's count; undefined when it holds none.
 * `own`: the resource's own names for the list, tried first.
 */
export function listIn(v: unknown, own: readonly string[] = []): ListBody | undefined {
  if (Array.isArray(v)) return { items: v };
  if (!isPlainObject(v)) return undefined;
  for (const k of [...own, ...ENVELOPE_KEYS]) {
    const items = v[k];
    if (!Array.isArray(items)) continue;
    const count = countOf(v.count);
    return count === undefined ? { items } : { items, count };
  }
  return undefined;
}

/**
 * The whole list of a collection govops reconciles (webhooks, data sources): as `listIn`, and an error when the
 * body holds none, or when its `count` says it is one page of a longer list (a page taken for the whole list
 * would make everything past it look gone: planned as creates, pruned from the state).
 */
export function wholeList(v: unknown, own: readonly string[], what: string, method: string, path: string): unknown[] {
  const list = listIn(v, own);
  if (!list) {
    const got = v === null ? 'null' : isPlainObject(v) ? `an object without a list (keys: ${Object.keys(v).slice(0, 10).join(', ') || 'none'})` : typeof v;
    throw new ApiError(200, 'Invalid response', `expected a list of ${what} (an array, or an object holding one under ${[...own, ...ENVELOPE_KEYS].join(', ')}), got ${got}`, method, path, v);
  }
  if (list.count !== undefined && list.count > list.items.length) {
    throw new ApiError(
      200,
      'Invalid response',
      `the list of ${what} holds ${list.items.length} of ${list.count} (count): one page of a paged list, which govops cannot read whole`,
      method,
      path,
      undefined,
    );
  }
  return list.items;
}
