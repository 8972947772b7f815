/**
 * The literal matcher behind the redactor: its head index (many literals) finds what one regular expression of the
 * literals, longest first, finds, at the same places, and both replace every character of every occurrence.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEEP_LIST, HEAD, LiteralMatcher, REGEX_MAX_LITERALS } from '../../src/util/literal-matcher.js';

/**
 * What the redactor replaces, by brute force: from the left, the longest literal at the first position where one
 * starts, extended by every literal starting inside it and reaching past it (no character of any occurrence of any
 * literal is left); matches that only touch are two replacements. Also returns which characters were replaced.
 */
function coverReplace(literals: readonly string[], text: string, replacement: string): { out: string; covered: boolean[] } {
  const sorted = [...new Set(literals)].sort((a, b) => b.length - a.length);
  const longestAt = (p: number): string | undefined => sorted.find((l) => text.startsWith(l, p));
  const covered = Array.from({ length: text.length }, () => false);
  let out = '';
  let done = 0;
  for (let p = 0; p < text.length; ) {
    const l = longestAt(p);
    if (l === undefined) {
      p++;
      continue;
    }
    let end = p + l.length;
    for (let q = p + 1; q < end; q++) {
      const k = longestAt(q);
      if (k !== undefined && q + k.length > end) end = q + k.length;
    }
    out += text.slice(done, p) + replacement;
    for (let i = p; i < end; i++) covered[i] = true;
    done = p = end;
  }
  return { out: out + text.slice(done), covered };
}

/** Which characters some occurrence of some literal covers. */
function occurrences(literals: readonly string[], text: string): boolean[] {
  const covered = Array.from({ length: text.length }, () => false);
  for (const l of new Set(literals)) {
    for (let at = text.indexOf(l); at >= 0; at = text.indexOf(l, at + 1)) for (let i = at; i < at + l.length; i++) covered[i] = true;
  }
  return covered;
}

// A small alphabet (overlaps, shared heads, one literal inside another), with a regexp metacharacter and
// characters outside the BMP (surrogate pairs) among them.
const char = fc.constantFrom('a', 'b', 'c', '.', '|', '$', 'ü', '😀');
const literal = fc.array(char, { minLength: 2, maxLength: 6 }).map((cs) => cs.join('')).filter((s) => s.length >= HEAD);
const text = fc.array(fc.oneof(char, fc.constantFrom('aaaa', 'abca', 'x', ' ')), { maxLength: 60 }).map((cs) => cs.join(''));

