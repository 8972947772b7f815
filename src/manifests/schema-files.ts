/** The JSON Schemas of schemas/, read once from disk (they ship with the package). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KINDS } from '../kinds/registry.js';

export const SCHEMA_BASE = 'https://govops.dev/schemas/v1/';

/** Every schema file, relative to schemas/ (and to SCHEMA_BASE): the kinds' own from their modules (src/kinds/). */
export const SCHEMA_FILES: readonly string[] = [
  'common.json',
  ...KINDS.schemaFiles,
  'integration-rules.json',
  'integration-body.json',
  'integration-spec.json',
  'webhook-item.json',
  'webhook-spec.json',
  'data-source-spec.json',
  'manifest.json',
];

export type JsonSchema = Record<string, unknown>;

/** Folder of the schema files: `<package>/schemas/` (from src/manifests or dist/manifests). */
export const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

let cache: Map<string, JsonSchema> | undefined;

/** All schemas by `$id`. Read once; callers must not mutate them. */
export function schemaDocuments(): Map<string, JsonSchema> {
  if (cache) return cache;
  const map = new Map<string, JsonSchema>();
  for (const file of SCHEMA_FILES) {
    const schema = JSON.parse(readFileSync(`${SCHEMA_DIR}${file}`, 'utf8')) as JsonSchema;
    const id = schema.$id;
    if (id !== `${SCHEMA_BASE}${file}`) throw new Error(`schemas/${file}: $id must be ${SCHEMA_BASE}${file}`);
    map.set(id, schema);
  }
  cache = map;
  return map;
}

export function schemaId(file: string): string {
  return `${SCHEMA_BASE}${file}`;
}

/** Resolve a `$ref` (relative to the schema `baseId`) to the schema object and its base id. */
export function resolveRef(ref: string, baseId: string): { schema: unknown; baseId: string } {
  const url = new URL(ref, baseId);
  const hash = url.hash;
  url.hash = '';
  const docId = url.toString();
  const doc = schemaDocuments().get(docId);
  if (!doc) throw new Error(`unknown schema ${docId}`);
  let node: unknown = doc;
  const pointer = decodeURIComponent(hash.replace(/^#/, ''));
  if (pointer) {
    for (const raw of pointer.split('/').slice(1)) {
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      node = (node as Record<string, unknown>)[seg];
      if (node === undefined) throw new Error(`unresolvable $ref ${ref} from ${baseId}`);
    }
  }
  return { schema: node, baseId: docId };
}
