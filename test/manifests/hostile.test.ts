/**
 * The parsed-value checks of hostile.ts run on every document of every load, so they walk without a
 * tuple or path array per node (issue #26); their answers stay those of the plain walks.
 */
import { describe, expect, it } from 'vitest';
import { depthExceeds, documentMarkers, forbiddenKeyPaths, MAX_DEPTH, MAX_FILE_DOCUMENTS, precheck } from '../../src/manifests/hostile.js';
import { MAX_STREAM_DOCUMENTS, parseStream } from '../../src/manifests/stream.js';

/** A value nested `depth` levels deep, alternating objects and arrays. */
function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [1, v] : { a: 1, b: v };
  return v;
}

describe('depthExceeds', () => {
  it('counts objects and arrays alike, up to the limit and one past it', () => {
    expect(depthExceeds(nested(MAX_DEPTH))).toBe(false);
    expect(depthExceeds(nested(MAX_DEPTH + 1))).toBe(true);
    expect(depthExceeds(nested(3), 2)).toBe(true);
    expect(depthExceeds(nested(3), 3)).toBe(false);
    expect(depthExceeds('scalar', 0)).toBe(false);
  });

  it('reads own keys only', () => {
    const proto = { deep: nested(10) };
    expect(depthExceeds(Object.create(proto) as object, 5)).toBe(false);
  });
});

describe('forbiddenKeyPaths', () => {
  it('none in an ordinary manifest', () => {
    expect(forbiddenKeyPaths({ kind: 'Webhook', spec: { notificationType: ['a', 'b'], nested: [{ x: 1 }] } })).toEqual([]);
  });

  it('every forbidden own key with its path, through objects and arrays', () => {
    const value = JSON.parse('{"a":{"constructor":1},"b":[0,{"__proto__":{"x":1}}],"prototype":2}') as unknown;
    expect(forbiddenKeyPaths(value)).toEqual(expect.arrayContaining([['a', 'constructor'], ['b', 1, '__proto__'], ['prototype']]));
    expect(forbiddenKeyPaths(value)).toHaveLength(3);
  });

  it('inherited keys are not own keys', () => {
    expect(forbiddenKeyPaths({ a: {} })).toEqual([]); // every object inherits `constructor`
  });
});

describe('documents per file and per stream', () => {
  it('documentMarkers counts the lines that open a document, as splitStream does', async () => {
    const { splitStream } = await import('../../src/manifests/stream.js');
    const texts = ['a: 1', '---\na: 1', 'a: 1\n---\nb: 2\n--- \nc: 3\n---\t# x\nd: 4', 'a: |\n  ---\nb: ----\n---x: 1\n---', 'x\r\n---\r\ny'];
    for (const t of texts) {
      const markers = documentMarkers(t, Infinity);
      expect(markers).toBe(t.split('\n').filter((l) => /^---(?:[ \t]|$)/.test(l.replace(/\r$/, ''))).length);
      expect(splitStream(t).length).toBeLessThanOrEqual(markers + 1);
    }
    expect(documentMarkers('---\n'.repeat(50), 10)).toBe(10);
  });

  it(`a file of more than ${MAX_FILE_DOCUMENTS} documents and a stream of more than ${MAX_STREAM_DOCUMENTS} are refused before parsing`, () => {
    const many = (n: number) => `${'{}\n---\n'.repeat(n - 1)}{}\n`;
    expect(precheck(many(MAX_FILE_DOCUMENTS))).toBeUndefined();
    expect(precheck(many(MAX_FILE_DOCUMENTS + 1))?.message).toBe(`more than ${MAX_FILE_DOCUMENTS} documents in one file; split it into several files`);
    const refused = parseStream(many(MAX_STREAM_DOCUMENTS + 1), '-', '/tmp');
    expect(refused.manifests).toEqual([]);
    expect(refused.diagnostics.map((d) => d.message)).toEqual([`the stream holds more than ${MAX_STREAM_DOCUMENTS} documents`]);
  });
});
