/** Cheap checks that run before the YAML parser, so hostile input fails fast. */

import { MAX_FILE_BYTES } from '../util/limits.js';

export { MAX_FILE_BYTES };
export const MAX_DEPTH = 64;
export const MAX_ALIAS_COUNT = 100;
/**
 * Documents in one file at most. A 1 MiB file of empty documents (`{}` and `---`, 6 bytes each) is 175,000 of them
 * and ~170 MB once parsed: a pull request of such files would exhaust the memory of CI and the daemon.
 */
export const MAX_FILE_DOCUMENTS = 10_000;
/** Leading spaces beyond this mean block nesting far deeper than any manifest needs. */
const MAX_INDENT = 512;

/** A reason to refuse the text before parsing it, or undefined. */
export function precheck(text: string): { message: string; offset: number } | undefined {
  if (text.length > MAX_FILE_BYTES || Buffer.byteLength(text, 'utf8') > MAX_FILE_BYTES) {
    return { message: `file is larger than ${MAX_FILE_BYTES} bytes (1 MiB); manifests are small text files`, offset: 0 };
  }
  const markers = documentMarkers(text, MAX_FILE_DOCUMENTS);
  if (markers >= MAX_FILE_DOCUMENTS) {
    return { message: `more than ${MAX_FILE_DOCUMENTS} documents in one file; split it into several files`, offset: 0 };
  }
  const nul = text.indexOf('\u0000');
  if (nul >= 0) return { message: 'binary content (NUL byte): not a YAML text file', offset: nul };
  const deepIndent = new RegExp(`^ {${MAX_INDENT + 1}}`, 'm').exec(text);
  if (deepIndent) return { message: `nesting too deep (indentation over ${MAX_INDENT} columns)`, offset: deepIndent.index + MAX_INDENT };
  // Flow nesting: only brackets cost work (the regex engine skips the rest).
  const brackets = /[[\]{}]/g;
  let depth = 0;
  for (let m = brackets.exec(text); m; m = brackets.exec(text)) {
    const c = m[0];
    if (c === '[' || c === '{') {
      if (++depth > MAX_DEPTH) return { message: `nesting deeper than ${MAX_DEPTH} levels`, offset: m.index };
    } else if (depth > 0) depth--;
  }
  return undefined;
}

/** Lines that open a document (`---` alone or followed by a space or tab), counted up to `stop`. */
export function documentMarkers(text: string, stop: number): number {
  let n = 0;
  for (let at = text.startsWith('---') ? 0 : text.indexOf('\n---'); at >= 0 && n < stop; at = text.indexOf('\n---', at + 1)) {
    const start = text[at] === '\n' ? at + 1 : at;
    const next = text.charCodeAt(start + 3);
    if (Number.isNaN(next) || next === 10 || next === 13 || next === 32 || next === 9) n++;
  }
  return n;
}

/**
 * Depth of a parsed value (iterative: no recursion on hostile data). Runs on every document of every load:
 * two parallel stacks and `for...in` (no tuple or `Object.values` array per node: issue #26, GC).
 */
export function depthExceeds(value: unknown, max = MAX_DEPTH): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const d = depths.pop()!;
    if (d > max) return true;
    if (Array.isArray(v)) {
      for (const child of v) {
        values.push(child);
        depths.push(d + 1);
      }
    } else if (v && typeof v === 'object') {
      for (const k in v) {
        if (!hasOwn.call(v, k)) continue;
        values.push((v as Record<string, unknown>)[k]);
        depths.push(d + 1);
      }
    }
  }
  return false;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Keys that name JavaScript's object machinery. A manifest never needs one, and a copy made with plain
 * assignment would turn `__proto__` into a prototype while the original still sends it: refused anywhere.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Paths of every FORBIDDEN_KEYS key (or of `keys`) at any depth of a parsed value (own keys only; iterative). */
export function forbiddenKeyPaths(value: unknown, keys: ReadonlySet<string> = FORBIDDEN_KEYS): Array<Array<string | number>> {
  if (!hasForbiddenKey(value, keys)) return []; // the common case, without a path array per node
  const found: Array<Array<string | number>> = [];
  const stack: Array<[unknown, Array<string | number>]> = [[value, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (Array.isArray(v)) v.forEach((child, i) => stack.push([child, [...path, i]]));
    else if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (keys.has(k)) found.push([...path, k]);
        else stack.push([(v as Record<string, unknown>)[k], [...path, k]]);
      }
    }
  }
  return found;
}

/** Whether any of `keys` is an own enumerable key at any depth (as Object.keys; iterative, no array per node). */
function hasForbiddenKey(value: unknown, keys: ReadonlySet<string>): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) for (const child of v) stack.push(child);
    else if (v && typeof v === 'object') {
      for (const k in v) {
        if (!hasOwn.call(v, k)) continue;
        if (keys.has(k)) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}
