/** A JSON-like object: not null, not an array. The one definition (manifests, API bodies, state, sandbox). */
export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a path of object keys (arrays are not entered); undefined when a step is not a plain object. */
export function valueAt(root: unknown, parts: readonly string[]): unknown {
  let cur = root;
  for (const part of parts) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}
