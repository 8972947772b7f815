/**
 * Validation against the JSON Schemas of schemas/ (ajv, draft 2020-12, `strict: true`, compiled once,
 * lazily) and default filling. Used by the manifest loader and `govops validate`. Rules the service
 * interface does not state are `x-advice` keywords: warnings, never errors (docs/contract.md).
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { IntegrationType } from '../service/kinds.js';
import { DELETE_PAYLOAD_KINDS } from '../service/kinds.js';
import { adviceKeyword, collectAdvice } from './advice.js';
import { schemaDocuments, schemaId } from './schema-files.js';
import { toIssues } from './issues.js';

export interface SchemaIssue {
  /** Path inside the object validated. */
  path: (string | number)[];
  message: string;
  /** Point at the key of `path` (unknown / not-allowed field, missing field of the object) rather than its value. */
  target?: 'key' | 'value';
  /** `warning`: a rule the service interface does not state (x-advice); absent = error. */
  severity?: 'error' | 'warning';
}

type AjvLike = {
  addSchema(schema: object): unknown;
  addKeyword(definition: object): unknown;
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
    inlineRefs: false,
    code: { optimize: false },
  });
  addFormats(a, ['uri', 'hostname', 'regex']);
  a.addKeyword({ keyword: 'x-advice', schemaType: ['string', 'object', 'array'], validate: adviceKeyword, errors: false });
  a.addKeyword({ keyword: 'x-unordered', schemaType: 'boolean' });
  a.addKeyword({ keyword: 'x-compare', schemaType: 'string' });
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

function adviceIssues(advice: ReturnType<typeof collectAdvice>['advice']): SchemaIssue[] {
  const seen = new Set<string>();
  const out: SchemaIssue[] = [];
  for (const a of advice) {
    const key = `${JSON.stringify(a.path)}|${a.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: a.path, message: a.message, severity: 'warning', ...(a.target ? { target: a.target } : {}) });
  }
  return out;
}

/** Validate `value` against a schema file; every problem, as SchemaIssues (errors, then warnings). */
export function validateAgainst(file: string, value: unknown): SchemaIssue[] {
  const check = validatorFor(file, 'check');
  const first = collectAdvice(() => check(value));
  if (first.result) return adviceIssues(first.advice);
  const explain = validatorFor(file, 'explain');
  const second = collectAdvice(() => explain(value));
  if (second.result) return adviceIssues(second.advice);
  return [...toIssues((explain.errors ?? []) as ErrorObject[], value), ...adviceIssues(second.advice)];
}

/** Only the errors of `validateAgainst` (warnings left out). */
export function errorsOf(issues: readonly SchemaIssue[]): SchemaIssue[] {
  return issues.filter((i) => i.severity !== 'warning');
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
    return [{ path: [], message: `deleting a ${type} integration created with autoBootstrap true needs spec.deleteCredentials (the admin credentials the delete request carries)` }];
  }
  return validateAgainst(`delete/${type}.json`, payload);
}

/** Validate a webhook body item (url, name, global, notificationType, actionType, secret?) as the service would. */
export function validateWebhookItem(item: unknown): SchemaIssue[] {
  return validateAgainst('webhook-item.json', item);
}
