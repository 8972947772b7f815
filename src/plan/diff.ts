/**
 * Field-level diff of a desired value against a live value (pure).
 * Sensitive leaves are never copied into a FieldChange: only their path is reported.
 */
import { carriesCredential, looksMasked } from '../service/kinds.js';
import { copyPlain } from '../util/copy.js';
import type { FieldChange } from './types.js';
import { isPlainObject } from '../util/object.js';

/** How a sensitive leaf compares: `unknown` when the service hides it and govops has no fingerprint of it. */
export type SecretVerdict = 'same' | 'changed' | 'unknown';

export interface DiffContext {
  /** The leaf at `path` (with last key `key`) holds a secret. */
  isSensitive(path: string, key: string): boolean;
  /** Compare a sensitive leaf: directly when the live value is visible, else by fingerprint. */
  compareSecret(path: string, live: unknown, desired: unknown): SecretVerdict;
  /** The attribute at `path` cannot be edited in place. */
  forcesReplace(path: string): boolean;
  /** Receives the paths of sensitive leaves whose verdict is `unknown`. */
  notComparable?: string[];
}

/**
 * The live value hides what the manifest says (looksMasked) where the two differ: compared as a secret, whatever its
 * key. A live value equal to the manifest's is the same value, masked-looking or not.
 */
export function maskedLive(live: unknown, desired: unknown): boolean {
  return live !== desired && looksMasked(live);
}

/** Values to write in place of some properties, by the object holding them and the key: see `canonicalJson`. */
export type Substitutions = ReadonlyMap<object, ReadonlyMap<string, unknown>>;

/**
 * JSON with object keys sorted: equal values give equal strings. With `substitutions`, the listed properties (own
 * properties of the objects named) are written with the given values instead (as if the value held them),
 * without changing or copying `value` for it.
 */
export function canonicalJson(value: unknown, substitutions?: Substitutions): string {
  return JSON.stringify(sortKeys(value, substitutions));
}

function sortKeys(value: unknown, subs: Substitutions | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, subs));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    const replaced = subs?.get(value);
    for (const k of Object.keys(value).sort()) {
      const v = replaced?.has(k) ? replaced.get(k) : value[k];
      if (v !== undefined) out[k] = sortKeys(v, subs);
    }
    return out;
  }
  return value;
}

/**
 * Equal as canonical JSON is (key order ignored; a property holding undefined counts as absent), without
 * writing the JSON out: this runs for every compared field of every resource.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    let n = 0;
    for (const k in a) {
      if (a[k] === undefined) continue;
      n++;
      if (!deepEqual(a[k], b[k])) return false;
    }
    for (const k in b) if (b[k] !== undefined) n--;
    return n === 0;
  }
  // primitives (and values JSON writes alike, e.g. NaN and null): as canonical JSON would compare them
  if (typeof a !== 'object' && typeof b !== 'object' && typeof a !== typeof b) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Compare `desired` with `live` below `prefix` (both normalised first: plan/shape.ts). Sensitive leaves and
 * masked live values are compared by `ctx.compareSecret`, never by value in the output. Values are copied,
 * never referenced.
 */
export function diffObjects(
  prefix: string,
  desired: Record<string, unknown>,
  live: Record<string, unknown>,
  ctx: DiffContext,
  out: FieldChange[] = [],
): FieldChange[] {
  const keys = Object.keys(desired);
  for (const k in live) if (!(k in desired)) keys.push(k);
  keys.sort();
  for (const key of keys) {
    const path = prefix ? `${prefix}.${key}` : key;
    const d = desired[key];
    const l = live[key];
    if (d === undefined && l === undefined) continue;
    // A credential field the manifest holds as a value (or not at all) is compared as one secret, whatever shape the
    // service answers it in (a keyfile string parsed into an object): neither side is ever shown as a value.
    if ((ctx.isSensitive(path, key) && !isPlainObject(d)) || maskedLive(l, d)) {
      const verdict = ctx.compareSecret(path, l, d);
      if (verdict === 'changed') out.push({ path, sensitive: true, forcesReplace: ctx.forcesReplace(path) });
      else if (verdict === 'unknown') ctx.notComparable?.push(path);
      continue;
    }
    if (isPlainObject(d) && isPlainObject(l)) {
      diffObjects(path, d, l, ctx, out);
      continue;
    }
    if (isPlainObject(d) || isPlainObject(l)) {
      // object on one side only: report the scalar side at `path`, the object's leaves below it
      if (!isPlainObject(d) && d !== undefined) out.push(scalarChange(path, undefined, d, ctx));
      if (!isPlainObject(l) && l !== undefined) out.push(scalarChange(path, l, undefined, ctx));
      diffObjects(path, isPlainObject(d) ? d : {}, isPlainObject(l) ? l : {}, ctx, out);
      continue;
    }
    if (!deepEqual(d, l)) out.push(scalarChange(path, l, d, ctx));
  }
  return out;
}

