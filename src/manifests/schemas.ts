/**
 * Validation against the JSON Schemas of schemas/ (ajv, draft 2020-12, `strict: true`) and default
 * filling. Used by the manifest loader and `govops validate`. Rules the service interface does not state
 * are `x-advice` keywords: warnings, never errors (docs/contract.md).
 *
 * The common case — a valid document — costs no schema compilation: the build (scripts/build-validators.mjs)
 * turns the schemas into validation code once (ajv standalone, `dist/manifests/validators.generated.cjs`),
 * loaded here without ajv itself. Without that file (running from the sources), the same validators are
 * compiled on first use. The validators that explain an invalid value (every error, with its schema
 * context) are always compiled at run time, and only once some value is invalid.
 */
import { createRequire } from 'node:module';
import type { ErrorObject, KeywordCxt, ValidateFunction } from 'ajv';
import type { IntegrationType } from '../kinds/registry.js';
import { DELETE_PAYLOAD_KINDS, kindOf } from '../kinds/registry.js';
import { adviceKeyword, collectAdvice } from './advice.js';
import { conditionOf } from './conditions.js';
import { SCHEMA_FILES, schemaDocuments, schemaId } from './schema-files.js';
import { toIssues } from './issues.js';

export interface SchemaIssue {
  /** Path inside the object validated. */
  path: (string | number)[];
  /** The schema keyword that failed, as ajv names it (`pattern`, `required`, ...), or `x-advice` for a warning. */
  keyword: string;
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

const require = createRequire(import.meta.url);

/** ajv's pieces, loaded on first use (CommonJS). */
function ajvLib() {
  type Codegen = typeof import('ajv/dist/compile/codegen/index.js');
  return {
    Ajv2020: (require('ajv/dist/2020.js') as { default: new (opts: object) => AjvLike }).default,
    addFormats: (require('ajv-formats') as { default: (ajv: AjvLike, formats?: string[]) => void }).default,
    codegen: require('ajv/dist/compile/codegen/index.js') as Codegen,
    names: (require('ajv/dist/compile/names.js') as { default: { instancePath: import('ajv').Name } }).default,
  };
}

/** The export of the generated module that `x-advice` calls (set when the module is loaded; named in the code below). */
const ADVICE_EXPORT = 'adviceKeyword';

/**
 * `x-advice` as generated code: a call to adviceKeyword(this, schema, data, parentSchema, { instancePath }, condition)
 * (`this`: the validation's context, passed down by ajv's `passContext`),
 * evaluated in place (so `if`/`then` conditions apply); it never fails. In generated standalone code the
 * function is the module's own `adviceKeyword` export, set by whoever loads it.
 */
function adviceKeywordDefinition(lib: ReturnType<typeof ajvLib>): object {
  const { _, stringify, strConcat } = lib.codegen;
  return {
    keyword: 'x-advice',
    schemaType: ['string', 'object', 'array'],
    code(cxt: KeywordCxt) {
      const { gen, schema, parentSchema, data, it } = cxt;
      const fn = gen.scopeValue('keyword', { ref: adviceKeyword, code: _`((...a) => exports.adviceKeyword(...a))` });
      const sch = gen.scopeValue('schema', { ref: schema as unknown, code: stringify(schema) });
      const parent = gen.scopeValue('schema', { ref: parentSchema as unknown, code: stringify(parentSchema) });
      // the schema's condition ("when type is ...") is known now; generated code holds copies of the schemas
      gen.code(_`${fn}(this, ${sch}, ${data}, ${parent}, { instancePath: ${strConcat(lib.names.instancePath, it.errorPath)} }, ${conditionOf(parentSchema)})`);
    },
  };
}

type Mode = 'check' | 'explain';

/**
 * An ajv instance over every schema. `check` answers "valid?" (the common case); `explain` collects every
 * error with its schema context (`allErrors`, `verbose`). `source`: keep the code, for standalone output.
 */
function makeAjv(mode: Mode, source = false): AjvLike {
  const lib = ajvLib();
  const a = new lib.Ajv2020({
    allErrors: mode === 'explain',
    verbose: mode === 'explain',
    // x-advice reports to the context a validator is called with (collectAdvice), not to a module-level sink.
    passContext: true,
    strict: true,
    inlineRefs: false,
    code: source
      ? { source: true, optimize: true, formats: lib.codegen._`require("ajv-formats/dist/formats").fullFormats` }
      : { optimize: false },
  });
  lib.addFormats(a, ['uri', 'hostname', 'regex']);
  a.addKeyword(adviceKeywordDefinition(lib));
  a.addKeyword({ keyword: 'x-unordered', schemaType: 'boolean' });
  a.addKeyword({ keyword: 'x-compare', schemaType: 'string' });
  for (const schema of schemaDocuments().values()) a.addSchema(schema);
  return a;
}

/** Export name of a schema file's validator in the generated module. */
const exportName = (file: string): string => `v${SCHEMA_FILES.indexOf(file as (typeof SCHEMA_FILES)[number])}`;

/** The generated code of every schema's check validator (ajv standalone, CommonJS): the build writes it next to this module. */
export function standaloneValidators(): string {
  const a = makeAjv('check', true);
  const standalone = (require('ajv/dist/standalone/index.js') as { default: (ajv: AjvLike, refs: Record<string, string>) => string }).default;
  return standalone(a, Object.fromEntries(SCHEMA_FILES.map((f) => [exportName(f), schemaId(f)])));
}

export const GENERATED_VALIDATORS = './validators.generated.cjs';

/** The generated validators, or undefined when there are none (running from the sources). */
function generated(): Record<string, ValidateFunction | undefined> | undefined {
  if (generatedModule !== undefined) return generatedModule || undefined;
  try {
    const mod = require(GENERATED_VALIDATORS) as Record<string, unknown>;
    mod[ADVICE_EXPORT] = adviceKeyword;
    generatedModule = mod as Record<string, ValidateFunction | undefined>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    generatedModule = false;
  }
  return generatedModule || undefined;
}
let generatedModule: Record<string, ValidateFunction | undefined> | false | undefined;

const instances: Partial<Record<Mode, AjvLike>> = {};
const compiled: Record<Mode, Map<string, ValidateFunction>> = { check: new Map(), explain: new Map() };

/** The validator of a schema file (e.g. a kind's `config/<type>.json`): generated when the build made it, else compiled once. */
export function validatorFor(file: string, mode: Mode = 'check'): ValidateFunction {
  let fn = compiled[mode].get(file);
  if (!fn) {
    const id = schemaId(file);
    fn = mode === 'check' && SCHEMA_FILES.includes(file as (typeof SCHEMA_FILES)[number]) ? generated()?.[exportName(file)] : undefined;
    fn ??= (instances[mode] ??= makeAjv(mode)).getSchema(id);
    if (!fn) throw new Error(`no schema ${id}`);
    compiled[mode].set(file, fn);
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
    out.push({ path: a.path, keyword: 'x-advice', message: a.message, severity: 'warning', ...(a.target ? { target: a.target } : {}) });
  }
  return out;
}

/** Validate `value` against a schema file; every problem, as SchemaIssues (errors, then warnings). */
export function validateAgainst(file: string, value: unknown): SchemaIssue[] {
  const check = validatorFor(file, 'check');
  const first = collectAdvice(check, value);
  if (first.result) return adviceIssues(first.advice);
  const explain = validatorFor(file, 'explain');
  const second = collectAdvice(explain, value);
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
      : [{ path: [], keyword: 'false schema', message: `a ${type} integration is deleted without a payload` }];
  }
  if (payload === undefined || payload === null) {
    return [{ path: [], keyword: 'required', message: `deleting a ${type} integration created with autoBootstrap true needs spec.deleteCredentials (the admin credentials the delete request carries)` }];
  }
  return validateAgainst(kindOf(type).deleteSchema!, payload);
}

/** Validate a webhook body item (url, name, global, notificationType, actionType, secret?) as the service would. */
export function validateWebhookItem(item: unknown): SchemaIssue[] {
  return validateAgainst('webhook-item.json', item);
}
