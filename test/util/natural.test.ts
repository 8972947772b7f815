/** naturalCompare, read in place: the same answers as the first definition (chunks split by a regex). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { naturalCompare } from '../../src/util/natural.js';

/** The first definition, kept as the reference. */
function byChunks(a: string, b: string): number {
  if (a === b) return 0;
  const xs = a.match(/(\d+)|(\D+)/g) ?? [];
  const ys = b.match(/(\d+)|(\D+)/g) ?? [];
  const n = Math.min(xs.length, ys.length);
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (x === y) continue;
    const xd = /^\d/.test(x);
    const yd = /^\d/.test(y);
    if (xd && yd) {
      const xt = x.replace(/^0+(?=\d)/, '');
      const yt = y.replace(/^0+(?=\d)/, '');
      if (xt.length !== yt.length) return xt.length - yt.length;
      if (xt !== yt) return xt < yt ? -1 : 1;
      continue;
    }
    return x < y ? -1 : 1;
  }
  if (xs.length !== ys.length) return xs.length - ys.length;
  return a < b ? -1 : 1;
}

const name = fc.string({ unit: fc.constantFrom('a', 'b', '-', '0', '1', '2', '9', 'é', 'Z'), maxLength: 10 });

describe('naturalCompare', () => {
  it('orders numbers as numbers, the rest by code unit, and is total', () => {
    const names = ['col-10', 'col-2', 'col-101', 'a-01', 'a-1', 'b', 'a', '', '10', '9', 'a-1b', 'a-1-'];
    expect([...names].sort(naturalCompare)).toEqual(['', '9', '10', 'a', 'a-01', 'a-1', 'a-1-', 'a-1b', 'b', 'col-2', 'col-10', 'col-101']);
  });

  it('gives what the chunk-splitting definition gives, value for value', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(naturalCompare(a, b)).toBe(byChunks(a, b));
      }),
      { numRuns: 20_000 },
    );
  });
});
