/** Append `value` to the list `map` holds for `key` (a new list for a new key): grouping in one pass, in order. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The items grouped by `keyOf`, each group in the items' order. */
export function groupBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) appendTo(out, keyOf(item), item);
  return out;
}

/** The first item of each key, in the items' order: what `find` by that key would give, looked up in O(1). */
export function firstBy<T, K>(items: Iterable<T>, keyOf: (item: T) => K): Map<K, T> {
  const out = new Map<K, T>();
  for (const item of items) {
    const k = keyOf(item);
    if (!out.has(k)) out.set(k, item);
  }
  return out;
}

/**
 * Append every item to `target`, in order. `target.push(...items)` spreads the items into the call's arguments, which
 * overflows the stack past ~125,000 of them (data sources, diagnostics, changes at that scale).
 */
export function pushAll<T>(target: T[], items: Iterable<T>): void {
  for (const item of items) target.push(item);
}
