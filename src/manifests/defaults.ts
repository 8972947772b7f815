/** Fill schema `default`s into a value, following `properties` and `$ref` (never conditionals). */
import { resolveRef, schemaId } from './schema-files.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Follow `$ref`s until a schema with `properties` (or none); returns it with its base id. */
function deref(schema: unknown, baseId: string): { schema: unknown; baseId: string } {
  let cur = { schema, baseId };
  for (let i = 0; i < 16 && isObj(cur.schema) && typeof cur.schema.$ref === 'string' && !cur.schema.properties; i++) {
    cur = resolveRef(cur.schema.$ref, cur.baseId);
  }
  return cur;
}

function fill(schemaIn: unknown, baseIdIn: string, value: unknown): unknown {
  if (!isObj(value)) return value;
  const { schema, baseId } = deref(schemaIn, baseIdIn);
  if (!isObj(schema) || !isObj(schema.properties)) return value;
  for (const [key, sub] of Object.entries(schema.properties)) {
    if (!(key in value) && isObj(sub) && 'default' in sub) value[key] = structuredClone(sub.default);
    if (key in value) value[key] = fill(sub, baseId, value[key]);
  }
  return value;
}

/** Fill defaults of the schema file into `value` (mutates and returns it: pass a copy). */
export function fillDefaults(file: string, value: unknown): unknown {
  const id = schemaId(file);
  return fill(resolveRef(id, id).schema, id, value);
}
