/** A JSON-like object: not null, not an array. The one definition (manifests, API bodies, state, sandbox). */
export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
