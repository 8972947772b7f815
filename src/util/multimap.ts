/** Append `value` to the list `map` holds for `key` (a new list for a new key): grouping in one pass, in order. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
