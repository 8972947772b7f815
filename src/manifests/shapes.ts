/**
 * The config shapes the planner compares with (src/plan/shape.ts), derived from the schemas of schemas/
 * (fields, types, defaults, string enums, `x-unordered` lists, `x-compare: host` / `url` values). Computed once; the planner gets them
 * injected.
 */
import type { ConfigShapes, FieldShape } from '../plan/shape.js';
import { KINDS } from '../kinds/registry.js';
import { resolveRef, schemaId } from './schema-files.js';
import { isPlainObject } from '../util/object.js';

type Obj = Record<string, unknown>;

/** Follow a node's `$ref` chain; the outer nodes' keywords win (e.g. a `default` next to a `$ref`). */
function flatten(node: unknown, baseId: string): { schema: Obj; baseId: string } {
  let merged: Obj = {};
  let cur: unknown = node;
  let base = baseId;
  for (let i = 0; i < 16 && isPlainObject(cur); i++) {
    merged = { ...cur, ...merged };
    if (typeof cur.$ref !== 'string') break;
    const next = resolveRef(cur.$ref, base);
    cur = next.schema;
    base = next.baseId;
    delete merged.$ref;
  }
  return { schema: merged, baseId: base };
}

function shapeOf(node: unknown, baseId: string): FieldShape {
  const { schema, baseId: base } = flatten(node, baseId);
  const shape: FieldShape = {};
  if (typeof schema.type === 'string') shape.type = schema.type;
  if ('default' in schema) shape.default = structuredClone(schema.default);
  if (schema['x-unordered'] === true) shape.unordered = true;
  if (Array.isArray(schema.enum) && schema.enum.every((e) => typeof e === 'string')) shape.enum = schema.enum as string[];
  if (schema['x-compare'] === 'host' || schema['x-compare'] === 'url') shape.compare = schema['x-compare'];
  if (isPlainObject(schema.properties)) {
    shape.fields = {};
    for (const [key, sub] of Object.entries(schema.properties)) shape.fields[key] = shapeOf(sub, base);
    const rules = [schema, ...(Array.isArray(schema.allOf) ? schema.allOf : [])].map(requiredWhen).filter((r) => r !== undefined);
    if (rules.length > 0) shape.requiredWhen = rules;
  }
  return shape;
}

/** `if: { properties: { F: { const: V } }, required: [F] }, then: { required: [...] }` as a rule, or undefined. */
function requiredWhen(node: unknown): { field: string; equals: unknown; required: string[] } | undefined {
  if (!isPlainObject(node) || !isPlainObject(node.if) || !isPlainObject(node.then)) return undefined;
  const props = node.if.properties;
  const required = node.then.required;
  if (!isPlainObject(props) || !Array.isArray(required)) return undefined;
  const keys = Object.keys(props);
  const only = keys.length === 1 ? props[keys[0]!] : undefined;
  if (!isPlainObject(only) || !('const' in only)) return undefined;
  return { field: keys[0]!, equals: only.const, required: required.filter((r): r is string => typeof r === 'string') };
}

let cached: ConfigShapes | undefined;

/** The config shape of every integration kind that has a config schema. */
export function configShapes(): ConfigShapes {
  if (cached) return cached;
  const out: Record<string, FieldShape> = {};
  for (const kind of KINDS.kinds) {
    if (kind.configSchema === undefined) continue; // configless: nothing to shape
    const id = schemaId(kind.configSchema);
    out[kind.type] = shapeOf(resolveRef(id, id).schema, id);
  }
  cached = out;
  return out;
}
