/**
 * An integration's live config as a manifest writes it (pure): only the fields govops knows (the schemas of
 * schemas/, as config shapes), nothing that equals the service's default, no null or empty "not set" values,
 * numbers and booleans a service sent as strings as numbers and booleans, and every credential field a secret
 * reference (never the masked or real value). A service that leaves credentials out of its answers
 * (`omit-masked`) still gets the references the kind's authentication needs.
 */
import { MASKED_KEYS, kindOf, type IntegrationType } from '../kinds/registry.js';
import { comparable, type ConfigShapes, type FieldShape } from '../plan/shape.js';
import { deepEqual } from '../plan/diff.js';
import { booleanFromWire } from '../util/boolean.js';
import { copyPlain } from '../util/copy.js';
import { isPlainObject } from '../util/object.js';

type Obj = Record<string, unknown>;
/** Makes the secret reference of a credential at a config path. */
export type RefMaker = (path: readonly string[]) => Obj;

function coerce(shape: FieldShape, value: unknown): unknown {
  if ((shape.type === 'number' || shape.type === 'integer') && typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    if (Number.isFinite(n)) return n;
  }
  if (shape.type === 'boolean') return booleanFromWire(value) ?? value;
  return value;
}

/** Whether a value means the field's default, as govops compares it. */
function isDefault(shape: FieldShape, value: unknown): boolean {
  const one = { t: { fields: { v: shape } } };
  return deepEqual(comparable(one, 't', { v: value }), comparable(one, 't', {}));
}

function strip(fields: Record<string, FieldShape>, live: Obj, path: readonly string[], ref: RefMaker, dropDefaults: boolean): Obj {
  const out: Obj = {};
  for (const [key, shape] of Object.entries(fields)) {
    const raw = live[key];
    if (MASKED_KEYS.has(key)) {
      if (raw !== undefined && raw !== null && raw !== '') out[key] = ref([...path, key]);
      continue;
    }
    if (raw === undefined || raw === null) continue;
    if (shape.fields && isPlainObject(raw)) {
      const sub = strip(shape.fields, raw, [...path, key], ref, dropDefaults);
      if (Object.keys(sub).length > 0 || !dropDefaults) out[key] = sub;
      continue;
    }
    const empty = raw === '' || (Array.isArray(raw) && raw.length === 0);
    if (empty && shape.default === undefined) continue;
    const value = coerce(shape, raw);
    if (dropDefaults && shape.default !== undefined && isDefault(shape, value)) continue;
    out[key] = copyPlain(value);
  }
  return out;
}

/** The credential fields the kind's authentication requires (from its module under src/kinds/). */
function requiredCredentials(type: IntegrationType, c: Obj): string[][] {
  return kindOf(type).requiredCredentials?.(c) ?? [];
}

/** Config without its credential fields, for checking that the export means what the live config means. */
function withoutCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCredentials);
  if (!isPlainObject(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) if (!MASKED_KEYS.has(k)) out[k] = withoutCredentials(v);
  return out;
}

/**
 * The manifest config of a live integration. Defaults are left out only where the result still compares equal
 * to the live config (govops' own normalisation, plan/shape.ts); otherwise every known field is kept.
 */
export function exportConfig(shapes: ConfigShapes, type: IntegrationType, live: Obj | undefined, ref: RefMaker): Obj | undefined {
  const shape = shapes[type];
  if (!shape?.fields) return undefined;
  const source = live ?? {};
  const sameMeaning = (cfg: Obj): boolean =>
    deepEqual(withoutCredentials(comparable(shapes, type, cfg)), withoutCredentials(comparable(shapes, type, source)));
  let out = strip(shape.fields, source, [], ref, true);
  if (!sameMeaning(out)) out = strip(shape.fields, source, [], ref, false);
  for (const path of requiredCredentials(type, out)) {
    let parent: Obj = out;
    for (const key of path.slice(0, -1)) {
      const next = parent[key];
      if (!isPlainObject(next)) {
        parent = {};
        break;
      }
      parent = next;
    }
    const last = path[path.length - 1]!;
    // (a parent object the config lacks: the reference goes nowhere; the schema check reports the object)
    if (!(last in parent)) parent[last] = ref(path);
  }
  return out;
}
