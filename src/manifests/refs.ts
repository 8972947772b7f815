/**
 * Secret references in manifests ({ fromEnv: NAME } / { fromFile: PATH }): shape checks, and
 * replacement by a placeholder string so the API schemas can validate the rest. Resolution of the
 * values is src/manifests/secrets.ts (plan/apply only, never validate).
 */
import type { SecretRef } from './types.js';
import { didYouMean } from './suggest.js';
import { isPlainObject } from '../util/object.js';

export const REF_KEYS = ['fromEnv', 'fromFile'] as const;
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** What a reference is replaced by for schema validation (a valid hostname / identifier). */
export const REF_PLACEHOLDER = 'secretref';

export interface RefIssue {
  path: (string | number)[];
  message: string;
  target?: 'key' | 'value';
}

export function isSecretRef(v: unknown): v is SecretRef {
  if (!isPlainObject(v) || !('fromEnv' in v || 'fromFile' in v)) return false;
  const keys = Object.keys(v);
  if (keys.length !== 1) return false;
  if (keys[0] === 'fromEnv') return typeof v.fromEnv === 'string' && ENV_NAME.test(v.fromEnv);
  if (keys[0] === 'fromFile') return typeof v.fromFile === 'string' && v.fromFile.length > 0;
  return false;
}

/** Is this object meant as a secret reference (has a ref key, or one key that is a near miss)? */
function refIntent(v: Record<string, unknown>): { near?: string } | undefined {
  // (no key array: this runs for every object of every manifest)
  let count = 0;
  let only: string | undefined;
  for (const k in v) {
    if (k === 'fromEnv' || k === 'fromFile') return {};
    if (++count === 1) only = k;
  }
  if (count === 1 && /^fr|env|file/i.test(only!)) {
    const near = didYouMean(only!, REF_KEYS);
    if (near) return { near };
  }
  return undefined;
}

function checkRef(v: Record<string, unknown>, path: (string | number)[], issues: RefIssue[]): void {
  const keys = Object.keys(v);
  const intent = refIntent(v)!;
  if (intent.near) {
    issues.push({ path: [...path, keys[0]!], target: 'key', message: `unknown secret reference \`${keys[0]}\` (did you mean \`${intent.near}\`?)` });
    return;
  }
  if (keys.length !== 1) {
    issues.push({ path, message: 'a secret reference has exactly one key: fromEnv or fromFile' });
    return;
  }
  const key = keys[0]!;
  const value = v[key];
  if (typeof value !== 'string' || value.length === 0) {
    issues.push({ path: [...path, key], message: `\`${key}\` must be a non-empty string` });
  } else if (key === 'fromEnv' && !ENV_NAME.test(value)) {
    issues.push({ path: [...path, key], message: `\`${value}\` is not a valid environment variable name (letters, digits, _; not starting with a digit)` });
  }
}

/**
 * `value` with every secret reference replaced by REF_PLACEHOLDER: copied along the way to each reference, the
 * rest shared (`value` itself when it holds none; a manifest is checked, never changed). Malformed references
 * are reported in `issues` (and replaced too, so they are not reported twice); the paths of all replaced
 * references are added to `refPaths` (as JSON pointers).
 */
export function replaceRefs(
  value: unknown,
  path: (string | number)[],
  issues: RefIssue[],
  refPaths: Set<string>,
): unknown {
  // `path` is used as a stack (pushed and popped in place): copied only when something is recorded.
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const v = replaceRefs(value[i], path, issues, refPaths);
      path.pop();
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  if (refIntent(value)) {
    if (!isSecretRef(value)) checkRef(value, [...path], issues);
    refPaths.add(toPointer(path));
    return REF_PLACEHOLDER;
  }
  let out: Record<string, unknown> | undefined;
  for (const k in value) {
    path.push(k);
    const v = replaceRefs(value[k], path, issues, refPaths);
    path.pop();
    if (v !== value[k]) (out ??= { ...value })[k] = v;
  }
  return out ?? value;
}

export function toPointer(path: ReadonlyArray<string | number>): string {
  return path.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
