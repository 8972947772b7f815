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
 *   of bytes: `b'\xc3\xa9'`), octal `\ooo` of 1-3 digits (C, bash's `$'…'`, git's quoted paths; bytes of UTF-8 together:
 *   `\303\251`); another backslash stays as it is.
 * - percent: `%XX` of a byte (either hex case), bytes of UTF-8 decoded together, a byte that is no UTF-8 as Latin-1.
 * - form: the same, and `+` as a space (a query string, an HTML form).
 * - html: `&name;` (HTML 4's names, `&apos;`), `&#DDD;`, `&#xHHH;` (either case of `x` and of the hex, leading zeros).
 * - unwrap: base64 wrapped over lines (MIME's 76 characters, PEM's 64, any width; `\n` or `\r\n`; indented or not) joined again (`unwrap`).
 *
 * Views are made breadth first, each family applied to each view made so far (a view that decodes nothing, or that
 * another view already is, is not kept), so a text nested in several families is read in any order of them. An
 * unwrapped view is the last of its chain: joining lines commutes with the other families (no escape holds a base64
 * run's line break), so its view of each view of the chain is enough.
 *
 * Bounds (redaction runs on every log line): at most MAX_VIEW_DEPTH decodings in a row and at most MAX_VIEWS views of a
 * text, and MAX_UNWRAPPED unwrapped ones, each made in one pass of the view it comes from; a text holding none of
 * `\ % & +` nor a line break before a base64 character has none (one test of it).
 * So a text costs at most MAX_VIEWS + MAX_UNWRAPPED + 1 scans of its length to make its views, and as many for the matcher to read
 * them: linear in its length whatever it holds. The maps back to the text (4 bytes a character) are made only for a
 * view a form was found in, and its chain (at most MAX_VIEW_DEPTH more decodings each). A text is seldom past the
 * first level: a JSON log line holding `\"` has one view, or two. A JSON text (an answer, a log line) is read value by
 * value, and a value's redaction remembered while the secrets in force stay the same (src/util/redact.ts,
 * `redactJsonText`): a value /status or a resync's log repeats is read through its views once, not at each. Pure.
 */

import { HTML4_NAMED } from './secret-forms.js';

/** At most this many decodings in a row (with the forms' three encodings, a value nested eleven times over is found). */
export const MAX_VIEW_DEPTH = 8;
/** At most this many views of one text made by the families but unwrap. */
export const MAX_VIEWS = 24;
/**
 * At most this many unwrapped views of one text, besides MAX_VIEWS (the first views', breadth first): a text with lines
 * ending in base64 characters (prose too) has one of each view, which would otherwise use up MAX_VIEWS half way down a
 * deep nesting.
 */
export const MAX_UNWRAPPED = 8;

export interface DecodedView {
  text: string;
  /** The view it was decoded from (undefined: the text itself), and by what. */
  readonly parent: DecodedView | undefined;
  readonly decoder: Decoder | undefined;
  /** Its map, once `viewMap` worked it out. */
  from?: Int32Array;
}

/** Something to decode: a text and, when a map is asked for, where its characters came from. */
type Decoder = (text: string, map: boolean) => { text: string; local: Int32Array | undefined } | undefined;

/**
 * Builds a decoded text and, when asked, its map to the text it was decoded from (a decoded text is never longer than
 * the text: every escape stands for fewer characters than it has).
 */
class Out {
  private readonly parts: string[] = [];
  private length = 0;
  readonly local: Int32Array | undefined;
  changed = false;
  constructor(inputLength: number, map: boolean) {
    this.local = map ? new Int32Array(inputLength + 1) : undefined;
  }
  /** `s`, decoded from the escape starting at `at`. */
  push(s: string, at: number): void {
    this.parts.push(s);
    if (this.local) this.local.fill(at, this.length, this.length + s.length);
    this.length += s.length;
  }
  /** text[i, j) as it is. */
  copy(text: string, i: number, j: number): void {
    if (j <= i) return;
    this.parts.push(text.slice(i, j));
    if (this.local) for (let k = i; k < j; k++) this.local[this.length++] = k;
    else this.length += j - i;
  }
  done(inputLength: number): { text: string; local: Int32Array | undefined } | undefined {
    if (!this.changed) return undefined;
    if (this.local) this.local[this.length] = inputLength;
    return { text: this.parts.join(''), local: this.local?.subarray(0, this.length + 1) };
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
  const out = new Out(text.length, map);
  let i = 0;
  while (i < text.length) {
    const j = text.indexOf('\\', i);
    if (j < 0 || j === text.length - 1) break;
    out.copy(text, i, j);
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
    else if (d >= '0' && d <= '7') {
      // octal: bytes of UTF-8 as git's quoted paths, C and bash's $'…' write them (`\303\251`), else one byte, 1-3 digits
      const u = utf8At(text, j, OCT_BYTE);
      [cp, len] = u && u.n > 1 ? [u.cp, 4 * u.n] : octalAt(text, j + 1);
    }
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
  out.copy(text, i, text.length);
  return out.done(text.length);
};

/** A byte written as `%XX` (3 characters) or `\xXX` (4). */
interface ByteEscape {
  width: number;
  at(text: string, at: number): number;
}
/** The byte of `%XX` at `at`, or -1. */
const PCT_BYTE: ByteEscape = { width: 3, at: (text, at) => (text.charCodeAt(at) === 37 ? hexAt(text, at + 1, 2) : -1) };
/** The byte of `\xXX` at `at`, or -1. */
const X_BYTE: ByteEscape = { width: 4, at: (text, at) => (text.charCodeAt(at) === 92 && text.charCodeAt(at + 1) === 120 ? hexAt(text, at + 2, 2) : -1) };

/** The byte of `\ooo` (three octal digits) at `at`, or -1. */
const OCT_BYTE: ByteEscape = {
  width: 4,
  at: (text, at) => {
    if (text.charCodeAt(at) !== 92) return -1;
    const [cp, len] = octalAt(text, at + 1);
    return len === 4 ? cp : -1;
  },
};

/** The byte of 1-3 octal digits at `at` (up to 0o377) and the escape's length with its backslash, or [-1, 2]. */
function octalAt(text: string, at: number): [number, number] {
  let v = 0;
  let n = 0;
  for (; n < 3; n++) {
    const c = text.charCodeAt(at + n);
    if (c < 48 || c > 55 || v * 8 + (c - 48) > 0o377) break;
    v = v * 8 + (c - 48);
  }
  return n === 0 ? [-1, 2] : [v, n + 1];
}

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

const isBlank = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13 || Number.isNaN(c);

/**
 * Whether the `+` at `at` has a space, a tab, a line break or the text's edge on each side. Such a `+` is no space a form
 * encoder wrote: its output has no blank, so each `+` of a form-encoded value of two characters or more touches another
 * of its characters. A plan's and a diff's `+ ` markers are such (a plan's view was a copy of the whole text, for nothing).
 */
function loneSign(text: string, at: number): boolean {
  return isBlank(text.charCodeAt(at - 1)) && isBlank(text.charCodeAt(at + 1));
}

function percentDecoder(plusIsSpace: boolean): Decoder {
  const special = plusIsSpace ? /[%+]/g : /%/g;
  return (text, map) => {
    if (!text.includes('%') && !(plusIsSpace && text.includes('+'))) return undefined;
    const out = new Out(text.length, map);
    let i = 0;
    special.lastIndex = 0;
    for (let m = special.exec(text); m; m = special.exec(text)) {
      const j = m.index;
      if (j < i) continue;
      // a `+` with a space or the text's edge on each side stays: see loneSign
      if (text.charCodeAt(j) === 43 && loneSign(text, j)) continue;
      out.copy(text, i, j);
      i = j + 1;
      if (text[j] === '+') {
        out.push(' ', j);
        out.changed = true;
        continue;
      }
      const u = utf8At(text, j);
      const latin1 = u ? -1 : PCT_BYTE.at(text, j);
      if (u) {
        out.push(String.fromCodePoint(u.cp), j);
        i = j + 3 * u.n;
      } else if (latin1 >= 0) {
        // not UTF-8: a byte of Latin-1 (Java's URLEncoder with ISO-8859-1, PHP's urlencode of a Latin-1 string)
        out.push(String.fromCharCode(latin1), j);
        i = j + 3;
      } else {
        out.push('%', j);
        continue;
      }
      out.changed = true;
      special.lastIndex = i;
    }
    out.copy(text, i, text.length);
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
  const out = new Out(text.length, map);
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
    out.copy(text, i, j);
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
  out.copy(text, i, text.length);
  return out.done(text.length);
};

/** A base64 character, of either alphabet: [A-Za-z0-9+/_-]. */
function isBase64Char(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 95 || c === 45;
}

/** A wrapped base64 line is at least this long (MIME's are 76 characters, PEM's 64, `base64 -w 75`'s 75). */
const MIN_WRAPPED_LINE = 16;
/** At most this much indentation (spaces, tabs) before a wrapped line is removed with its break: a bound, so one pass. */
const MAX_WRAP_INDENT = 64;

/**
 * base64 wrapped over lines (MIME, PEM, a tool wrapping at any width: 75, 70), indented or not (a YAML block scalar:
 * each line the same indentation and base64 alone): each line break (`\n` or `\r\n`), with the next line's indentation, after
 * a run of base64 characters at least MIN_WRAPPED_LINE long and before another base64 character removed, whatever the
 * run's length mod 4: the joined text is the encoding unwrapped, which the base64 forms (each alignment) find. Only a
 * view: a form found across a removed break is replaced in the text with the break, nothing else of the lines.
 * Each run is read back once, up to the line break before it: one pass.
 */
const unwrap: Decoder = (text, map) => {
  if (!text.includes('\n')) return undefined;
  const out = new Out(text.length, map);
  let i = 0;
  for (let j = text.indexOf('\n'); j >= 0; j = text.indexOf('\n', j + 1)) {
    // the next line's indentation (a YAML block scalar, an indented log) goes with the break
    let next = j + 1;
    while (next - j <= MAX_WRAP_INDENT && (text.charCodeAt(next) === 32 || text.charCodeAt(next) === 9)) next++;
    if (!isBase64Char(text.charCodeAt(next))) continue;
    const br = j > 0 && text.charCodeAt(j - 1) === 13 ? j - 1 : j;
    let k = br;
    while (k > i && isBase64Char(text.charCodeAt(k - 1))) k--;
    if (br - k < MIN_WRAPPED_LINE) continue;
    // an indented line goes on a wrapped one only as a block does: the line before it is the same indentation and
    // base64 alone (a plan's or a log's indented lines after a line ending in a long name are no base64 block)
    if (next > j + 1 && !sameIndentBefore(text, k, j + 1, next)) continue;
    out.copy(text, i, br);
    out.changed = true;
    i = next;
  }
  if (!out.changed) return undefined;
  out.copy(text, i, text.length);
  return out.done(text.length);
};

/** Whether text[at - (end - start), at) is the indentation text[start, end) and starts its line. */
function sameIndentBefore(text: string, at: number, start: number, end: number): boolean {
  const from = at - (end - start);
  if (from < 0 || (from > 0 && text.charCodeAt(from - 1) !== 10)) return false;
  for (let x = 0; x < end - start; x++) if (text.charCodeAt(from + x) !== text.charCodeAt(start + x)) return false;
  return true;
}

/** The decoders, one per family; a view of each is made from each view. */
const DECODERS: readonly Decoder[] = [backslash, html, percentDecoder(false), percentDecoder(true), unwrap];

/** Whether a text may have a view at all (one scan): an escape, or a line break a line of base64 may go on after (indented). */
export const DECODABLE = /[\\%&+]|\n[ \t]*[A-Za-z0-9+/_-]/;

/**
 * The views of `text` (not the text itself), breadth first, each made when it is asked for (a caller that stops at the
 * first view holding a form makes no more). Without their maps: `viewMap` works out one's when a form was found in it.
 */
export function* decodedViews(text: string): Generator<DecodedView> {
  if (!DECODABLE.test(text)) return;
  const seen = new Set<string>([text]);
  let made = 0;
  let unwrapped = 0;
  let frontier: DecodedView[] = [{ text, parent: undefined, decoder: undefined }];
  for (let depth = 0; depth < MAX_VIEW_DEPTH && frontier.length; depth++) {
    const next: DecodedView[] = [];
    for (const v of frontier) {
      for (const decode of DECODERS) {
        const joins = decode === unwrap;
        if (joins ? unwrapped >= MAX_UNWRAPPED : made >= MAX_VIEWS) continue;
        const d = decode(v.text, false);
        if (!d || seen.has(d.text)) continue;
        seen.add(d.text);
        if (joins) unwrapped++;
        else made++;
        const view: DecodedView = { text: d.text, parent: v, decoder: decode };
        yield view;
        // an unwrapped view is decoded no further: the other families decode the same in the view it was made from,
        // whose own unwrapped view is made too (each chain was otherwise read twice in a text with lines)
        if (!joins) next.push(view);
      }
      if (made >= MAX_VIEWS && unwrapped >= MAX_UNWRAPPED) return;
    }
    frontier = next;
  }
}

/**
 * For each character of `view`, where the escape (or character) it came from starts in the original text; one more
 * entry, the original text's length. A match at [a, b) in the view covers [from[a], from[b]) of the original. Made by
 * decoding again, with the map, along the view's chain (at most MAX_VIEW_DEPTH decodings); kept on the views.
 */
export function viewMap(view: DecodedView): Int32Array {
  if (view.from) return view.from;
  if (!view.parent || !view.decoder) return (view.from = identity(view.text.length));
  const outer = viewMap(view.parent);
  const local = view.decoder(view.parent.text, true)?.local ?? new Int32Array(0);
  return (view.from = compose(outer, local));
}

function identity(n: number): Int32Array {
  const a = new Int32Array(n + 1);
  for (let k = 0; k <= n; k++) a[k] = k;
  return a;
}

function compose(outer: Int32Array, local: Int32Array): Int32Array {
  const a = new Int32Array(local.length);
  for (let k = 0; k < local.length; k++) a[k] = outer[local[k]!]!;
  return a;
}