describe('LiteralMatcher', () => {
  it('the head index and the regular expression replace every occurrence of every literal, overlapping ones as one (random overlapping literals)', () => {
    fc.assert(
      fc.property(fc.array(literal, { maxLength: 12 }), fc.array(text, { minLength: 1, maxLength: 5 }), (literals, texts) => {
        const index = new LiteralMatcher(literals, 'index');
        const regex = new LiteralMatcher(literals, 'regex');
        for (const t of texts) {
          // A literal from the set, planted: some text always holds one.
          for (const s of [t, literals.length ? `${t}${literals[t.length % literals.length]}${t}` : t]) {
            const { out: expected, covered } = coverReplace(literals, s, '#');
            expect(covered).toEqual(occurrences(literals, s));
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

  it('literals sharing their first characters, past the second level of the index, are found as the regular expression finds them (random shared beginnings, changed in place)', () => {
    // a few beginnings (4 to 12 characters, one inside another), then a short tail: long head lists, levels within levels,
    // literals ending inside a level beside longer ones
    const shared = fc
      .tuple(fc.constantFrom('ghp_', 'ghp_ab', 'eyJhbGciOiJI', 'aaaa', 'aaaaaaaa'), fc.array(fc.constantFrom('a', 'b', '_', 'ü', '😀'), { maxLength: 8 }))
      .map(([head, tail]) => head + tail.join(''));
    const piece = fc.oneof(shared, fc.constantFrom('ghp', 'eyJ', 'aaa', ' ', 'b'));
    const sharedText = fc.array(piece, { maxLength: 12 }).map((ps) => ps.join(''));
    fc.assert(
      fc.property(fc.uniqueArray(shared, { minLength: DEEP_LIST + 1, maxLength: 6 * DEEP_LIST }), fc.array(sharedText, { minLength: 1, maxLength: 4 }), fc.nat(), (literals, texts, cut) => {
        const index = new LiteralMatcher(literals, 'index');
        const regex = new LiteralMatcher(literals, 'regex');
        for (const t of texts) {
          for (const s of [t, `${t}${literals[t.length % literals.length]}${t}`]) {
            const { out: expected } = coverReplace(literals, s, '#');
            expect(index.replace(s, '#')).toBe(expected);
            expect(regex.replace(s, '#')).toBe(expected);
            for (let from = 0; from <= s.length; from += 2) expect(index.next(s, from)).toEqual(regex.next(s, from));
          }
        }
        // some leave and come back: the levels are made again from what stays
        const leaving = literals.slice(0, cut % literals.length);
        for (const l of leaving) index.delete(l);
        const staying = literals.slice(leaving.length);
        for (const t of texts) expect(index.replace(`${t}${literals[0]}`, '#')).toBe(coverReplace(staying, `${t}${literals[0]}`, '#').out);
        for (const l of leaving) index.add(l);
        for (const t of texts) expect(index.replace(`${t}${literals[0]}`, '#')).toBe(coverReplace(literals, `${t}${literals[0]}`, '#').out);
      }),
      { numRuns: 300 },
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

  it('changed in place (added, deleted, counted) it finds what a matcher made afresh of the same literals finds, either way and across the limit', () => {
    const op = fc.record({ add: fc.boolean(), literal });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.array(text, { minLength: 1, maxLength: 3 }), (ops, texts) => {
        const matchers = [new LiteralMatcher([], 'index'), new LiteralMatcher([], 'regex'), new LiteralMatcher()];
        const counts = new Map<string, number>();
        for (const { add, literal: l } of ops) {
          const n = counts.get(l) ?? 0;
          if (add) counts.set(l, n + 1);
          else if (n > 1) counts.set(l, n - 1);
          else counts.delete(l);
          for (const m of matchers) {
            if (add) m.add(l);
            else m.delete(l);
          }
          // used between changes too: what a change leaves unsorted is put in order at the next use
          const probe = `${texts[0]}${l}`;
          const fresh = new LiteralMatcher(counts.keys(), 'regex');
          for (const m of matchers) expect(m.replace(probe, '#')).toBe(fresh.replace(probe, '#'));
        }
        const fresh = new LiteralMatcher(counts.keys(), 'regex');
        for (const m of matchers) {
          expect(m.size).toBe(counts.size);
          for (const t of texts) {
            expect(m.replace(t, '#')).toBe(fresh.replace(t, '#'));
            for (const l of counts.keys()) expect(m.replace(`${t}${l}`, '#')).toBe(fresh.replace(`${t}${l}`, '#'));
          }
        }
      }),
      { numRuns: 300 },
    );
    // the automatic choice crosses the limit both ways as literals come and go
    const many = Array.from({ length: REGEX_MAX_LITERALS + 10 }, (_, i) => `lit-${i}-x`);
    const m = new LiteralMatcher(many.slice(0, REGEX_MAX_LITERALS - 5));
    expect(m.replace('a lit-3-x b', '#')).toBe('a # b');
    for (const l of many) m.add(l);
    for (const l of many.slice(0, REGEX_MAX_LITERALS - 5)) m.delete(l);
    expect(m.size).toBe(many.length);
    expect(m.replace(`a lit-3-x b ${many.at(-1)!}`, '#')).toBe('a # b #');
    for (const l of many) m.delete(l);
    expect(m.size).toBe(0);
    expect(m.test(many.join(' '))).toBe(false);
    expect(m.next(many.join(' '))).toBeUndefined();
  });
});
