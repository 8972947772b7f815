/**
 * Writing one annotation into a manifest file, keeping its comments and layout byte for byte: the `yaml`
 * library's Document API finds where `metadata.annotations` is (node ranges in the file), and only the value
 * or one new line is spliced into the text (printing a document again would respace comments and flow
 * collections). A document in flow style there (`metadata: {...}`) is not rewritten: the caller shows the line
 * to add by hand instead. A block node's range takes in the line breaks after it (a nested mapping, a list, a
 * block scalar), so spans end at the node's last character; new lines take the file's line break (CRLF kept).
 * The result is parsed again and must read as the input with the one annotation set, else nothing is written.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Document, Node, Pair, YAMLMap } from 'yaml';
import { fastParseDocuments } from './jsyaml.js';
import { yamlLib } from './yaml-lib.js';

export type AnnotateResult =
  | { ok: true; text: string; edited: string[] }
  | { ok: false; reason: string };

interface Edit {
  at: number;
  end: number;
  text: string;
}

const quoted = (v: string): string => JSON.stringify(v);

/** The indentation of the line holding `offset` (its leading spaces: an explicit `? key` is indented by them too). */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^ */.exec(text.slice(start, offset))![0];
}

/** Where a new line goes after the line holding `offset`: before its line break (CRLF or LF), or at the text's end. */
function lineEnd(text: string, offset: number): number {
  const i = text.indexOf('\n', offset);
  if (i === -1) return text.length;
  return i > 0 && text[i - 1] === '\r' ? i - 1 : i;
}

/** A node's span up to its last character: a block node's range ends after the line breaks (and blank lines) it takes in. */
function contentEnd(text: string, start: number, end: number): number {
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  return end;
}

/** Where a pair ends in the text: its value's last character, else its key's. */
function pairEnd(text: string, p: Pair): number {
  const v = p.value as Node | null;
  const r = v?.range ?? (p.key as Node).range!;
  return contentEnd(text, r[0], r[1]);
}

function isBlockMap(n: unknown, isMap: (x: unknown) => x is YAMLMap): n is YAMLMap {
  return isMap(n) && !n.flow && n.items.length > 0 && Boolean((n.items[0]!.key as Node | null)?.range);
}

/**
 * Set `metadata.annotations[key]` of the documents of `kind` whose name maps to a value in `values` (creating
 * `annotations` where missing). `edited` lists the names changed; documents already holding the value stay.
 */
export function setAnnotation(text: string, kind: string, key: string, values: ReadonlyMap<string, string>): AnnotateResult {
  const { parseAllDocuments, isMap, isScalar } = yamlLib();
  const docs = parseAllDocuments(text) as Document[];
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return { ok: false, reason: 'the file does not parse as YAML' };
  const eol = /\r\n/.test(text) ? '\r\n' : '\n';
  const edits: Edit[] = [];
  const edited: string[] = [];
  for (const doc of docs) {
    if (!isMap(doc.contents) || doc.get('kind') !== kind) continue;
    const name = doc.getIn(['metadata', 'name']);
    if (typeof name !== 'string' || !values.has(name)) continue;
    const value = values.get(name)!;
    if (doc.getIn(['metadata', 'annotations', key]) === value) continue;
    const metadata = doc.get('metadata', true);
    if (!isBlockMap(metadata, isMap)) return { ok: false, reason: `${kind}/${name}: metadata is not a block mapping` };
    const annotations = metadata.get('annotations', true);
    if (annotations === undefined || annotations === null || (isScalar(annotations) && annotations.value === null)) {
      const indent = lineIndent(text, (metadata.items[0]!.key as Node).range![0]);
      const last = metadata.items[metadata.items.length - 1]!;
      if (annotations !== undefined) return { ok: false, reason: `${kind}/${name}: metadata.annotations is empty` };
      const at = lineEnd(text, pairEnd(text, last));
      edits.push({ at, end: at, text: `${eol}${indent}annotations:${eol}${indent}  ${key}: ${quoted(value)}` });
    } else if (isBlockMap(annotations, isMap)) {
      const existing = annotations.items.find((p) => isScalar(p.key) && p.key.value === key);
      const v = existing?.value as Node | null | undefined;
      if (existing && v?.range) {
        edits.push({ at: v.range[0], end: contentEnd(text, v.range[0], v.range[1]), text: quoted(value) });
      } else if (existing) {
        return { ok: false, reason: `${kind}/${name}: ${key} has no value to replace` };
      } else {
        const indent = lineIndent(text, (annotations.items[0]!.key as Node).range![0]);
        const at = lineEnd(text, pairEnd(text, annotations.items[annotations.items.length - 1]!));
        edits.push({ at, end: at, text: `${eol}${indent}${key}: ${quoted(value)}` });
      }
    } else {
      return { ok: false, reason: `${kind}/${name}: metadata.annotations is not a block mapping` };
    }
    edited.push(name);
  }
  // One pass from the start (the edits are one per document, so they never overlap): cutting the whole text
  // around each edit copied it once per edit (a 1 MB file of 2,500 documents: 2.5 GB).
  let out = '';
  let done = 0;
  for (const e of edits.sort((a, b) => a.at - b.at)) {
    out += text.slice(done, e.at) + e.text;
    done = e.end;
  }
  out += text.slice(done);
  if (edited.length > 0 && !readsAsIntended(out, docs, kind, key, values)) {
    return { ok: false, reason: `the layout of ${kind}/${edited.join(', ')} cannot be edited in place safely` };
  }
  return { ok: true, text: out, edited };
}

/**
 * The edited text parses as the input did, but for `metadata.annotations[key]` set in the documents named in `values`.
 * Read with js-yaml where it reads as `yaml` does (jsyaml.ts: ~8x faster, this check doubled the command's time);
 * only `yaml` says no.
 */
function readsAsIntended(out: string, before: readonly Document[], kind: string, key: string, values: ReadonlyMap<string, string>): boolean {
  let expected: unknown[];
  try {
    expected = before.map((doc) => {
      const value = doc.toJS() as unknown;
      const name = doc.getIn(['metadata', 'name']);
      if (doc.get('kind') === kind && typeof name === 'string' && values.has(name)) {
        const meta = (value as { metadata: Record<string, unknown> }).metadata;
        meta.annotations = { ...(meta.annotations as Record<string, unknown> | undefined), [key]: values.get(name) };
      }
      return value;
    });
  } catch {
    return false; // (say, more aliases than the library expands)
  }
  const fast = fastParseDocuments(out);
  if (fast && isDeepStrictEqual(fast.map((d) => d.value), expected)) return true;
  const after = yamlLib().parseAllDocuments(out) as Document[];
  if (!Array.isArray(after) || after.length !== before.length || after.some((d) => d.errors.length > 0)) return false;
  try {
    return isDeepStrictEqual(after.map((d) => d.toJS() as unknown), expected);
  } catch {
    return false;
  }
}
