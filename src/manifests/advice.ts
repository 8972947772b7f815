/**
 * The `x-advice` keyword of schemas/: checks for what the service interface does not state, reported as
 * warnings, never errors (docs/contract.md). ajv evaluates it in place (so `if`/`then` conditions apply),
 * and it always passes: what it finds goes to the context the validator was called with (`collectAdvice`).
 *
 * Values: `"integer"`, `"non-empty"`, `"unique"`, `"regex"`, `"http-url"`, `{ "closed": "<what>" }`
 * (fields not in `properties`), `{ "unused": [fields], "why"?: text }` (fields present that are not used
 * under the schema's condition), or an array of them.
 */
import { conditionOf } from './conditions.js';
import { pointerToPath } from './issues.js';
import { REF_PLACEHOLDER } from './refs.js';
import { suggestion } from './suggest.js';
import { isPlainObject } from '../util/object.js';

export interface Advice {
  path: (string | number)[];
  message: string;
  target?: 'key' | 'value';
}

type Obj = Record<string, unknown>;

/**
 * Where one validation's advice goes: the `this` a validator is called with (ajv `passContext`), handed to the
 * keyword by the generated code. No module-level sink: two validations never share one.
 */
export interface AdviceContext {
  advice: Advice[];
}

/** Run a validator (generated with `passContext`) with a fresh context, collecting the advice it produces. */
export function collectAdvice<T>(validate: (this: AdviceContext, value: unknown) => T, value: unknown): { result: T; advice: Advice[] } {
  const context: AdviceContext = { advice: [] };
  return { result: validate.call(context, value), advice: context.advice };
}

function show(v: unknown): string {
  return typeof v === 'string' ? `\`${v}\`` : `\`${JSON.stringify(v)}\``;
}

/** `at()`: the path of the value checked, computed only when there is something to report. */
function checkOne(rule: unknown, data: unknown, parent: Obj, at: () => (string | number)[], out: Advice[], condition: string | undefined): void {
  if (data === REF_PLACEHOLDER) return; // a secret reference: its value is not known here
  if (rule === 'integer') {
    // (.nan and .inf are not numbers to the schema: its type error says so)
    if (typeof data === 'number' && Number.isFinite(data) && !Number.isInteger(data)) out.push({ path: at(), message: `${data} is not a whole number` });
  } else if (rule === 'non-empty') {
    if (data === '') out.push({ path: at(), message: 'is empty: the service needs a value here' });
    if (Array.isArray(data) && data.length === 0) out.push({ path: at(), message: 'is empty: nothing is selected' });
  } else if (rule === 'unique') {
    if (Array.isArray(data)) {
      const seen = new Set<string>();
      const repeated = new Set<string>();
      for (const item of data) {
        const k = JSON.stringify(item);
        if (seen.has(k)) repeated.add(typeof item === 'string' ? item : k);
        seen.add(k);
      }
      if (repeated.size) out.push({ path: at(), message: `lists ${[...repeated].join(', ')} more than once (the list is a set)` });
    }
  } else if (rule === 'regex') {
    if (typeof data !== 'string') return;
    if (data.length >= 2 && data.startsWith('/') && data.endsWith('/')) {
      out.push({ path: at(), message: `${show(data)} is written with slashes: write the expression without the leading and trailing slash` });
      return;
    }
    try {
      new RegExp(data);
    } catch {
      out.push({ path: at(), message: `${show(data)} is not a valid regular expression in JavaScript syntax (the service may use another dialect)` });
    }
  } else if (rule === 'http-url') {
    if (typeof data !== 'string') return;
    let ok: boolean;
    try {
      const u = new URL(data);
      ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    if (!ok) out.push({ path: at(), message: `${show(data)} is not an http(s) URL: the service sends each notification to it` });
  } else if (isPlainObject(rule) && typeof rule.closed === 'string') {
    if (!isPlainObject(data)) return;
    const known = isPlainObject(parent.properties) ? Object.keys(parent.properties) : [];
    for (const key of Object.keys(data)) {
      if (known.includes(key)) continue;
      const near = suggestion(key, known);
      const list = !near && known.length > 0 && known.length <= 24 ? ` (fields here: ${known.join(', ')})` : '';
      out.push({
        path: [...at(), key],
        target: 'key',
        message: `unknown field \`${key}\`${near}${list}: not part of ${rule.closed}; govops sends it but does not compare it`,
      });
    }
  } else if (isPlainObject(rule) && Array.isArray(rule.unused)) {
    if (!isPlainObject(data)) return;
    const cond = condition ?? conditionOf(parent);
    const why = typeof rule.why === 'string' ? rule.why : 'the service ignores or rejects it; remove it';
    for (const key of rule.unused) {
      if (typeof key === 'string' && key in data) {
        out.push({ path: [...at(), key], target: 'key', message: `field \`${key}\` is not used${cond ? ` ${cond}` : ''}: ${why}` });
      }
    }
  }
}

/**
 * What the keyword calls (src/manifests/schemas.ts generates the call): never fails, reports to the context the
 * validator was called with (none: nothing collected). `condition`: the parent schema's condition ("when type is
 * ..."), worked out when the code was made.
 */
export function adviceKeyword(
  context: AdviceContext | undefined,
  schema: unknown,
  data: unknown,
  parentSchema?: unknown,
  dataCxt?: { instancePath: string },
  condition?: string,
): boolean {
  const sink = context?.advice;
  if (!sink) return true;
  let path: (string | number)[] | undefined;
  const at = (): (string | number)[] => (path ??= pointerToPath(dataCxt?.instancePath ?? ''));
  const parent = isPlainObject(parentSchema) ? parentSchema : {};
  if (Array.isArray(schema)) for (const rule of schema) checkOne(rule, data, parent, at, sink, condition);
  else checkOne(schema, data, parent, at, sink, condition);
  return true;
}
