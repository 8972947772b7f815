/**
 * Reading data-source bodies (interface 2.3 gives the create response `dataSourceId`, `prefix`,
 * `dataSourceName`; the list and delete bodies are not shown). Every plausible shape is read: a bare
 * array, or an object holding one (`dataSources`, or a generic key: api/envelope.ts); flat records
 * (`dataSourceId` or `id`, `dataSourceName` or `name`, `prefix`, `integrationId`) or handler metadata
 * (`{ id, metadata: { prefix, integrationId, dataSourceName } }`); ids as numbers or strings; unknown
 * fields ignored; a name sent as a number is its digits. A record marked `deleted: true` is a soft-deleted data source: not a live one.
 */
import { booleanFromWire } from '../util/boolean.js';
import { appendTo } from '../util/multimap.js';
import { isPlainObject } from '../util/object.js';
import { listIn, wholeList } from './envelope.js';
import { idString } from './normalize.js';
import type { DataSourceInput, LiveDataSource } from './types.js';

/** The resource's own name for its list in an envelope (before the generic keys of api/envelope.ts). */
const OWN_KEYS = ['dataSources'] as const;

/**
 * A string field: a number is its digits (a name like "2024" sent back as the number 2024, as PHP's
 * `JSON_NUMERIC_CHECK` does; the config's string fields are read so too, plan/shape.ts `fromWire`).
 */
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

/** One record, flat or with handler metadata; undefined when it has no id. */
export function toLiveDataSource(v: unknown): LiveDataSource | undefined {
  if (!isPlainObject(v)) return undefined;
  const meta = isPlainObject(v.metadata) ? v.metadata : {};
  const id = idString(v.dataSourceId ?? v.id ?? meta.dataSourceId);
  if (id === '') return undefined;
  return {
    id,
    integrationId: idString(v.integrationId ?? meta.integrationId),
    dataSourceName: str(v.dataSourceName) || str(meta.dataSourceName) || str(v.name),
    prefix: str(v.prefix) || str(meta.prefix),
  };
}

/** A record marked deleted (flat, or in its handler metadata): a soft-deleted data source, not a live one. */
export const softDeleted = (v: unknown): boolean =>
  isPlainObject(v) && (booleanFromWire(v.deleted) === true || (isPlainObject(v.metadata) && booleanFromWire(v.metadata.deleted) === true));

/**
 * The body of the list endpoint: the live (not soft-deleted) data sources, and the soft-deleted ones at the ids of
 * `unfinished` (marked `softDeleted`: deletes govops started and did not finish).
 */
export function toDataSourceList(v: unknown, method: string, path: string, unfinished?: ReadonlySet<string>): LiveDataSource[] {
  const items = wholeList(v, OWN_KEYS, 'data sources', method, path);
  const out: LiveDataSource[] = [];
  for (const item of items) {
    const deleted = softDeleted(item);
    if (deleted && !unfinished?.size) continue;
    const d = toLiveDataSource(item);
    if (!d) continue;
    if (!deleted) out.push(d);
    else if (unfinished!.has(d.id)) out.push({ ...d, softDeleted: true });
  }
  return out;
}

/**
 * The body of a create: one record per data source sent (an array, an object holding one, or a single
 * record). Records are matched to what was sent by prefix, else (a record without a prefix) by position;
 * what a record leaves out (integration, name) is taken from the request. `missing`: items the body
 * gave no id for (the caller looks them up).
 */
export function toCreatedDataSources(
  v: unknown,
  integrationId: string,
  sent: readonly DataSourceInput[],
): { found: LiveDataSource[]; missing: DataSourceInput[] } {
  const items = listIn(v, OWN_KEYS)?.items ?? (isPlainObject(v) ? [v] : []);
  const records = items.map(toLiveDataSource);
  const found: LiveDataSource[] = [];
  const missing: DataSourceInput[] = [];
  const used = new Set<number>();
  // The records' positions by prefix, and how far each list is used up: the first unused record of a prefix is found
  // without a pass over every record per item sent (thousands of data sources under one integration).
  const byPrefix = new Map<string, number[]>();
  records.forEach((r, j) => r !== undefined && appendTo(byPrefix, r.prefix, j));
  const start = new Map<string, number>();
  const firstUnused = (prefix: string): number => {
    const at = byPrefix.get(prefix);
    if (!at) return -1;
    let k = start.get(prefix) ?? 0;
    while (k < at.length && used.has(at[k]!)) k++;
    start.set(prefix, k);
    return k < at.length ? at[k]! : -1;
  };
  sent.forEach((item, i) => {
    let at = firstUnused(item.prefix);
    if (at < 0 && records[i] !== undefined && records[i]!.prefix === '' && !used.has(i)) at = i;
    const r = at < 0 ? undefined : records[at];
    if (!r) {
      missing.push(item);
      return;
    }
    used.add(at);
    found.push({ id: r.id, integrationId: r.integrationId || integrationId, dataSourceName: r.dataSourceName || item.dataSourceName, prefix: item.prefix });
  });
  return { found, missing };
}

/** The integration id as the create body carries it: a number (interface 2.3), unless the service's ids are not numeric. */
export function wireIntegrationId(id: string): number | string {
  return /^\d{1,15}$/.test(id) ? Number(id) : id;
}
