/**
 * Validation against the JSON Schemas of schemas/ (ajv, draft 2020-12, compiled once, lazily) and
 * default filling. Used by the manifest loader, the sandbox (request bodies) and the planner.
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { IntegrationType } from '../service/kinds.js';
import { DELETE_PAYLOAD_KINDS } from '../service/kinds.js';
import { schemaDocuments, schemaId } from './schema-files.js';
import { toIssues } from './issues.js';
import { fillDefaults } from './defaults.js';

export interface SchemaIssue {
  /** Path inside the object validated. */
  path: (string | number)[];
  message: string;
  /** Point at the key of `path` (unknown / not-allowed field, missing field of the object) rather than its value. */
  target?: 'key' | 'value';
}

type AjvLike = {
  addSchema(schema: object): unknown;
  getSchema(id: string): ValidateFunction | undefined;
};

// ajv and ajv-formats are CommonJS; under NodeNext their default export is the module object.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as unknown as new (
  opts: object,
) => AjvLike;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: AjvLike,
  formats?: string[],
) => void;

/**
 * Two ajv instances over the same schemas, compiled lazily: a lean one answers "valid?" (the
 * common case, cheaper to compile and run), and the one with every error and its schema context
 * (`allErrors`, `verbose`) is compiled only once some value is invalid, to explain why.
 */
type Mode = 'check' | 'explain';
const instances: Partial<Record<Mode, AjvLike>> = {};
const compiled: Record<Mode, Map<string, ValidateFunction>> = { check: new Map(), explain: new Map() };

function instance(mode: Mode): AjvLike {
  const existing = instances[mode];
  if (existing) return existing;
  const a = new Ajv2020({
    allErrors: mode === 'explain',
    verbose: mode === 'explain',
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    inlineRefs: false,
    code: { optimize: false },
  });
  addFormats(a, ['uri', 'hostname', 'regex']);
  for (const schema of schemaDocuments().values()) a.addSchema(schema);
  instances[mode] = a;
  return a;
}

/** The compiled validator of a schema file (e.g. 'config/lakehouse.json'). */
export function validatorFor(file: string, mode: Mode = 'check'): ValidateFunction {
  const id = schemaId(file);
  let fn = compiled[mode].get(id);
  if (!fn) {
    fn = instance(mode).getSchema(id);
    if (!fn) throw new Error(`no schema ${id}`);
    compiled[mode].set(id, fn);
  }
  return fn;
}

/** Validate `value` against a schema file; every problem, as SchemaIssues. */
export function validateAgainst(file: string, value: unknown): SchemaIssue[] {
  if (validatorFor(file, 'check')(value)) return [];
  const explain = validatorFor(file, 'explain');
  if (explain(value)) return [];
  return toIssues((explain.errors ?? []) as ErrorObject[], value);
}

/** Validate an API body {type, autoBootstrap, config} as the service would (plain strings, no secret refs). */
export function validateIntegrationBody(body: unknown): SchemaIssue[] {
  return validateAgainst('integration-body.json', body);
}

/** Validate a 2.9 delete payload for the kind. */
export function validateDeletePayload(type: IntegrationType, payload: unknown): SchemaIssue[] {
  if (!DELETE_PAYLOAD_KINDS.has(type)) {
    return payload === undefined || payload === null
      ? []
      : [{ path: [], message: `a ${type} integration is deleted without a payload` }];
  }
  if (payload === undefined || payload === null) {
    return [{ path: [], message: `deleting a ${type} integration created with autoBootstrap true needs the delete payload (2.9)` }];
  }
  return validateAgainst(`delete/${type}.json`, payload);
}

/** Validate a webhook body item (url, name, global, notificationType, actionType, secret?) as the service would. */
export function validateWebhookItem(item: unknown): SchemaIssue[] {
  return validateAgainst('webhook-item.json', item);
}

/**
 * Deep copy of config with every schema default filled in (as the service stores it).
 * Absent optional objects whose schema has a `default` ({} - metadataDelimiters, impersonation,
 * audit, workspaces) are filled with their defaults; objects without one (groupPattern,
 * userRolePattern, lineage, lineageConfig, oAuthClientConfig, okta) only when present.
 * The input is never mutated.
 */
export function withDefaults(type: IntegrationType, config: Record<string, unknown> | undefined): Record<string, unknown> {
  const copy = structuredClone(config ?? {});
  if (type === 'distributed_sql') return copy;
  return fillDefaults(`config/${type}.json`, copy) as Record<string, unknown>;
}
