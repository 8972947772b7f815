/** Turn ajv errors into SchemaIssues a person can act on (paths, conditions, did-you-mean). */
import type { ErrorObject } from 'ajv';
import { conditionOf, describeIf } from './conditions.js';
import { isSecretRef } from './refs.js';
import { suggestion } from './suggest.js';
import type { SchemaIssue } from './schemas.js';
import { isSensitiveKey } from '../kinds/registry.js';
import { ALL_NOTIFICATIONS } from '../service/events.js';
import { isPlainObject } from '../util/object.js';
import { quotedPart } from '../util/cut.js';
import { withArticle } from '../util/strings.js';


export function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let cur = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  return withArticle(typeof v);
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};

function show(v: unknown): string {
  return typeof v === 'string' ? `\`${quotedPart(v)}\`` : `\`${quotedPart(JSON.stringify(v) ?? String(v))}\``;
}

/** Values of credential fields are never repeated in a message. */
function sensitive(path: (string | number)[]): boolean {
  const last = path[path.length - 1];
  return typeof last === 'string' && (isSensitiveKey(last) || last === 'secret');
}

/** "a string `443` (write it without quotes: 443)": what was found, and how to write what is wanted. */
function found(value: unknown, want: string[], path: (string | number)[]): string {
  // YAML's .nan / .inf are numbers that JSON cannot carry (they would be sent as null)
  if (typeof value === 'number' && !Number.isFinite(value)) {
    const written = Number.isNaN(value) ? '.nan' : value > 0 ? '.inf' : '-.inf';
    return `\`${written}\` (${want.includes('string') ? `put it in quotes: "${written}"` : 'not a finite number: write a number'})`;
  }
  // `field:` with nothing after it: YAML reads null, which the author did not write
  if (value === null) {
    const key = path[path.length - 1];
    return typeof key === 'string' ? `an empty value (nothing is written after \`${key}:\`: write the value, or leave the field out)` : 'an empty item (write its value)';
  }
  // { fromEnv } / { fromFile } where no reference is read (refs.ts replaces those where one is)
  if (isSecretRef(value)) return "a secret reference (references are read only in spec.config, spec.deleteCredentials and a webhook's spec.secret: write the value itself here)";
  const kind = typeName(value);
  if (sensitive(path) || typeof value === 'object') return kind;
  const scalar = `${kind} ${show(value)}`;
  // one value where a list is wanted (`notificationType: modelCreated`, or `a, b` written without brackets)
  if (want.includes('array') && !want.includes(typeof value)) return `${scalar} (write it as a list: [${String(value)}])`;
  if (typeof value === 'string') {
    const t = value.trim();
    if ((want.includes('integer') || want.includes('number')) && t !== '' && Number.isFinite(Number(t))) return `${scalar} (write it without quotes: ${t})`;
    if (want.includes('boolean') && /^(true|false)$/i.test(t)) return `${scalar} (write it without quotes: ${t.toLowerCase()})`;
    if (want.includes('boolean') && /^(yes|no|on|off|y|n)$/i.test(t)) return `${scalar} (write true or false: YAML 1.2 reads ${t} as text)`;
    return scalar;
  }
  if (want.includes('string') && (typeof value === 'number' || typeof value === 'boolean')) return `${scalar} (put it in quotes: "${String(value)}")`;
  return scalar;
}

function withCondition(message: string, cond: string): string {
  return cond ? `${message} ${cond}` : message;
}

