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
import { DELETE_PAYLOAD_KINDS, KINDS, kindOf } from '../kinds/registry.js';
import { adviceKeyword, collectAdvice } from './advice.js';
import { conditionOf } from './conditions.js';
import { SCHEMA_FILES, schemaDocuments, schemaId } from './schema-files.js';
import { toIssues } from './issues.js';
import { withArticle } from '../util/strings.js';

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
function makeAjv(mode: Mode, source = false, documents: Iterable<object> = schemaDocuments().values()): AjvLike {
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
  // fields that belong elsewhere in a manifest: what to say of one written here (issues.ts, additionalProperties)
  a.addKeyword({ keyword: 'x-elsewhere', schemaType: 'object' });
  for (const schema of documents) a.addSchema(schema);
  return a;
}

/** Export name of a schema file's validator in the generated module. */
const exportName = (file: string): string => `v${SCHEMA_FILES.indexOf(file as (typeof SCHEMA_FILES)[number])}`;

/** The generated code of every schema's check validator (ajv standalone, CommonJS): the build writes it next to this module. */
export function standaloneValidators(): string {
  return standaloneCode(makeAjv('check', true), Object.fromEntries(SCHEMA_FILES.map((f) => [exportName(f), schemaId(f)])));
}

/** ajv's standalone code of the schemas `refs` names (export name → schema id), compiled in `a`. */
function standaloneCode(a: AjvLike, refs: Record<string, string>): string {
  const standalone = (require('ajv/dist/standalone/index.js') as { default: (ajv: AjvLike, refs: Record<string, string>) => string }).default;
  return standalone(a, refs);
}

export const GENERATED_VALIDATORS = './validators.generated.cjs';

/**
 * Lazy schema code per kind (issue #26): the manifest check of one Integration kind, or of the other manifest
 * kinds (`other`), as its own generated module, so a run loads the code of the kinds it meets only (one
 * integration: ~1/6 of the full module). A variant is manifest.json with the branches that cannot apply left
 * out: in integration-rules.json / integration-spec.json every `allOf` entry whose `if` requires `type` equal
 * to another kind (its `if` is false for a value of this kind) and manifest.json's branches for the other
 * manifest kinds; for `other`, manifest.json's `kind: Integration` branch. Exact for the values
 * `manifestVariant` gives the key to (test/manifests/generated-validators.test.ts); anything else (no kind, an
 * unknown type, running from the sources) uses the full check.
 */
export const MANIFEST_VARIANTS: readonly string[] = [...KINDS.types, 'other'];

/** The manifest variant (a kind's type, or `other`) whose check answers exactly as manifest.json's for `value`. */
export function manifestVariant(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { kind, spec } = value as { kind?: unknown; spec?: unknown };
  if (typeof kind !== 'string') return undefined;
  if (kind !== 'Integration') return 'other';
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return undefined;
  const type = (spec as { type?: unknown }).type;
  return typeof type === 'string' && (KINDS.types as readonly string[]).includes(type) ? type : undefined;
}

/**
 * Does an `allOf` entry apply only when `field` equals a constant: `drop`, or (drop undefined) one other than
 * `keep`? (Its `if` requires the field and that constant, so it is false for any other value of the field.)
 */
function branchFor(entry: unknown, field: string, drop: string | undefined, keep: string | undefined): boolean {
  const cond = (entry as { if?: { properties?: Record<string, { const?: unknown }>; required?: unknown } } | null)?.if;
  const value = cond?.properties?.[field]?.const;
  if (typeof value !== 'string' || !Array.isArray(cond?.required) || !cond.required.includes(field)) return false;
  return drop !== undefined ? value === drop : value !== keep;
}

/** The schema documents of a manifest variant (copies where branches are left out; the rest shared). */
function variantDocuments(key: string): object[] {
  const type = key === 'other' ? undefined : key;
  // without the entries for `field` equal to `drop`, or (drop undefined) to anything but `keep`
  const without = (doc: JsonSchemaDoc, field: string, drop: string | undefined, keep?: string): JsonSchemaDoc => {
    if (!Array.isArray(doc.allOf)) return doc;
    const { allOf, ...rest } = doc;
    const kept = allOf.filter((e) => !branchFor(e, field, drop, keep));
    return kept.length > 0 ? { ...rest, allOf: kept } : rest; // (an empty allOf is not a valid schema)
  };
  return [...schemaDocuments()].map(([id, doc]) => {
    if (id === schemaId('integration-rules.json') || id === schemaId('integration-spec.json')) return without(doc, 'type', undefined, type);
    if (id === schemaId('manifest.json')) return type === undefined ? without(doc, 'kind', 'Integration') : without(doc, 'kind', undefined, 'Integration');
    return doc;
  });
}
type JsonSchemaDoc = Record<string, unknown> & { allOf?: unknown[] };

