/**
 * "Did you mean" suggestions: the bounded distance agrees with the full one wherever it matters, and the suggestion
 * is the one a comparison with every candidate gives (the first of the closest, within the word's limit), found
 * without working out every full distance (data sources naming missing integrations, checked against thousands).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, editDistanceWithin } from '../../src/manifests/suggest.js';

/** The suggestion as it was first written: every full distance, the first of the lowest, if within the limit. */
function fullScan(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const score = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (score < bestScore) {
      best = c;
      bestScore = score;
    }
  }
  const limit = word.length <= 3 ? 1 : word.length <= 6 ? 2 : 3;
  return best !== undefined && bestScore <= limit ? best : undefined;
}

const word = fc.array(fc.constantFrom('a', 'b', 'c', 'A', '-', '1'), { maxLength: 9 }).map((cs) => cs.join(''));

describe('suggestions', () => {
  it('editDistanceWithin is the distance when within the bound, and above the bound otherwise', () => {
    fc.assert(
      fc.property(word, word, fc.integer({ min: 0, max: 4 }), (a, b, bound) => {
        const d = editDistance(a, b);
        const w = editDistanceWithin(a, b, bound);
        if (d <= bound) expect(w).toBe(d);
        else expect(w).toBeGreaterThan(bound);
      }),
      { numRuns: 3000 },
    );
  });

  it('didYouMean gives what a full comparison with every candidate gives', () => {
    fc.assert(
      fc.property(word, fc.array(word, { maxLength: 12 }), (w, candidates) => {
        expect(didYouMean(w, candidates)).toBe(fullScan(w, candidates));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds the near name among 10,000 and none for a far one', () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `store-${i}`);
    expect(didYouMean('stroe-9876', names)).toBe('store-9876');
    expect(didYouMean('renamed-store-1', names)).toBeUndefined();
  });
});
