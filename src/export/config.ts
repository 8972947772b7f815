/**
 * An integration's live config as a manifest writes it (pure): only the fields govops knows (the schemas of
 * schemas/, as config shapes), nothing that equals the service's default, no null or empty "not set" values,
 * numbers and booleans a service sent as strings as numbers and booleans, a list of one string in a string field as
 * that string (plan/shape.ts `fromWire`, as the plan compares them), and every credential field a secret
 * reference (never the masked or real value). A service that leaves credentials out of its answers
 * (`omit-masked`) still gets the references the kind's authentication needs.
 */
import { MASKED_KEYS, NATURAL_KEY_FIELDS, kindOf, type IntegrationType } from '../kinds/registry.js';
import { carriesCredential, looksMasked } from '../service/kinds.js';
import { comparable, fromWire, type ConfigShapes, type FieldShape } from '../plan/shape.js';
import { deepEqual } from '../plan/diff.js';
import { copyPlain } from '../util/copy.js';
import { isPlainObject } from '../util/object.js';

type Obj = Record<string, unknown>;
/** Makes the secret reference of a credential at a config path. */
export type RefMaker = (path: readonly string[]) => Obj;
/** Told of each field whose live value the manifest cannot hold (its config path, and why). */
export type ExportWarn = (path: string, why: string) => void;

/** Whether a value means the field's default, as govops compares it. */
function isDefault(shape: FieldShape, value: unknown): boolean {
  const one = { t: { fields: { v: shape } } };
  return deepEqual(comparable(one, 't', { v: value }), comparable(one, 't', {}));
}

/**
 * A live value exported as a secret reference, whatever its field: a credential field, a value the service hides
 * (service/kinds.ts `looksMasked`: written as it is, the mask would become the manifest's value), or a string that
 * carries a credential (`carriesCredential`).
 */
function exportedAsReference(key: string, value: unknown): boolean {
  return MASKED_KEYS.has(key) || looksMasked(value) || (typeof value === 'string' && carriesCredential(value));
}

function isReference(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 1 && typeof value.fromEnv === 'string';
}

function strip(object: FieldShape, live: Obj, path: readonly string[], ref: RefMaker, dropDefaults: boolean, identity: ReadonlySet<string>, warn?: ExportWarn): Obj {
  const out: Obj = {};
  const fields = object.fields ?? {};
  for (const [key, shape] of Object.entries(fields)) {
    const raw = live[key];
    // An identity field (a lakehouse's workspaceUrl) cannot be a reference (manifests/parse.ts): a credential in it
    // is written as the service holds it, with a warning, rather than as a manifest govops refuses.
    const isIdentity = path.length === 0 && identity.has(key);
    if (isIdentity && typeof raw === 'string' && !MASKED_KEYS.has(key) && !looksMasked(raw) && carriesCredential(raw)) {
      warn?.(`config.${key}`, 'carries a credential (in its userinfo or query): written as the service holds it, since an integration\'s identity cannot be a secret reference; move the credential out of it');
    } else if (exportedAsReference(key, raw) && !shape.fields) {
      if (raw !== undefined && raw !== null && raw !== '') out[key] = ref([...path, key]);
      continue;
    }
    if (raw === undefined || raw === null) continue;
    if (shape.fields && isPlainObject(raw)) {
      const sub = strip(shape, raw, [...path, key], ref, dropDefaults, identity, warn);
      if (Object.keys(sub).length > 0 || !dropDefaults) out[key] = sub;
      continue;
    }
    const empty = raw === '' || (Array.isArray(raw) && raw.length === 0);
    if (empty && shape.default === undefined) continue;
    const value = fromWire(shape, raw);
    // A list of several values in a string field: no manifest value means it. Written as the service holds it
    // (validate reports it) rather than one value chosen here or the field dropped (a PUT would remove the others).
    if (shape.type === 'string' && Array.isArray(value)) {
      warn?.(['config', ...path, key].join('.'), `the service holds a list of ${value.length} values in this string field: written as a list, which is not a valid manifest value: choose one`);
    }
    if (dropDefaults && shape.default !== undefined && isDefault(shape, value)) continue;
    out[key] = copyPlain(value);
  }
  for (const key of requiredObjects(object, out)) out[key] ??= {};
  return out;
}

/**
 * The sub-objects the schema requires given the values written (lineage's `lineageConfig` while `enabled` is
 * true): written even when all they would hold are defaults (`{}`), or absent from the service's answer
 * (`omit-defaults`), or the manifest would not validate.
 */
function requiredObjects(object: FieldShape, out: Obj): string[] {
  return (object.requiredWhen ?? [])
    .filter((rule) => rule.field in out && deepEqual(out[rule.field], rule.equals))
    .flatMap((rule) => rule.required.filter((key) => object.fields?.[key]?.fields !== undefined));
}

/** The credential fields the kind's authentication requires (from its module under src/kinds/). */
function requiredCredentials(type: IntegrationType, c: Obj): string[][] {
  return kindOf(type).requiredCredentials?.(c) ?? [];
}

/** Config without what is exported as references, for checking that the export means what the live config means. */
function withoutCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCredentials);
  if (!isPlainObject(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) if (!exportedAsReference(k, v) && !isReference(v)) out[k] = withoutCredentials(v);
  return out;
}

/**
 * The manifest config of a live integration. Defaults are left out only where the result still compares equal
 * to the live config (govops' own normalisation, plan/shape.ts); otherwise every known field is kept.
 */
export function exportConfig(shapes: ConfigShapes, type: IntegrationType, live: Obj | undefined, ref: RefMaker, warn?: ExportWarn): Obj | undefined {
  const shape = shapes[type];
  if (!shape?.fields) return undefined;
  const source = live ?? {};
  const sameMeaning = (cfg: Obj): boolean =>
    deepEqual(withoutCredentials(comparable(shapes, type, cfg)), withoutCredentials(comparable(shapes, type, source)));
  const identity = new Set<string>(NATURAL_KEY_FIELDS[type]);
  let out = strip(shape, source, [], ref, true, identity, warn);
  if (!sameMeaning(out)) out = strip(shape, source, [], ref, false, identity);
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
