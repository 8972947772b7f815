/**
 * The fast YAML path: js-yaml (`loadAll`, CORE_SCHEMA, no custom types) reads plain, safe manifest
 * files ~10x faster than `yaml`, which builds a full syntax tree. It must give exactly what the
 * `yaml` path gives (YAML 1.2 core schema, see parse.ts) or nothing: `mayDiffer` sends every text
 * where the two libraries (or our hostile-input policy) could disagree to `yaml`, and so does any
 * error js-yaml throws. `yaml` stays the parser of record for positions and every diagnostic.
 * The differences were found by running both libraries side by side (test/manifests/jsyaml.test.ts
 * keeps them as cases): anchors/aliases/tags/directives, numbers that only one of them resolves
 * (`0b1`, `+0x1F`, `-.5`, `-0`, overflowing values), null or collection keys, keys over 1024
 * characters, a comment glued to a quoted/flow value, content after `---`/`...` on its line,
 * multi-line flow collections and quoted scalars (js-yaml accepts bad indentation there), tabs
 * and lone CRs, a BOM.
 */
import { CORE_SCHEMA, loadAll, type LoadOptions } from 'js-yaml';
import { MAX_DEPTH } from './hostile.js';

export interface FastDoc {
  /** The document's value (null for an empty document). */
  value: unknown;
  /** 1-based line and column of the document's root node (where `yaml` puts `doc.contents`). */
  line: number;
  column: number;
}

/** What may follow a token start (line start, whitespace, a flow indicator or `:` as in `{"a":b}`). */
const TOKEN = [
  '[&*!]', // anchor, alias, tag
  '[-+]?0b', // binary ints: js-yaml only
  '[-+]0[xo]', // signed hex/octal: js-yaml only
  String.raw`[-+]\.[0-9]`, // signed .5: `yaml` only
  String.raw`-0(?=[\s,\]}]|$)`, // -0: js-yaml gives 0, `yaml` -0
  String.raw`[-+]?[.0-9][.0-9]*[eE][-+]?[0-9]{3}`, // exponent that may overflow: js-yaml keeps a string, `yaml` Infinity
  String.raw`[-+]?[.0-9][0-9a-fA-Fx.]{249}`, // so many digits that the number may overflow (same)
  // null/empty key: "null" vs "". (No `[ ]*` right after the token start: quadratic on long runs of spaces.)
  String.raw`(?:(?:~|null|Null|NULL)[ ]*)?:(?=[\s,\]}]|$)`,
  String.raw`\?(?=\s|$)`, // explicit key (may be a collection)
].join('|');
/** (Split in parts: one regex with every alternative at every position is 3x slower.) */
const RISKY_TOKEN = new RegExp(String.raw`[\s[\]{},:](?:${TOKEN})`);
const RISKY_FIRST_TOKEN = new RegExp(`(?:${TOKEN})`, 'y');
const RISKY_LINE = /^%|^(?:---|\.\.\.)[ \t]+[^\s#]/m; // directive (%YAML 1.1 has other booleans); content on a marker line
const RISKY_GLUE = /[\]}][ ]*:(?=[\s,\]}]|$)|["'\]}]#/; // flow collection as a key; comment glued to a value
const RISKY_SPACE = /\t|\r(?!\n)/; // tabs (corner cases differ), lone CR

const AT = String.raw`(?:^|[\s[\]{},:])`;
/** Quoted scalars that open on a token start and do not close on the same line. */
const UNCLOSED_QUOTE = new RegExp(String.raw`${AT}(?:"(?:[^"\\\n]|\\.)*("?)|'(?:[^'\n]|'')*('?))`, 'gm');
const MAX_KEY = 1024;

/** True when js-yaml might read `text` differently from the `yaml` path (use `yaml` then). */
export function mayDiffer(text: string): boolean {
  if (text.charCodeAt(0) === 0xfeff) return true;
  RISKY_FIRST_TOKEN.lastIndex = 0;
  if (RISKY_FIRST_TOKEN.test(text) || RISKY_TOKEN.test(text)) return true;
  if (RISKY_LINE.test(text) || RISKY_GLUE.test(text) || RISKY_SPACE.test(text)) return true;
  // Flow collections must open and close on one line; lines over 1024 chars may hold a long key.
  let depth = 0;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i); // (no regex here: a match object per bracket costs GC time)
    if (c === 10) {
      if (depth !== 0 || i - lineStart > MAX_KEY) return true;
      lineStart = i + 1;
    } else if (c === 91 || c === 123) depth++; // [ {
    else if (c === 93 || c === 125) depth--; // ] }
  }
  if (depth !== 0 || text.length - lineStart > MAX_KEY) return true;
  if (text.includes('"') || text.includes("'")) {
    UNCLOSED_QUOTE.lastIndex = 0;
    for (let m = UNCLOSED_QUOTE.exec(text); m; m = UNCLOSED_QUOTE.exec(text)) {
      if (m[1] === '' || m[2] === '') return true;
    }
  }
  return false;
}

const OPTIONS = { schema: CORE_SCHEMA, json: false, maxDepth: MAX_DEPTH + 2 } as LoadOptions;

/** Parse all documents with js-yaml, or undefined when the `yaml` path must read the text. */
export function fastParseDocuments(text: string): FastDoc[] | undefined {
  if (mayDiffer(text)) return undefined;
  const starts: Array<{ line: number; column: number }> = [];
  let depth = 0;
  const listener = (event: 'open' | 'close', state: { position: number; line: number; lineStart: number }): void => {
    if (event === 'close') {
      depth--;
      return;
    }
    // A document's root opens after js-yaml skipped the `---` and blank/comment lines.
    if (depth++ === 0) starts.push({ line: state.line + 1, column: state.position - state.lineStart + 1 });
  };
  let values: unknown[];
  try {
    values = loadAll(text, undefined, { ...OPTIONS, listener } as LoadOptions);
  } catch {
    return undefined; // any error (duplicate key, bad indentation, too deep...): `yaml` reports it
  }
  if (values.length !== starts.length) return undefined;
  return values.map((value, i) => ({ value, ...starts[i]! }));
}
