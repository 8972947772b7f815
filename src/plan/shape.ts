/**
 * Normalising a config before comparing it (pure). What govops knows of each kind's config fields (their
 * defaults, sub-fields, which lists are sets) is data derived from schemas/ by the shell and injected as
 * `ConfigShapes`: this module reads no file and imports no schema library.
 *
 * Both sides of a diff go through `comparable`, so a plan is a no-op whatever the service echoes:
 * absent (or null) = default, an empty value ("" or []) of a field without default = absent, fields govops
 * does not know are not compared, order-free lists are sets, a number sent back as a numeric string is that
 * number, a boolean sent as a string (`"true"`) or as `1` / `0` is that boolean (util/boolean.ts), a list of one string in a string
 * field is that string and a number in a string field its digits (`fromWire`), a workspace URL is compared by its
 * host, host names (and the host of a URL) case-insensitively.
 */
import { hostOf, urlAsCompared } from '../service/kinds.js';
import { booleanFromWire } from '../util/boolean.js';
import { copyPlain } from '../util/copy.js';
import { isPlainObject } from '../util/object.js';
import { spelledAs } from '../util/strings.js';

/** One config field as govops knows it. */
export interface FieldShape {
  /** JSON Schema type of the field, when it has one (`object`, `array`, `string`, `number`, `integer`, `boolean`). */
  type?: string;
  /** The string values of an `enum` field: a value echoed in another case is read as the one it matches (`fromWire`). */
  enum?: readonly string[];
  /** The default the service applies when the field is absent (present only when there is one). */
  default?: unknown;
  /** Sub-fields of an object. Only these are compared. */
  fields?: Record<string, FieldShape>;
  /** A list whose order has no meaning: compared as a set. */
  unordered?: boolean;
  /**
   * `host`: a URL or a host, compared by its host, case-insensitively (`https://H/` and `h` name the same
   * workspace); `url`: a URL compared with its scheme and host lower-cased, an empty http(s) path as `/` and the
   * default port dropped, the rest as it is (`urlAsCompared`).
   */
  compare?: 'host' | 'url';
  /**
   * An object's sub-fields the schema requires while one of its fields has a value (`if`/`then`: lineage's
   * `lineageConfig` when `enabled` is true). Export keeps such a sub-object even when all it holds are defaults.
   */
  requiredWhen?: ReadonlyArray<{ field: string; equals: unknown; required: readonly string[] }>;
}

/** The config shape of each integration kind (a configless kind has none). */
export type ConfigShapes = Readonly<Partial<Record<string, FieldShape>>>;

function sortedSet(list: unknown[]): unknown[] {
  const seen = new Map<string, unknown>();
  for (const item of list) seen.set(JSON.stringify(item), item);
  return [...seen.keys()].sort().map((k) => seen.get(k));
}

/**
 * A field's value as the service may send it, read as its schema type (comparison and export both read live values
 * with it): a numeric string of a number field is that number, `"true"`/`"false"` (or `1`/`0`) of a boolean field the boolean,
 * and a list of exactly one string in a string field that string (interface 2.3 types `cloudRoleToAssume` string
 * with the default `[]`: a service holding it as a list echoes `["arn:..."]`), and a number in a string field its
 * decimal digits (object_store `cloudAccountId` "123456789012" held and echoed as a number), and an enum value in
 * another case the one value it matches case-insensitively (`authenticationType` `USERPASSWORD`). A longer list in a
 * string field stays a list: a real difference from any string, shown as such. Anything else is returned as it is.
 */
