/**
 * A boolean as a service may send it (the interface types the fields boolean but is silent on their encoding):
 * `true` / `false`; the strings `"true"` / `"false"` in any case with surrounding space (a service serialising
 * every value as text, or Python's `str(True)`); the numbers `1` / `0` and the strings `"1"` / `"0"` (a PHP
 * service over a MySQL `TINYINT(1)` column, which has no boolean type). Every place that reads a boolean the
 * service sent (config fields, `autoBootstrap`, a webhook's `global`, a data source's `deleted`) reads it with
 * this, so they compare and export alike. Undefined for anything else (another number, another string): the
 * caller keeps the value as it is.
 */
export function booleanFromWire(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return text === 'true' || text === '1' ? true : text === 'false' || text === '0' ? false : undefined;
}
