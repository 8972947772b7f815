/** setAnnotation: several documents of one file edited at once, every other byte kept. */
import { describe, expect, it } from 'vitest';
import { setAnnotation } from '../../src/manifests/annotate.js';

const doc = (name: string, annotations = '') => `kind: Integration\nmetadata:\n  name: ${name} # keep\n${annotations}spec:\n  type: x\n`;

describe('setAnnotation', () => {
  it('replaces, adds to and creates annotations in many documents of one file, each in its place', () => {
    const docs = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0 ? doc(`n${i}`) : i % 3 === 1 ? doc(`n${i}`, `  annotations:\n    govops.io/x: "old-${i}"\n`) : doc(`n${i}`, `  annotations:\n    other: "o"\n`),
    );
    const text = docs.join('---\n');
    const values = new Map(Array.from({ length: 300 }, (_, i) => [`n${i}`, `v-${i}`] as const).filter(([n]) => n !== 'n7'));
    const r = setAnnotation(text, 'Integration', 'govops.io/x', values);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const expected = docs
      .map((d, i) => {
        if (i === 7) return d;
        if (i % 3 === 0) return d.replace('  name: n' + i + ' # keep\n', `  name: n${i} # keep\n  annotations:\n    govops.io/x: "v-${i}"\n`);
        if (i % 3 === 1) return d.replace(`"old-${i}"`, `"v-${i}"`);
        return d.replace('    other: "o"\n', `    other: "o"\n    govops.io/x: "v-${i}"\n`);
      })
      .join('---\n');
    expect(r.text).toBe(expected);
    expect(r.edited).toHaveLength(299);
  });
});