/** The generated code of a manifest variant's check validator (export `v`). */
export function standaloneManifestVariant(key: string): string {
  return standaloneCode(makeAjv('check', true, variantDocuments(key)), { v: schemaId('manifest.json') });
}

/** Where the build writes a manifest variant (relative to this module). */
export const generatedVariant = (key: string): string => `./validators/manifest.${key}.generated.cjs`;

/** The generated check of a manifest variant, loaded on first use; undefined without a build. */
function variantValidator(key: string): ValidateFunction | undefined {
  return loadGenerated(generatedVariant(key))?.v;
}

/** The check of `value` against `file`: for a manifest, its variant's when the build made it. */
function checkValidator(file: string, value: unknown): ValidateFunction {
  if (file === 'manifest.json') {
    const key = manifestVariant(value);
    const fn = key === undefined ? undefined : variantValidator(key);
    if (fn) return fn;
  }
  return validatorFor(file, 'check');
}

type GeneratedModule = Record<string, ValidateFunction | undefined>;
const generatedModules = new Map<string, GeneratedModule | false>();

/**
 * A generated validators module (relative to this one), required once with the advice keyword's code handed to it;
 * undefined when the build did not make it (running from the sources).
 */
function loadGenerated(path: string): GeneratedModule | undefined {
  let mod = generatedModules.get(path);
  if (mod === undefined) {
    try {
      const loaded = require(path) as Record<string, unknown>;
      loaded[ADVICE_EXPORT] = adviceKeyword;
      mod = loaded as GeneratedModule;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
      mod = false;
    }
    generatedModules.set(path, mod);
  }
  return mod || undefined;
}

/** The generated validators of every schema, or undefined when there are none (running from the sources). */
const generated = (): GeneratedModule | undefined => loadGenerated(GENERATED_VALIDATORS);

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
  const check = checkValidator(file, value);
  const first = collectAdvice(check, value);
  if (first.result) return adviceIssues(first.advice);
  const explain = validatorFor(file, 'explain');
  const second = collectAdvice(explain, value);
  if (second.result) return adviceIssues(second.advice);
  const issues = toIssues((explain.errors ?? []) as ErrorObject[], value);
  return [...issues.map((i) => (i.message.endsWith(LEAVE_OUT) ? requiredWhenEmpty(i, value, explain) : i)), ...adviceIssues(second.advice)];
}

/** The hint of an empty value (issues.ts), wrong for a required field: left out, it is the next error. */
const LEAVE_OUT = 'write the value, or leave the field out)';

/** An empty field's issue, told it is required when the value without it misses it (validated once more). */
function requiredWhenEmpty(issue: SchemaIssue, value: unknown, explain: ValidateFunction): SchemaIssue {
  const key = issue.path[issue.path.length - 1];
  if (typeof key !== 'string') return issue;
  const parentPath = issue.path.slice(0, -1);
  const without = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    const copy = (Array.isArray(v) ? [...(v as unknown[])] : { ...(v as Record<string, unknown>) }) as Record<string | number, unknown>;
    if (depth === parentPath.length) delete copy[key];
    else copy[parentPath[depth]!] = without(copy[parentPath[depth]!], depth + 1);
    return copy;
  };
  const copy = without(value, 0);
  const { result } = collectAdvice(explain, copy);
  const pointer = parentPath.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  const missing = !result && (explain.errors ?? []).some((e) => e.keyword === 'required' && e.instancePath === pointer && (e.params as { missingProperty?: string }).missingProperty === key);
  if (!missing) return issue;
  return { ...issue, message: `${issue.message.slice(0, -LEAVE_OUT.length)}write the value, the field is required)` };
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
      : [{ path: [], keyword: 'false schema', message: `${withArticle(type)} integration is deleted without a payload` }];
  }
  if (payload === undefined || payload === null) {
    return [{ path: [], keyword: 'required', message: `deleting ${withArticle(type)} integration created with autoBootstrap true needs spec.deleteCredentials (the admin credentials the delete request carries)` }];
  }
  return validateAgainst(kindOf(type).deleteSchema!, payload);
}

/** Validate a webhook body item (url, name, global, notificationType, actionType, secret?) as the service would. */
export function validateWebhookItem(item: unknown): SchemaIssue[] {
  return validateAgainst('webhook-item.json', item);
}
