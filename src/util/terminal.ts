/**
 * The one escaper of text shown on a terminal. Manifests (a YAML key may hold a newline and `error: forged`, or
 * `\e[2J`) and the service (names, messages) are untrusted: every text renderer passes their strings through
 * `printable`, so a control character can neither forge a line nor drive the terminal. Escaped: C0 controls
 * (newline, carriage return, tab, ESC, ...), DEL, C1 controls, and the invisible format characters that reorder
 * or hide text (bidirectional overrides and isolates, zero-width characters, line and paragraph separators).
 * JSON output needs none of this: JSON escaping is enough there.
 */

import { redactText } from './redact.js';

// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const escapeOne = (c: string): string => NAMED[c] ?? (c.charCodeAt(0) < 0x100 ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * `text` with every control and invisible format character written as an escape (`\n`, `\x1b`, `\u202e`).
 * Redacted first: the output boundary's redactor knows a secret's encodings, not this escaping of them.
 */
export function printable(text: string): string {
  UNPRINTABLE.lastIndex = 0;
  return UNPRINTABLE.test(text) ? redactText(text).replace(UNPRINTABLE, escapeOne) : text;
}

const BEYOND_ASCII_CONTROLS = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * Output a formatter drew with its own colours (ESC) and line breaks, from parts already escaped or JSON-encoded
 * (pino-pretty): the characters JSON leaves as they are (DEL, C1 controls, invisible format characters) escaped.
 */
export function printableFormatted(text: string): string {
  BEYOND_ASCII_CONTROLS.lastIndex = 0;
  return BEYOND_ASCII_CONTROLS.test(text) ? text.replace(BEYOND_ASCII_CONTROLS, escapeOne) : text;
}

/**
 * Text of several lines from one source (an error with a hint): each line made printable, the line breaks kept.
 * Redacted whole first: a value of several lines (a key) is no longer found once split into lines.
 */
export function printableLines(text: string): string {
  return redactText(text).split('\n').map(printable).join('\n');
}

/** A value as JSON for a terminal: JSON escapes the C0 controls, `printable` the rest (DEL, C1, format characters). */
export function printableJson(value: unknown): string {
  return printable(JSON.stringify(value) ?? 'null');
}

const isUnprintable = (s: string): boolean => {
  UNPRINTABLE.lastIndex = 0;
  return UNPRINTABLE.test(s);
};

const hasOwn = Object.prototype.hasOwnProperty;

/** Whether any string (value or key) of JSON-like data, outside the `raw` fields, would be escaped. */
function holdsUnprintable(value: unknown, raw: ReadonlySet<string>): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (isUnprintable(v)) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v && typeof v === 'object') {
      // (for...in, not Object.entries: no entries array per object of a 10,000-change plan; issue #26)
      for (const k in v) {
        if (!hasOwn.call(v, k)) continue;
        if (isUnprintable(k)) return true;
        if (!raw.has(k)) stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/**
 * A deep copy of JSON-like data with every string (values and keys) made printable, for a renderer to draw from.
 * The fields named in `raw` are copied as they are (a renderer that prints them with `printableJson`).
 */
export function printableData<T>(value: T, raw: ReadonlySet<string> = new Set()): T {
  if (!holdsUnprintable(value, raw)) return value; // the common case: no copy
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return printable(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) Object.defineProperty(out, printable(k), { value: raw.has(k) ? x : walk(x), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