/**
 * What `diffObjects(prefix, value, {}, ctx)` reports, for a value the caller owns and drops (a creation's config with
 * its defaults filled in, a private copy): the same fields in the same order, each secret by `compareSecret`, but in
 * one walk that compares nothing with the empty side and hands the value's leaves over instead of copying them again
 * (issue #26: the field list of each of 10,000 creates).
 */
export function createdFields(prefix: string, value: Record<string, unknown>, ctx: DiffContext, out: FieldChange[] = []): FieldChange[] {
  for (const key of Object.keys(value).sort()) {
    const v = value[key];
    if (v === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (isPlainObject(v)) {
      createdFields(path, v, ctx, out);
      continue;
    }
    if (ctx.isSensitive(path, key)) {
      const verdict = ctx.compareSecret(path, undefined, v);
      if (verdict === 'changed') out.push({ path, sensitive: true, forcesReplace: ctx.forcesReplace(path) });
      else if (verdict === 'unknown') ctx.notComparable?.push(path);
      continue;
    }
    const sensitive = hasSensitiveKey(v, ctx);
    const change: FieldChange = { path, sensitive, forcesReplace: ctx.forcesReplace(path) };
    if (!sensitive) change.after = v;
    out.push(change);
  }
  return out;
}

/**
 * True when `diffObjects(prefix, desired, live, ctx)` would report nothing (no change, no path it cannot compare):
 * the common case of a plan in sync, told in one walk that sorts no keys and writes no path but a secret's.
 * False when it differs, or when it cannot tell cheaply (the caller then runs `diffObjects`, which says how).
 * `sensitiveKey` must say what `ctx.isSensitive` says of every path here from its last key alone (the caller
 * checks that no secret path sits under a key not sensitive by name).
 */
export function sameObjects(
  prefix: string,
  desired: Record<string, unknown>,
  live: Record<string, unknown>,
  ctx: DiffContext,
  sensitiveKey: (key: string) => boolean,
): boolean {
  let matched = 0;
  for (const key in desired) {
    const d = desired[key];
    const l = live[key];
    if (d === undefined) {
      if (l === undefined) continue;
      return false;
    }
    if (l !== undefined) matched++;
    if (maskedLive(l, d) || (!isPlainObject(d) && !isPlainObject(l))) {
      if (!sameValue(prefix, key, d, l, ctx, sensitiveKey(key))) return false;
      continue;
    }
    if (!isPlainObject(d) || !isPlainObject(l) || !sameObjects(prefix ? `${prefix}.${key}` : key, d, l, ctx, sensitiveKey)) return false;
  }
  // every key live holds a value at is one compared above
  for (const key in live) if (live[key] !== undefined && --matched < 0) return false;
  return matched === 0;
}

/**
 * One field both sides hold as a value (not an object, or masked live), as the diff compares it: a secret (by its
 * key, or masked live) by `compareSecret` at `prefix.key`, anything else by value. The in-sync walks' one leaf.
 */
export function sameValue(prefix: string, key: string, desired: unknown, live: unknown, ctx: DiffContext, sensitive: boolean): boolean {
  if (sensitive || maskedLive(live, desired)) return ctx.compareSecret(prefix ? `${prefix}.${key}` : key, live, desired) === 'same';
  return deepEqual(desired, live);
}

/**
 * One changed value. A live value (`before`) carrying a credential (`PWD=` in a connection string, a password in a
 * URL) is not shown either: the service shows `connectArgs` in clear, and a pull request whose manifest matches a live
 * integration govops does not own (another team's) would read it in the preview. What the manifest says (`after`) is
 * shown: it is in the repository, and where the integration connects is never hidden from the plan.
 */
function scalarChange(path: string, before: unknown, after: unknown, ctx: DiffContext): FieldChange {
  const sensitive = hasSensitiveKey(before, ctx) || (typeof before === 'string' && carriesCredential(before)) || hasSensitiveKey(after, ctx);
  const change: FieldChange = { path, sensitive, forcesReplace: ctx.forcesReplace(path) };
  if (sensitive) return change;
  if (before !== undefined) change.before = copyPlain(before);
  if (after !== undefined) change.after = copyPlain(after);
  return change;
}

/** An array holding objects with a sensitive key (or a masked value) is shown as sensitive as a whole. */
function hasSensitiveKey(value: unknown, ctx: DiffContext): boolean {
  if (looksMasked(value)) return true;
  if (Array.isArray(value)) return value.some((v) => hasSensitiveKey(v, ctx));
  if (isPlainObject(value)) {
    return Object.entries(value).some(([k, v]) => ctx.isSensitive(k, k) || hasSensitiveKey(v, ctx));
  }
  return false;
}
