/**
 * Writing one annotation into a manifest file, keeping its comments and layout byte for byte: the `yaml`
 * library's Document API finds where `metadata.annotations` is (node ranges in the file), and only the value
 * or one new line is spliced into the text (printing a document again would respace comments and flow
 * collections). A document in flow style there (`metadata: {...}`) is not rewritten: the caller shows the line
 * to add by hand instead.
 */
import type { Document, Node, Pair, YAMLMap } from 'yaml';
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

/** The column (0-based) of an offset in the text. */
function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** The end of the line holding `offset` (the offset of its '\n', or the text's end). */
function lineEnd(text: string, offset: number): number {
  const i = text.indexOf('\n', offset);
  return i === -1 ? text.length : i;
}

/** Where a pair ends in the text: its value's end, else its key's. */
function pairEnd(p: Pair): number {
  const v = p.value as Node | null;
  return v?.range ? v.range[1] : (p.key as Node).range![1];
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
      const indent = ' '.repeat(columnOf(text, (metadata.items[0]!.key as Node).range![0]));
      const last = metadata.items[metadata.items.length - 1]!;
      if (annotations !== undefined) return { ok: false, reason: `${kind}/${name}: metadata.annotations is empty` };
      const at = lineEnd(text, pairEnd(last));
      edits.push({ at, end: at, text: `\n${indent}annotations:\n${indent}  ${key}: ${quoted(value)}` });
    } else if (isBlockMap(annotations, isMap)) {
      const existing = annotations.items.find((p) => isScalar(p.key) && p.key.value === key);
      const v = existing?.value as Node | null | undefined;
      if (existing && v?.range) {
        edits.push({ at: v.range[0], end: v.range[1], text: quoted(value) });
      } else if (existing) {
        return { ok: false, reason: `${kind}/${name}: ${key} has no value to replace` };
      } else {
        const indent = ' '.repeat(columnOf(text, (annotations.items[0]!.key as Node).range![0]));
        const at = lineEnd(text, pairEnd(annotations.items[annotations.items.length - 1]!));
        edits.push({ at, end: at, text: `\n${indent}${key}: ${quoted(value)}` });
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
  return { ok: true, text: out + text.slice(done), edited };
}
