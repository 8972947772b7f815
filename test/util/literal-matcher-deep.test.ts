/**
 * The head index's second level (src/util/literal-matcher.ts): literals that share their first characters (GitHub
 * tokens `ghp_…`, AWS keys `AKIA…`, JWTs with one header) no longer make one long list that every occurrence of those
 * characters in a text reads whole. Counted by the comparisons made (a spy on String.prototype.startsWith: this file
 * runs in a worker of its own, vitest.config.ts ISOLATED), not by time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LiteralMatcher } from '../../src/util/literal-matcher.js';

/** Deterministic pseudo-random characters (a test that can be run again). */
function tokens(n: number, prefix: string, length: number, seed: number): string[] {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let t = prefix;
    while (t.length < length) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      t += abc[s % abc.length];
    }
    out.push(t);
  }
  return out;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('LiteralMatcher, literals sharing their first characters', () => {
  for (const [what, prefix, length] of [
    ['5,000 GitHub-like tokens (4 characters shared)', 'ghp_', 40],
    ['2,000 JWT-like values (36 characters shared)', 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.', 80],
  ] as const) {
    it(`${what}: an occurrence of the shared characters is not compared with each of them`, () => {
      const inForce = tokens(what.startsWith('5,000') ? 5000 : 2000, prefix, length, 7);
      const others = tokens(20, prefix, length, 99);
      const m = new LiteralMatcher(inForce, 'index');
      const text = `${others.map((t) => `pushed with ${t} to repo`).join('\n')}\nand ${inForce[1234]} here`;
      m.test('settle first');
      const startsWith = vi.spyOn(String.prototype, 'startsWith');
      expect(m.replace(text, '#')).toBe(`${others.map((t) => `pushed with ${t} to repo`).join('\n')}\nand # here`);
      // 21 occurrences of the shared characters (and the match's own positions): a handful of comparisons each; a list
      // of every literal under the shared head was 2,000-5,000 each
      expect(startsWith.mock.calls.length).toBeLessThan(21 * 40);
    });
  }
});
