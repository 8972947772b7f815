/**
 * A set of literal strings (each at least HEAD characters long) found in a text in one pass, with the semantics of
 * a global regular expression of them as alternatives, longest first: at each position from the left, the longest
 * literal that starts there (`next`). `replace` also covers a literal that starts inside a match and reaches past it.
 *
 * Few literals: that very regular expression (V8 searches a handful of literals fast). Many (a daemon holding
 * 10,000 credentials has ~130,000 encoded forms of them): the regular expression tries every alternative at every
 * position (a 150-byte log line took 3-6 ms against 130,000 forms, and compiling it 0.4 s), so the literals are
 * indexed by a hash of their first HEAD characters instead and each position costs one lookup, whatever their number.
 */
import { escapeRegExp } from './strings.js';

/** Every literal is at least this long (the redactor registers no shorter value). */
export const HEAD = 4;

/** Up to this many literals, one regular expression; above, the head index (measured crossover: bench/RESULTS.md). */
export const REGEX_MAX_LITERALS = 256;

const P = 31;
const P3 = P * P * P;
const MASK = 0x3fffffff;

/** The hash of text[at .. at + HEAD). */
function headHash(text: string, at: number): number {
  let h = 0;
  for (let k = 0; k < HEAD; k++) h = (Math.imul(h, P) + text.charCodeAt(at + k)) | 0;
  return h;
}

export interface LiteralMatch {
  at: number;
  literal: string;
}

export class LiteralMatcher {
  /** Longest first: the first that matches at a position is the longest there. */
  private readonly literals: string[];
  private readonly pattern?: RegExp;
  /** The same, anchored where it is tried (`longestAt`). */
  private readonly sticky?: RegExp;
  /** Literals by the hash of their head, each list longest first. */
  private readonly byHead?: Map<number, string[]>;

  constructor(literals: Iterable<string>, strategy: 'auto' | 'regex' | 'index' = 'auto') {
    this.literals = [...new Set(literals)].sort((a, b) => b.length - a.length);
    for (const l of this.literals) if (l.length < HEAD) throw new RangeError(`a literal shorter than ${HEAD} characters`);
    const useRegex = strategy === 'regex' || (strategy === 'auto' && this.literals.length <= REGEX_MAX_LITERALS);
    if (this.literals.length === 0) return;
    if (useRegex) {
      this.pattern = new RegExp(this.literals.map(escapeRegExp).join('|'), 'g');
      this.sticky = new RegExp(this.pattern.source, 'y');
      return;
    }
    this.byHead = new Map();
    for (const l of this.literals) {
      const h = headHash(l, 0) & MASK;
      const list = this.byHead.get(h);
      if (list) list.push(l);
      else this.byHead.set(h, [l]);
    }
  }

  get size(): number {
    return this.literals.length;
  }

  /** The leftmost match at or after `from`: the longest literal starting there. */
  next(text: string, from = 0): LiteralMatch | undefined {
    if (this.pattern) {
      this.pattern.lastIndex = from;
      const m = this.pattern.exec(text);
      this.pattern.lastIndex = 0;
      return m ? { at: m.index, literal: m[0] } : undefined;
    }
    const byHead = this.byHead;
    if (!byHead || text.length - from < HEAD) return undefined;
    let h = headHash(text, from);
    for (let at = from; ; at++) {
      const list = byHead.get(h & MASK);
      if (list) for (const l of list) if (text.startsWith(l, at)) return { at, literal: l };
      if (at + HEAD >= text.length) return undefined;
      // Roll the hash one character on: drop text[at], add text[at + HEAD].
      h = (Math.imul((h - Math.imul(text.charCodeAt(at), P3)) | 0, P) + text.charCodeAt(at + HEAD)) | 0;
    }
  }

  /** Some literal occurs in `text`. */
  test(text: string): boolean {
    if (!this.pattern) return this.next(text) !== undefined;
    this.pattern.lastIndex = 0;
    const found = this.pattern.test(text);
    this.pattern.lastIndex = 0;
    return found;
  }

  /** The longest literal starting exactly at `at`, or undefined. */
  private longestAt(text: string, at: number): string | undefined {
    if (this.sticky) {
      this.sticky.lastIndex = at;
      const m = this.sticky.exec(text);
      this.sticky.lastIndex = 0;
      return m?.[0];
    }
    if (!this.byHead || text.length - at < HEAD) return undefined;
    const list = this.byHead.get(headHash(text, at) & MASK);
    return list?.find((l) => text.startsWith(l, at));
  }

  /**
   * Every match, from the left, replaced by `replacement`, taken literally (`$` is not special). A literal starting
   * inside a match and reaching past it extends that match: the redactor replaces every character of every
   * occurrence, so one value (an author's, ending in the first characters of another) cannot uncover the rest of
   * another. Matches that only touch stay two replacements.
   */
  replace(text: string, replacement: string): string {
    const spans = this.spans(text);
    if (!spans.length) return text;
    let out = '';
    let done = 0;
    for (const [at, end] of spans) {
      out += text.slice(done, at) + replacement;
      done = end;
    }
    return out + text.slice(done);
  }

  /** What `replace` replaces: each match, extended as it says, as [start, end), left to right. */
  spans(text: string): Array<[number, number]> {
    const spans: Array<[number, number]> = [];
    let m = this.next(text);
    while (m) {
      let end = m.at + m.literal.length;
      for (let p = m.at + 1; p < end; p++) {
        const l = this.longestAt(text, p);
        if (l !== undefined && p + l.length > end) end = p + l.length;
      }
      spans.push([m.at, end]);
      m = this.next(text, end);
    }
    return spans;
  }
}