function describe(e: ErrorObject, root: unknown, all: ErrorObject[]): Omit<SchemaIssue, 'keyword'> | undefined {
  const path = pointerToPath(e.instancePath);
  const value = valueAt(root, path);
  // a credential field's value is never repeated, whatever the rule it breaks
  const secret = sensitive(path);
  const shown = secret ? 'the value (a credential field: not shown)' : show(value);
  const raw = secret ? 'the value given' : String(value);
  const params = e.params as Record<string, unknown>;
  const cond = conditionOf(e.parentSchema);
  const parent = isPlainObject(e.parentSchema) ? e.parentSchema : {};
  switch (e.keyword) {
    case 'if':
    case 'allOf':
      return undefined; // summaries of errors reported on their own
    case 'required': {
      const prop = String(params.missingProperty);
      return { path, target: 'key', message: withCondition(`missing required field \`${prop}\``, cond ? `(required ${cond})` : '') };
    }
    case 'additionalProperties': {
      const prop = String(params.additionalProperty);
      const elsewhere = isPlainObject(parent['x-elsewhere']) ? parent['x-elsewhere'][prop] : undefined;
      if (typeof elsewhere === 'string') return { path: [...path, prop], target: 'key', message: `unknown field \`${prop}\`: ${elsewhere}` };
      const allowed = isPlainObject(parent.properties) ? Object.keys(parent.properties) : [];
      const near = suggestion(prop, allowed);
      const list = !near && allowed.length > 0 && allowed.length <= 24 ? ` (fields here: ${allowed.join(', ')})` : '';
      return { path: [...path, prop], target: 'key', message: `unknown field \`${prop}\`${near}${list}` };
    }
    case 'false schema': {
      const prop = path[path.length - 1];
      return { path, target: 'key', message: withCondition(`field \`${String(prop)}\` is not allowed`, falseCondition(e, all)) };
    }
    case 'type': {
      const types = String(params.type).split(',');
      const want = types.map((t) => ARTICLE[t] ?? t).join(' or ');
      return { path, message: `must be ${want}, not ${found(value, types, path)}` };
    }
    case 'enum':
      return { path, message: enumMessage((params.allowedValues as unknown[]) ?? [], value, secret, shown) };
    case 'const':
      return { path, message: withCondition(`must be ${JSON.stringify(params.allowedValue)}`, cond) };
    case 'minLength':
      return { path, message: params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters` };
    case 'maxLength':
      return { path, message: `must be at most ${String(params.limit)} characters` };
    case 'minItems':
      return { path, message: params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} items` };
    case 'uniqueItems':
      return { path, message: `must not repeat items (items ${String(params.j)} and ${String(params.i)} are equal)` };
    case 'minimum':
    case 'maximum': {
      const min = parent.minimum;
      const max = parent.maximum;
      if (typeof min === 'number' && typeof max === 'number') return { path, message: `must be between ${min} and ${max}, not ${raw}` };
      return { path, message: `must be ${String(params.comparison)} ${String(params.limit)}, not ${raw}` };
    }
    case 'pattern':
      return { path, message: patternMessage(parent, String(params.pattern), shown) };
    case 'format':
      return { path, message: formatMessage(String(params.format), shown) };
    default:
      return { path, message: e.message ?? `fails ${e.keyword}` };
  }
}

/** A value outside an enum: the list when short, a near value when one is close (never for a credential). */
function enumMessage(allowed: unknown[], value: unknown, secret: boolean, shown: string): string {
  const hint = typeof value === 'string' && !secret ? suggestion(value, allowed.map(String)) : '';
  if (allowed.includes(ALL_NOTIFICATIONS)) {
    const how = hint || ': use an event name of the service (listed by `govops schema`) or ALL_NOTIFICATIONS';
    return `unknown event ${shown}${how}`;
  }
  if (allowed.length > 12) return `unknown value ${shown}${hint || ' (the allowed values are listed by `govops schema`)'}`;
  return `must be one of ${allowed.map((a) => String(a)).join(', ')}, not ${shown}${hint}`;
}

/** A value that does not match its pattern: said as the schema describes the field, when it does. */
function patternMessage(parent: Record<string, unknown>, pattern: string, shown: string): string {
  if (parent.format === 'uri') return `${shown} is not a valid http(s) URL`;
  // common.json#/$defs/hostname (a pattern: ajv's `hostname` format refuses the `_` a URL's host may hold)
  if (parent['x-compare'] === 'host') return formatMessage('hostname', shown);
  if (typeof parent.description === 'string') return `${shown} is not valid: ${parent.description}`;
  return `${shown} does not match ${pattern}`;
}

function formatMessage(format: string, shown: string): string {
  if (format === 'hostname') return `${shown} is not a valid hostname (write the host name only, without scheme, port or path)`;
  if (format === 'uri') return `${shown} is not a valid http(s) URL`;
  if (format === 'regex') return `${shown} is not a valid regular expression`;
  return `must be a valid ${format}`;
}

/**
 * ajv gives no parent for a `false` schema; its condition comes from the `if` error ajv reports next
 * to it: same schema path up to `/then/` (or `/else/`), at the parent object.
 */
function falseCondition(e: ErrorObject, all: ErrorObject[]): string {
  const m = /^(.*)\/(then|else)\/properties\/[^/]+\/false schema$/.exec(e.schemaPath);
  if (!m) return '';
  const parentPointer = e.instancePath.slice(0, e.instancePath.lastIndexOf('/'));
  const ifError = all.find((x) => x.keyword === 'if' && x.schemaPath === `${m[1]}/if` && x.instancePath === parentPointer);
  const ps = ifError?.parentSchema as Record<string, unknown> | undefined;
  if (!ps) return '';
  const d = describeIf(ps.if);
  return d ? `${m[2] === 'then' ? 'when' : 'unless'} ${d}` : '';
}

function under(path: (string | number)[], prefix: (string | number)[]): boolean {
  return prefix.length <= path.length && prefix.every((seg, i) => String(seg) === String(path[i]));
}

export function toIssues(errors: ErrorObject[], root: unknown): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const seen = new Set<string>();
  // A field that is not allowed at all: what is wrong inside it is noise.
  const forbidden = errors.filter((e) => e.keyword === 'false schema').map((e) => pointerToPath(e.instancePath));
  for (const e of errors) {
    if (e.keyword !== 'false schema' && forbidden.some((f) => under(pointerToPath(e.instancePath), f))) continue;
    const issue = describe(e, root, errors);
    if (!issue) continue;
    const key = `${JSON.stringify(issue.path)}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ...issue, keyword: e.keyword });
  }
  return out;
}
