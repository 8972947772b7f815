/**
 * A fast reader for the plain subset of YAML that manifests are written in (block mappings and
 * sequences, one-line flow collections, one-line quoted or plain scalars, comments, `---`).
 * It gives the same values as the `yaml` package (YAML 1.2 core schema) or gives up (returns
 * undefined) on anything else - anchors, tags, block scalars, multi-line scalars, odd keys,
 * anything erroneous - and the caller then parses with `yaml`, which also gives positions.
 * Why: `yaml` builds a full syntax tree and is ~10x slower; 10,000 manifests must load in well
 * under 2 s (see docs/decisions.md).
 */

export interface FastDoc {
  /** The document's value (null for an empty document). */
  value: unknown;
  /** 1-based line and column of the document's first node (as `yaml` reports it). */
  line: number;
  column: number;
}

class Bail extends Error {}
const bail = (): never => {
  throw new Bail();
};

interface Line {
  indent: number;
  text: string;
  no: number;
}

const NULL_RE = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL_RE = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_RE = /^[-+]?[0-9]+$/;
const OCT_RE = /^0o[0-7]+$/;
const HEX_RE = /^0x[0-9a-fA-F]+$/;
const FLOAT_RE = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
const EXP_RE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const INF_NAN_RE = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
/** Characters a plain scalar may not start with (quotes and flows are handled before). */
const BAD_PLAIN_START = /^(?:[&*!|>%@`#,\]}]|[-?:](?:\s|$))/;

/** First characters that can start a non-string core-schema scalar: digits + - . ~ n N t T f F. */
const MAYBE_TYPED = /^[-+.~0-9nNtTfF]|^$/;

function resolvePlain(s: string): unknown {
  if (!MAYBE_TYPED.test(s)) return s;
  if (NULL_RE.test(s)) return null;
  if (BOOL_RE.test(s)) return s[0] === 't' || s[0] === 'T';
  if (INT_RE.test(s)) return Number(s);
  if (OCT_RE.test(s)) return parseInt(s.slice(2), 8);
  if (HEX_RE.test(s)) return parseInt(s.slice(2), 16);
  if (FLOAT_RE.test(s) || EXP_RE.test(s)) return parseFloat(s);
  if (INF_NAN_RE.test(s)) return s.endsWith('nan') || s.endsWith('NaN') || s.endsWith('NAN') ? NaN : s[0] === '-' ? -Infinity : Infinity;
  return s;
}

function checkKey(key: string, quoted: boolean): string {
  if (!quoted) {
    if (!key || BAD_PLAIN_START.test(key) || /[\t]|\s#/.test(key)) bail();
    if (typeof resolvePlain(key) !== 'string') bail();
  }
  if (key === '<<' || key === '__proto__') bail();
  return key;
}

const ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b',
  ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\u0085', _: '\u00a0', L: '\u2028', P: '\u2029',
};

/** A quoted scalar starting at s[i]; returns the value and the index after the closing quote. */
function quoted(s: string, i: number): [string, number] {
  const q = s[i];
  let out = '';
  let j = i + 1;
  if (q === "'") {
    for (;;) {
      const k = s.indexOf("'", j);
      if (k < 0) bail();
      out += s.slice(j, k);
      if (s[k + 1] === "'") {
        out += "'";
        j = k + 2;
      } else return [out, k + 1];
    }
  }
  for (;;) {
    if (j >= s.length) bail();
    const c = s[j]!;
    if (c === '"') return [out, j + 1];
    if (c === '\\') {
      const e = s[j + 1];
      if (e === undefined) bail();
      const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
      if (len) {
        const hex = s.slice(j + 2, j + 2 + len);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) bail();
        out += String.fromCodePoint(parseInt(hex, 16));
        j += 2 + len;
        continue;
      }
      const r = ESCAPES[e!];
      if (r === undefined) bail();
      out += r;
      j += 2;
      continue;
    }
    out += c;
    j++;
  }
}

/** Nothing but spaces and an optional comment from i on. */
function restIsEmpty(s: string, i: number): boolean {
  const rest = s.slice(i);
  return /^\s*$/.test(rest) || /^\s+#/.test(rest);
}

function skipWs(s: string, i: number): number {
  while (s[i] === ' ') i++;
  return i;
}

/** A flow collection or scalar inside a flow collection, starting at s[i]. */
function flowValue(s: string, i: number): [unknown, number] {
  i = skipWs(s, i);
  const c = s[i];
  if (c === '[') {
    const arr: unknown[] = [];
    i = skipWs(s, i + 1);
    if (s[i] === ']') return [arr, i + 1];
    for (;;) {
      const [v, j] = flowValue(s, i);
      arr.push(v);
      i = skipWs(s, j);
      if (s[i] === ',') {
        i = skipWs(s, i + 1);
        if (s[i] === ']' || s[i] === ',') bail();
        continue;
      }
      if (s[i] === ']') return [arr, i + 1];
      bail();
    }
  }
  if (c === '{') {
    const obj: Record<string, unknown> = {};
    i = skipWs(s, i + 1);
    if (s[i] === '}') return [obj, i + 1];
    for (;;) {
      let key: string;
      if (s[i] === '"' || s[i] === "'") {
        [key, i] = quoted(s, i);
        checkKey(key, true);
      } else {
        const m = /^[^,[\]{}:#]*?(?=:(?:\s|$))/.exec(s.slice(i));
        if (!m) bail();
        key = checkKey(m![0].trimEnd(), false);
        i += m![0].length;
      }
      i = skipWs(s, i);
      if (s[i] !== ':' || (s[i + 1] !== ' ' && s[i + 1] !== undefined)) bail();
      const [v, j] = flowValue(s, i + 1);
      if (Object.prototype.hasOwnProperty.call(obj, key)) bail();
      obj[key] = v;
      i = skipWs(s, j);
      if (s[i] === ',') {
        i = skipWs(s, i + 1);
        if (s[i] === '}' || s[i] === ',') bail();
        continue;
      }
      if (s[i] === '}') return [obj, i + 1];
      bail();
    }
  }
  if (c === '"' || c === "'") return quoted(s, i);
  // plain scalar in flow context: up to , [ ] { } or ": "
  const m = /^[^,[\]{}]*/.exec(s.slice(i))!;
  let raw = m[0];
  if (/:(\s|$)|\s#|^#/.test(raw)) bail();
  raw = raw.trimEnd();
  if (!raw || BAD_PLAIN_START.test(raw)) bail();
  return [resolvePlain(raw), i + m[0].length];
}

/** A value written on the same line as its key or dash. */
function inlineValue(s: string): unknown {
  const c = s[0];
  if (c === '"' || c === "'") {
    const [v, j] = quoted(s, 0);
    if (!restIsEmpty(s, j)) bail();
    return v;
  }
  if (c === '[' || c === '{') {
    const [v, j] = flowValue(s, 0);
    if (!restIsEmpty(s, j)) bail();
    return v;
  }
  const hash = s.indexOf(' #'); // no tabs: the text was refused if it had any
  const raw = (hash >= 0 ? s.slice(0, hash) : s).trimEnd();
  if (BAD_PLAIN_START.test(raw) || /:(\s|$)/.test(raw) || raw.includes('\t')) bail();
  return resolvePlain(raw);
}

/** Split `key: rest` (block context); undefined when the line is not a mapping entry. */
function splitEntry(s: string): { key: string; rest: string } | undefined {
  if (s[0] === '"' || s[0] === "'") {
    const [key, j] = quoted(s, 0);
    if (s[j] !== ':' || (s[j + 1] !== undefined && s[j + 1] !== ' ')) return undefined;
    return { key: checkKey(key, true), rest: s.slice(j + 1).trimStart() };
  }
  if (s[0] === '[' || s[0] === '{') return undefined;
  const m = /:(?: |$)/.exec(s);
  if (!m) return undefined;
  const key = s.slice(0, m.index);
  if (key.includes(' #')) return undefined;
  return { key: checkKey(key.trimEnd(), false), rest: s.slice(m.index + 1).trimStart() };
}

const isSeqItem = (t: string) => t === '-' || t.startsWith('- ');
const isEmptyRest = (rest: string) => rest === '' || rest.startsWith('#');

class DocParser {
  pos = 0;
  constructor(private readonly lines: Line[]) {}

  block(indent: number): unknown {
    const line = this.lines[this.pos]!;
    if (line.indent !== indent) bail();
    return isSeqItem(line.text) ? this.seq(indent) : this.map(indent);
  }

  /** Value of an entry whose inline part is empty: a nested block, or null. */
  nested(parentIndent: number, allowSeqAtSameIndent: boolean): unknown {
    const next = this.lines[this.pos];
    if (next && next.indent > parentIndent) return this.block(next.indent);
    if (next && allowSeqAtSameIndent && next.indent === parentIndent && isSeqItem(next.text)) return this.seq(parentIndent);
    return null;
  }

  afterInline(indent: number): void {
    const next = this.lines[this.pos];
    if (next && next.indent > indent) bail(); // continuation lines: not in the subset
  }

  map(indent: number): Record<string, unknown> {
    const obj: Record<string, unknown> = {};
    while (this.pos < this.lines.length) {
      const line = this.lines[this.pos]!;
      if (line.indent < indent) break;
      if (line.indent > indent || isSeqItem(line.text)) bail();
      const entry = splitEntry(line.text);
      if (!entry) bail();
      const { key, rest } = entry!;
      if (Object.prototype.hasOwnProperty.call(obj, key)) bail();
      this.pos++;
      if (isEmptyRest(rest)) obj[key] = this.nested(indent, true);
      else {
        obj[key] = inlineValue(rest);
        this.afterInline(indent);
      }
    }
    return obj;
  }

  seq(indent: number): unknown[] {
    const arr: unknown[] = [];
    while (this.pos < this.lines.length) {
      const line = this.lines[this.pos]!;
      if (line.indent < indent) break;
      if (line.indent > indent) bail();
      if (!isSeqItem(line.text)) break; // `key:` after a sequence written at its parent's indentation
      const after = line.text.slice(1);
      const rest = after.trimStart();
      if (isEmptyRest(rest)) {
        this.pos++;
        arr.push(this.nested(indent, false));
        continue;
      }
      const innerIndent = indent + 1 + (after.length - rest.length);
      if (isSeqItem(rest) || splitEntry(rest)) {
        // `- key: value` / `- - x`: the item is a block starting on this line.
        this.lines[this.pos] = { indent: innerIndent, text: rest, no: line.no };
        arr.push(this.block(innerIndent));
        continue;
      }
      this.pos++;
      arr.push(inlineValue(rest));
      this.afterInline(indent);
    }
    return arr;
  }
}

/** Parse all documents, or undefined when the text is outside the subset (use `yaml` then). */
export function fastParseDocuments(text: string): FastDoc[] | undefined {
  if (text.includes('\r') || text.includes('\t') || text.charCodeAt(0) === 0xfeff) return undefined;
  const docs: FastDoc[] = [];
  let current: Line[] = [];
  let sawSeparator = false;
  const flush = () => {
    if (current.length === 0) return; // empty document: ignored
    const first = current[0]!;
    if (first.indent !== 0) bail();
    const p = new DocParser(current);
    const value = p.block(0);
    if (p.pos !== current.length) bail();
    docs.push({ value, line: first.no, column: 1 });
    current = [];
  };
  try {
    const rawLines = text.split('\n');
    for (let n = 0; n < rawLines.length; n++) {
      const raw = rawLines[n]!;
      if (raw.startsWith('---') || raw.startsWith('...')) {
        if (!/^(---|\.\.\.)(\s+#.*|\s*)$/.test(raw)) bail();
        if (raw.startsWith('...')) bail();
        if (sawSeparator && current.length === 0 && docs.length === 0) {
          // leading separators: nothing to flush
        }
        flush();
        sawSeparator = true;
        continue;
      }
      if (raw.startsWith('%')) bail();
      const trimmed = raw.trimStart();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const indent = raw.length - trimmed.length;
      current.push({ indent, text: trimmed.trimEnd(), no: n + 1 });
    }
    flush();
  } catch (err) {
    if (err instanceof Bail) return undefined;
    throw err;
  }
  return docs;
}
