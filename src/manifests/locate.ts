/** Map a path inside a YAML document (['spec','config','host']) back to a line and column. */
import type { Document, LineCounter, Node, Pair } from 'yaml';
import { yamlLib } from './yaml-lib.js';
import type { SourceLocation } from './types.js';

export interface Locator {
  /** Where the value at `path` is (or the nearest existing ancestor). */
  value(path: ReadonlyArray<string | number>): SourceLocation;
  /** Where the key of the last segment of `path` is (falls back to the value / nearest ancestor). */
  key(path: ReadonlyArray<string | number>): SourceLocation;
  /** The text of the scalar at `path` as written (`012345678901`, read as a number), when there is one. */
  written(path: ReadonlyArray<string | number>): string | undefined;
}

function keyOf(pair: Pair): unknown {
  const { isScalar } = yamlLib();
  return isScalar(pair.key) ? pair.key.value : pair.key;
}

export function makeLocator(doc: Document, lineCounter: LineCounter, file: string, docStart: number): Locator {
  const { isAlias, isMap, isScalar, isSeq } = yamlLib();
  const at = (offset: number): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  const walk = (path: ReadonlyArray<string | number>) => {
    let node: unknown = doc.contents;
    let lastKey: Node | undefined;
    let lastFound: { node: unknown; key?: Node } = { node };
    let complete = true;
    // The first alias the path goes through: what lies beyond it is written at its anchor, elsewhere, maybe
    // where it is valid; the alias is where this path's value is given (`metadataDelimiters: *imp`).
    let via: Node | undefined;
    for (let i = 0; i < path.length; i++) {
      if (isAlias(node)) {
        via ??= node;
        node = node.resolve(doc);
      }
      const seg = path[i];
      let next: unknown;
      let key: Node | undefined;
      if (isMap(node)) {
        const pair = node.items.find((p) => String(keyOf(p)) === String(seg));
        if (pair) {
          next = pair.value ?? null;
          key = (pair.key as Node) ?? undefined;
        }
      } else if (isSeq(node) && typeof seg === 'number') {
        next = node.items[seg];
      }
      if (next === undefined) {
        complete = false;
        break;
      }
      node = next;
      lastKey = key;
      lastFound = { node: next, key };
    }
    return { complete, lastFound, lastKey, via };
  };
  const rangeStart = (n: unknown): number | undefined => {
    const r = (n as { range?: [number, number, number] } | null)?.range;
    return r ? r[0] : undefined;
  };
  const value = (path: ReadonlyArray<string | number>): SourceLocation => {
    const { complete, lastFound, via } = walk(path);
    if (via) return at(rangeStart(via) ?? docStart);
    // A path that does not exist: the key of its nearest existing ancestor (where to add it).
    const start = complete
      ? (rangeStart(lastFound.node) ?? rangeStart(lastFound.key) ?? docStart)
      : (rangeStart(lastFound.key) ?? rangeStart(lastFound.node) ?? docStart);
    return at(start);
  };
  const key = (path: ReadonlyArray<string | number>): SourceLocation => {
    const { complete, lastFound, via } = walk(path);
    if (via) return at(rangeStart(via) ?? docStart);
    if (complete && lastFound.key) return at(rangeStart(lastFound.key) ?? docStart);
    if (path.length === 0 || !complete) return at(rangeStart(lastFound.key) ?? rangeStart(lastFound.node) ?? docStart);
    return at(rangeStart(lastFound.node) ?? docStart);
  };
  const written = (path: ReadonlyArray<string | number>): string | undefined => {
    const { complete, lastFound } = walk(path);
    let node = lastFound.node;
    if (isAlias(node)) node = node.resolve(doc);
    return complete && isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  };
  return { value, key, written };
}
