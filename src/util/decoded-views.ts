/**
 * A text read through decoders, for the redactor (src/util/redact.ts): what the forms of a secret (src/util/secret-forms.ts)
 * cannot enumerate. The forms are the value through up to three encodings chosen from a list; an echo can hold it deeper
 * (a JSON string in a JSON string four or more times over), or written by an escaper with a spelling the list does not
 * have (XML's `&apos;`, Go html/template's `&#43;`, a lower-case hex entity `&#x2b;`, JSON `\u` escapes of every
 * character, `%XX` of every byte, lower-case hex with `+` for a space). Each *view* is the text with every escape of one
 * family decoded once, and with a map from each of its characters back to where it came from in the text: a form found
 * in a view is replaced in the text, whole escapes only.
 *
 * The families, each decoding what any of its writers writes (so one decoder per family, not one per writer):
 * - backslash: `\\ \" \' \/` and a backquote, `\b \f \n \r \t \v \a \e`, `\uXXXX`, `\xXX`, `\UXXXXXXXX` (JSON,
 *   JavaScript, Python's repr, Go's %q, Node's inspect; either hex case), `\xXX` bytes of UTF-8 together (Python's repr
 *   of bytes: `b'\xc3\xa9'`); another backslash stays as it is.
 * - percent: `%XX` of a byte (either hex case), bytes of UTF-8 decoded together, a byte that is no UTF-8 as Latin-1.
 * - form: the same, and `+` as a space (a query string, an HTML form).
 * - html: `&name;` (HTML 4's names, `&apos;`), `&#DDD;`, `&#xHHH;` (either case of `x` and of the hex, leading zeros).
 *
 * Views are made breadth first, each family applied to each view made so far (a view that decodes nothing, or that
 * another view already is, is not kept), so a text nested in several families is read in any order of them.
 *
 * Bounds (redaction runs on every log line): at most MAX_VIEW_DEPTH decodings in a row and at most MAX_VIEWS views of a
 * text, each made in one pass of the view it comes from; a text holding none of `\ % & +` has none (one test of it).
 * So a text costs at most MAX_VIEWS + 1 scans of its length to make its views, and as many for the matcher to read
 * them: linear in its length whatever it holds. A text is seldom past the first level: a JSON log line holding `\"`
 * has one view, or two. Pure.
 */

import { HTML4_NAMED } from './secret-forms.js';

/** At most this many decodings in a row (with the forms' three encodings, a value nested eleven times over is found). */
export const MAX_VIEW_DEPTH = 8;
/** At most this many views of one text. */
export const MAX_VIEWS = 24;

export interface DecodedView {
  text: string;
  /**
   * For each character of `text`, where the escape (or character) it came from starts in the original text; one more
   * entry, the original text's length. A match at [a, b) in the view covers [from[a], from[b]) of the original.
   */
  from: Int32Array;
}

/** Something to decode: a text and, when a map is asked for, where its characters came from. */
type Decoder = (text: string, map: boolean) => { text: string; local: number[] | undefined } | undefined;

/** Builds a decoded text and, when asked, its map to the text it was decoded from. */
class Out {
  text = '';
  readonly local: number[] | undefined;
  changed = false;
  constructor(map: boolean) {
    this.local = map ? [] : undefined;
  }
  push(s: string, at: number): void {
    this.text += s;
    if (this.local) for (let k = 0; k < s.length; k++) this.local.push(at);
  }
  done(length: number): { text: string; local: number[] | undefined } | undefined {
    if (!this.changed) return undefined;
    this.local?.push(length);
    return { text: this.text, local: this.local };
  }
}

const BACKSLASH_SHORT: Readonly<Record<string, string>> = {
  '\\': '\\',
  '"': '"',
  "'": "'",
  '/': '/',
  '`': '`',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  a: '\x07',
  e: '\x1b',
};

const HEX = /^[0-9a-fA-F]+$/;

/** The hex number of `text[at, at + n)`, or -1 when those are not n hex digits. */
function hexAt(text: string, at: number, n: number): number {
  const h = text.slice(at, at + n);
  return h.length === n && HEX.test(h) ? parseInt(h, 16) : -1;
}

const backslash: Decoder = (text, map) => {
  if (!text.includes('\\')) return undefined;
  const out = new Out(map);
  let i = 0;
  while (i < text.length) {
    const j = text.indexOf('\\', i);
    if (j < 0 || j === text.length - 1) break;
    copy(out, text, i, j);
    const d = text[j + 1]!;
    const short = BACKSLASH_SHORT[d];
    let cp = -1;
    let len = 2;
    if (short !== undefined) cp = short.charCodeAt(0);
    else if (d === 'u') [cp, len] = [hexAt(text, j + 2, 4), 6];
    else if (d === 'x') {
      // bytes of UTF-8 as Python's repr of bytes writes them (`b'\xc3\xa9'`), else one character (`'\x1b'`)
      const u = utf8At(text, j, X_BYTE);
      [cp, len] = u && u.n > 1 ? [u.cp, 4 * u.n] : [hexAt(text, j + 2, 2), 4];
    }
    else if (d === 'U') [cp, len] = [hexAt(text, j + 2, 8), 10];
    if (cp < 0 || cp > 0x10ffff) {
      out.push('\\', j);
      i = j + 1;
      continue;
    }
    out.push(String.fromCodePoint(cp), j);
    out.changed = true;
    i = j + len;
  }
  if (!out.changed) return undefined;
  copy(out, text, i, text.length);
  return out.done(text.length);
};

/** text[i, j) as it is. */
function copy(out: Out, text: string, i: number, j: number): void {
  out.text += text.slice(i, j);
  if (out.local) for (let k = i; k < j; k++) out.local.push(k);
}