export function fromWire(shape: FieldShape, value: unknown): unknown {
  if (shape.type === 'string' && Array.isArray(value) && value.length === 1 && typeof value[0] === 'string') return value[0];
  // A number in a string field is its digits (an account id the service holds as a number: "123456789012").
  if (shape.type === 'string' && ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint')) return String(value);
  if ((shape.type === 'number' || shape.type === 'integer') && typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    if (Number.isFinite(n)) return n;
  }
  if (shape.type === 'boolean') return booleanFromWire(value) ?? value;
  // An enum value in another case (`USERPASSWORD`, `userpassword`) is the one value it matches, when only one does.
  if (shape.enum && typeof value === 'string' && !shape.enum.includes(value)) return spelledAs(shape.enum, value);
  return value;
}

function scalar(shape: FieldShape, value: unknown): unknown {
  if (shape.compare === 'host' && typeof value === 'string') return hostOf(value);
  if (shape.compare === 'url' && typeof value === 'string') return urlAsCompared(value);
  return value;
}

function field(shape: FieldShape, raw: unknown): unknown {
  if (shape.fields) {
    // null, and `[]` (a PHP service's json_encode of an empty array, its only map type), read as absent
    const value = raw === null || (Array.isArray(raw) && raw.length === 0) ? undefined : raw;
    if (value !== undefined && !isPlainObject(value)) return value; // not an object: compared as it is
    const base = value ?? (shape.default !== undefined && isPlainObject(shape.default) ? shape.default : {});
    const out = object(shape.fields, base);
    // An absent object with nothing filled in stays absent.
    return value === undefined && Object.keys(out).length === 0 ? undefined : out;
  }
  const value = raw === null ? undefined : fromWire(shape, raw);
  // Without a default, an empty value means what absence means (a service may echo "" or [] for "not set").
  const empty = value === '' || (Array.isArray(value) && value.length === 0);
  if (value === undefined || (empty && shape.default === undefined)) {
    return shape.default === undefined ? undefined : copyPlain(shape.default);
  }
  if (Array.isArray(value)) return shape.unordered ? sortedSet(value) : [...value];
  return scalar(shape, value);
}

/** `Object.entries` of each shape's fields, listed once (shapes are never changed after they are made). */
const fieldLists = new WeakMap<Record<string, FieldShape>, Array<[string, FieldShape]>>();

function object(fields: Record<string, FieldShape>, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let list = fieldLists.get(fields);
  if (!list) fieldLists.set(fields, (list = Object.entries(fields)));
  for (const [key, shape] of list) {
    const v = field(shape, value[key]);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/**
 * The config as govops compares it: only known fields, defaults filled in (absent objects too), null read as
 * absent, sets sorted and de-duplicated, numeric strings of number fields as numbers. Never mutates its input.
 * Without a shape for the kind, nothing is comparable: `{}`.
 */
export function comparable(shapes: ConfigShapes, type: string, config: Record<string, unknown> | undefined): Record<string, unknown> {
  const shape = shapes[type];
  if (!shape?.fields) return {};
  return object(shape.fields, config ?? {});
}

/**
 * Whether two configs of a kind are the same as `comparable` makes them, told field by field without making
 * either comparable object (a plan in sync compares 10,000 pairs): each field of the shape is normalised on both
 * sides as `comparable` does it and handed to `leaf` (with the path below `prefix` and its last key), unless
 * both are absent. Sub-objects are walked the same way (an absent one filled in from its default). True only
 * when every leaf says so; false, without more, when a sub-object's value is not an object (the caller then
 * compares the comparable objects, which says how they differ).
 */
export function sameComparable(
  shapes: ConfigShapes,
  type: string,
  a: Record<string, unknown> | undefined,
  b: Record<string, unknown> | undefined,
  prefix: string,
  leaf: (prefix: string, key: string, a: unknown, b: unknown) => boolean,
): boolean {
  const shape = shapes[type];
  if (!shape?.fields) return true; // nothing comparable: {} and {}
  return sameFields(shape.fields, a ?? {}, b ?? {}, prefix, leaf);
}

function sameFields(
  fields: Record<string, FieldShape>,
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  prefix: string,
  leaf: (prefix: string, key: string, a: unknown, b: unknown) => boolean,
): boolean {
  let list = fieldLists.get(fields);
  if (!list) fieldLists.set(fields, (list = Object.entries(fields)));
  for (const [key, shape] of list) {
    if (shape.fields) {
      const x = a[key] === null ? undefined : a[key];
      const y = b[key] === null ? undefined : b[key];
      // An absent side is filled in from the default, as `comparable` does (an absent object it leaves empty
      // is dropped there: every leaf is absent here too, which the diff of {} and undefined agrees with).
      const base = shape.default !== undefined && isPlainObject(shape.default) ? shape.default : {};
      const xs = x ?? base;
      const ys = y ?? base;
      if (!isPlainObject(xs) || !isPlainObject(ys)) return false;
      if (!sameFields(shape.fields, xs, ys, `${prefix}.${key}`, leaf)) return false;
      continue;
    }
    const x = field(shape, a[key]);
    const y = field(shape, b[key]);
    if (x === undefined && y === undefined) continue;
    if (!leaf(prefix, key, x, y)) return false;
  }
  return true;
}

/**
 * `comparable` of a kind's config: see `comparableMemo`. `remember: false` (the diff, the last use of a config)
 * uses a remembered result but does not keep a new one.
 */
export type Normalise = (type: string, config: Record<string, unknown> | undefined, remember?: boolean) => Record<string, unknown>;

/**
 * `comparable`, remembered per config object for the span of one plan: matching by natural key and the diff
 * both need each config normalised (it was done twice per side). The results are shared, so callers never
 * change them (nothing does: the diff copies what it reports). Only what matching normalised is kept: in a
 * plan where every resource is matched by its recorded id, keeping each side's result until the plan ends cost
 * more (in garbage collection of objects that survive) than it saved.
 */
export function comparableMemo(shapes: ConfigShapes): Normalise {
  const seen = new WeakMap<object, { type: string; value: Record<string, unknown> }>();
  return (type, config, remember = true) => {
    if (!config) return comparable(shapes, type, config);
    const hit = seen.get(config);
    if (hit?.type === type) return hit.value;
    const value = comparable(shapes, type, config);
    if (remember) seen.set(config, { type, value });
    return value;
  };
}

/**
 * The config as it will be stored, for showing a creation: the manifest's fields (unknown ones included, they
 * are sent) with the defaults of absent fields that have one. Never mutates its input.
 */
export function withShapeDefaults(shapes: ConfigShapes, type: string, config: Record<string, unknown> | undefined): Record<string, unknown> {
  const shape = shapes[type];
  const copy = copyPlain(config ?? {});
  return shape?.fields ? fill(shape.fields, copy) : copy;
}

function fill(fields: Record<string, FieldShape>, value: Record<string, unknown>): Record<string, unknown> {
  for (const [key, shape] of Object.entries(fields)) {
    if (!(key in value) && shape.default !== undefined) value[key] = copyPlain(shape.default);
    const v = value[key];
    if (shape.fields && isPlainObject(v)) fill(shape.fields, v);
  }
  return value;
}
