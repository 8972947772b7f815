/**
 * The literal matcher behind the redactor: its head index (many literals) finds what one regular expression of the
 * literals, longest first, finds, at the same places, and replaces the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HEAD, LiteralMatcher, REGEX_MAX_LITERALS } from '../../src/util/literal-matcher.js';

/** What the redactor did before the index: one global regular expression of every literal, longest first. */
function regexReplace(literals: readonly string[], text: string, replacement: string): string {
  const sorted = [...new Set(literals)].sort((a, b) => b.length - a.length);
  if (!sorted.length) return text;
  return text.replace(new RegExp(sorted.map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g'), () => replacement);
}

// A small alphabet (overlaps, shared heads, one literal inside another), with a regexp metacharacter and
// characters outside the BMP (surrogate pairs) among them.
const char = fc.constantFrom('a', 'b', 'c', '.', '|', '$', 'ü', '😀');
const literal = fc.array(char, { minLength: 2, maxLength: 6 }).map((cs) => cs.join('')).filter((s) => s.length >= HEAD);
const text = fc.array(fc.oneof(char, fc.constantFrom('aaaa', 'abca', 'x', ' ')), { maxLength: 60 }).map((cs) => cs.join(''));

describe('LiteralMatcher', () => {
  it('the head index replaces what one regular expression of the literals, longest first, replaces (random overlapping literals)', () => {
    fc.assert(
      fc.property(fc.array(literal, { maxLength: 12 }), fc.array(text, { minLength: 1, maxLength: 5 }), (literals, texts) => {
        const index = new LiteralMatcher(literals, 'index');
        const regex = new LiteralMatcher(literals, 'regex');
        for (const t of texts) {
          // A literal from the set, planted: some text always holds one.
          for (const s of [t, literals.length ? `${t}${literals[t.length % literals.length]}${t}` : t]) {
            const expected = regexReplace(literals, s, '#');
            expect(index.replace(s, '#')).toBe(expected);
            expect(regex.replace(s, '#')).toBe(expected);
            expect(index.test(s)).toBe(expected !== s);
            for (let from = 0; from <= s.length; from += 3) expect(index.next(s, from)).toEqual(regex.next(s, from));
          }
        }
      }),
      { numRuns: 600 },
    );
  });

  it('chooses the head index above the regular expression limit, and finds each of many literals there', () => {
    const literals = Array.from({ length: REGEX_MAX_LITERALS * 8 }, (_, i) => `tok-${i}-${(i * 7919).toString(36)}`);
    const m = new LiteralMatcher(literals);
    expect(m.size).toBe(literals.length);
    for (const l of [literals[0]!, literals.at(-1)!, literals[1000]!]) {
      expect(m.replace(`{"msg":"said ${l}!"}`, '#')).toBe('{"msg":"said #!"}');
    }
    expect(m.test('{"msg":"tok-1-7919 is not one"}')).toBe(false);
    expect(() => new LiteralMatcher(['abc'])).toThrow(RangeError);
  });
});