/** A byte written as `%XX` (3 characters) or `\xXX` (4). */
interface ByteEscape {
  width: number;
  at(text: string, at: number): number;
}
/** The byte of `%XX` at `at`, or -1. */
const PCT_BYTE: ByteEscape = { width: 3, at: (text, at) => (text.charCodeAt(at) === 37 ? hexAt(text, at + 1, 2) : -1) };
/** The byte of `\xXX` at `at`, or -1. */
const X_BYTE: ByteEscape = { width: 4, at: (text, at) => (text.charCodeAt(at) === 92 && text.charCodeAt(at + 1) === 120 ? hexAt(text, at + 2, 2) : -1) };

/** The UTF-8 sequence of escaped bytes at `at`: its code point and how many bytes, or undefined when it is not one. */
function utf8At(text: string, at: number, escape: ByteEscape = PCT_BYTE): { cp: number; n: number } | undefined {
  const b0 = escape.at(text, at);
  if (b0 < 0) return undefined;
  if (b0 < 0x80) return { cp: b0, n: 1 };
  const n = b0 >= 0xc2 && b0 <= 0xdf ? 2 : b0 >= 0xe0 && b0 <= 0xef ? 3 : b0 >= 0xf0 && b0 <= 0xf4 ? 4 : 0;
  if (n === 0) return undefined;
  let cp = b0 & (0x7f >> n);
  for (let k = 1; k < n; k++) {
    const b = escape.at(text, at + escape.width * k);
    if (b < 0x80 || b > 0xbf) return undefined;
    cp = (cp << 6) | (b & 0x3f);
  }
  const min = n === 2 ? 0x80 : n === 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
  return { cp, n };
}

function percentDecoder(plusIsSpace: boolean): Decoder {
  return (text, map) => {
    if (!text.includes('%') && !(plusIsSpace && text.includes('+'))) return undefined;
    const out = new Out(map);
    for (let i = 0; i < text.length; ) {
      const c = text[i]!;
      if (c === '+' && plusIsSpace) {
        out.push(' ', i);
        out.changed = true;
        i++;
        continue;
      }
      const u = c === '%' ? utf8At(text, i) : undefined;
      const latin1 = c === '%' && !u ? PCT_BYTE.at(text, i) : -1;
      if (u) {
        out.push(String.fromCodePoint(u.cp), i);
        out.changed = true;
        i += 3 * u.n;
      } else if (latin1 >= 0) {
        // not UTF-8: a byte of Latin-1 (Java's URLEncoder with ISO-8859-1, PHP's urlencode of a Latin-1 string)
        out.push(String.fromCharCode(latin1), i);
        out.changed = true;
        i += 3;
      } else {
        out.push(c, i);
        i++;
      }
    }
    return out.done(text.length);
  };
}

const NAMED: ReadonlyMap<string, string> = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ...[...HTML4_NAMED].map(([cp, name]): [string, string] => [name, String.fromCodePoint(cp)]),
]);

const ENTITY = /&(?:#([0-9]{1,8})|#[xX]([0-9a-fA-F]{1,8})|([A-Za-z][A-Za-z0-9]{1,8}));/y;

const html: Decoder = (text, map) => {
  if (!text.includes('&')) return undefined;
  const out = new Out(map);
  let i = 0;
  for (;;) {
    const j = text.indexOf('&', i);
    if (j < 0) break;
    ENTITY.lastIndex = j;
    const m = ENTITY.exec(text);
    let decoded: string | undefined;
    if (m) {
      const cp = m[1] !== undefined ? parseInt(m[1], 10) : m[2] !== undefined ? parseInt(m[2], 16) : -1;
      decoded = cp >= 0 ? (cp <= 0x10ffff ? String.fromCodePoint(cp) : undefined) : NAMED.get(m[3]!);
    }
    copy(out, text, i, j);
    if (m && decoded !== undefined) {
      out.push(decoded, j);
      out.changed = true;
      i = j + m[0].length;
    } else {
      out.push('&', j);
      i = j + 1;
    }
  }
  if (!out.changed) return undefined;
  copy(out, text, i, text.length);
  return out.done(text.length);
};

/** The decoders, one per family; a view of each is made from each view. */
const DECODERS: readonly Decoder[] = [backslash, html, percentDecoder(false), percentDecoder(true)];

/** Whether a text may have a view at all (one scan). */
const DECODABLE = /[\\%&+]/;

/**
 * The views of `text` (not the text itself), breadth first; with `map` false their `from` is empty (to test whether a
 * form occurs in any of them, without the cost of the maps).
 */
export function decodedViews(text: string, map = true): DecodedView[] {
  if (!DECODABLE.test(text)) return [];
  const seen = new Set<string>([text]);
  const views: DecodedView[] = [];
  let frontier: DecodedView[] = [{ text, from: map ? identity(text.length) : EMPTY }];
  for (let depth = 0; depth < MAX_VIEW_DEPTH && frontier.length; depth++) {
    const next: DecodedView[] = [];
    for (const v of frontier) {
      for (const decode of DECODERS) {
        if (views.length >= MAX_VIEWS) return views;
        const d = decode(v.text, map);
        if (!d || seen.has(d.text)) continue;
        seen.add(d.text);
        const view = { text: d.text, from: d.local ? compose(v.from, d.local) : EMPTY };
        views.push(view);
        next.push(view);
      }
    }
    frontier = next;
  }
  return views;
}

const EMPTY = new Int32Array(0);

function identity(n: number): Int32Array {
  const a = new Int32Array(n + 1);
  for (let k = 0; k <= n; k++) a[k] = k;
  return a;
}

function compose(outer: Int32Array, local: readonly number[]): Int32Array {
  const a = new Int32Array(local.length);
  for (let k = 0; k < local.length; k++) a[k] = outer[local[k]!]!;
  return a;
}
