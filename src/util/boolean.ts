/**
 * A boolean as a service may send it (the interface types the fields boolean but is silent on their encoding):
 * `true` / `false`, or the strings `"true"` / `"false"` in any case with surrounding space (a service serialising
 * every value as text, or Python's `str(True)`). Every place that reads a boolean the service sent (config fields,
 * `autoBootstrap`, a webhook's `global`, a data source's `deleted`) reads it with this, so they compare and export
 * alike. Undefined for anything else (a number, another string): the caller keeps the value as it is.
 */
export function booleanFromWire(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : undefined;
}
