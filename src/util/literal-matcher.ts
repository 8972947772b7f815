/**
 * A set of literal strings (each at least HEAD characters long) found in a text in one pass, with the semantics of
 * a global regular expression of them as alternatives, longest first: at each position from the left, the longest
 * literal that starts there (`next`). `replace` also covers a literal that starts inside a match and reaches past it.
 *
 * Few literals: that very regular expression (V8 searches a handful of literals fast). Many (a daemon holding
 * 10,000 credentials has ~130,000 encoded forms of them): the regular expression tries every alternative at every
 * position (a 150-byte log line took 3-6 ms against 130,000 forms, and compiling it 0.4 s), so the literals are
 * indexed by a hash of their first HEAD characters instead and each position costs one lookup, whatever their number.
 *
 * The set changes in place (`add`, `delete`, counted: a literal added twice stays until deleted twice), at a cost that
 * grows with the change, not with the set: a daemon holding 10,000 credentials re-indexed all their ~900,000 forms at
 * each rotation, 0.7-1.2 s of its event loop. Only the head lists a change touched are put in order again, when the
 * matcher is next used; the regular expression is made again then, if the set is small enough to use it.
 *
 * Literals that share their first characters (GitHub tokens `ghp_…`, AWS keys `AKIA…`, JWTs with one header: 36) share
 * a head list, and each place in a text where those characters occur read the list whole: 5,000 such tokens in force
 * made a log line naming another one cost ~0.5 ms. A list longer than DEEP_LIST is indexed again by the hash of its
 * literals' next HEAD characters, and so on while a list stays that long (`ChunkNode`): a lookup reads one short list
 * a level.
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

const longestFirst = (a: string, b: string): number => b.length - a.length;

/** A head list longer than this is indexed again by its literals' next HEAD characters (a `ChunkNode`). */
export const DEEP_LIST = 16;
/** No level past this many characters (a list of literals all sharing longer beginnings stays a list). */
const DEEP_CHARS = 256;

/**
 * The literals of a long list, all alike in their first `end` characters but for hash collisions (checked at the
 * end by `startsWith`): those that end before the next HEAD characters (`short`, longest first), the others by the
 * hash of those characters (each a list, longest first, or a node again when it is long).
 */
interface ChunkNode {
  end: number;
  short: string[];
  byChunk: Map<number, Lookup>;
}

type Lookup = string[] | ChunkNode;

/** `list` (longest first) as it is looked up: itself, or a node when it is longer than DEEP_LIST. */
function lookupOf(list: string[], end: number): Lookup {
  if (list.length <= DEEP_LIST || end >= DEEP_CHARS) return list;
  const short: string[] = [];
  const groups = new Map<number, string[]>();
  for (const l of list) {
    if (l.length < end + HEAD) short.push(l);
    else {
      const h = headHash(l, end) & MASK;
      const g = groups.get(h);
      if (g) g.push(l);
      else groups.set(h, [l]);
    }
  }
  const byChunk = new Map<number, Lookup>();
  for (const [h, g] of groups) byChunk.set(h, lookupOf(g, end + HEAD));
  return { end, short, byChunk };
}

/**
 * The longest literal of `lookup` that starts at `at` in `text`. One of a deeper level is longer than every `short`
 * one of the levels above it (`end + HEAD` characters at least): the deepest level that holds a match decides.
 */
function longestIn(lookup: Lookup, text: string, at: number): string | undefined {
  if (Array.isArray(lookup)) {
    for (const l of lookup) if (text.startsWith(l, at)) return l;
    return undefined;
  }
  if (text.length - at >= lookup.end + HEAD) {
    const next = lookup.byChunk.get(headHash(text, at + lookup.end) & MASK);
    const found = next && longestIn(next, text, at);
    if (found !== undefined) return found;
  }
  for (const l of lookup.short) if (text.startsWith(l, at)) return l;
  return undefined;
}

export interface LiteralMatch {
  at: number;
  literal: string;
}

export class LiteralMatcher {
  /** Each literal in the set, with how many times it was added and not deleted. */
  private readonly counts = new Map<string, number>();
  /** Literals by the hash of their head, each list longest first (but for the lists in `unsorted`). */
  private readonly byHead = new Map<number, string[]>();
  /**
   * The lists longer than DEEP_LIST as they are looked up (`lookupOf`), each made when a text first meets its head (a
   * set-up indexes ~900,000 forms, most under heads no text meets) and made again after a change to the list.
   */
  private readonly deep = new Map<number, ChunkNode>();
  /** Heads whose list a change touched: put in order before the next use. */
  private readonly unsorted = new Set<number>();
  /** Of those, the heads a literal left (or left and came back to): rid of it too. */
  private readonly pruned = new Set<number>();
  private readonly strategy: 'auto' | 'regex' | 'index';
  /** The regular expression of the literals, longest first, when it is the one used (made again after a change). */
  private pattern: RegExp | undefined;
  /** The same, anchored where it is tried (`longestAt`). */
  private sticky: RegExp | undefined;
  private stale = false;

  constructor(literals: Iterable<string> = [], strategy: 'auto' | 'regex' | 'index' = 'auto') {
    this.strategy = strategy;
    for (const l of literals) this.add(l);
  }

  get size(): number {
    return this.counts.size;
  }

  /** Add `literal` (once more, when it is in the set already). */
  add(literal: string): void {
    if (literal.length < HEAD) throw new RangeError(`a literal shorter than ${HEAD} characters`);
    const n = this.counts.get(literal);
    this.counts.set(literal, (n ?? 0) + 1);
    if (n !== undefined) return;
    const h = headHash(literal, 0) & MASK;
    const list = this.byHead.get(h);
    if (list) {
      list.push(literal);
      this.unsorted.add(h);
    } else {
      this.byHead.set(h, [literal]);
    }
    this.stale = true;
  }

  /** Take `literal` out once (it leaves the set when it has been deleted as often as added). */
  delete(literal: string): void {
    const n = this.counts.get(literal);
    if (n === undefined) return;
    if (n > 1) {
      this.counts.set(literal, n - 1);
      return;
    }
    this.counts.delete(literal);
    const h = headHash(literal, 0) & MASK;
    this.unsorted.add(h);
    this.pruned.add(h);
    this.stale = true;
  }

  /** The index and the regular expression brought up to date with the changes since the last use. */
  private settle(): void {
    if (!this.stale) return;
    for (const h of this.unsorted) {
      const list = this.byHead.get(h)!;
      if (this.deep.size) this.deep.delete(h); // its levels are made again from the list as it is now, at first use
      if (!this.pruned.has(h)) {
        // literals came only: appended to a list in order (a sort of sorted runs is a merge)
        if (list.length > 1) list.sort(longestFirst);
        continue;
      }
      const kept = [...new Set(list.filter((l) => this.counts.has(l)))].sort(longestFirst);
      if (kept.length) this.byHead.set(h, kept);
      else this.byHead.delete(h);
    }
    this.unsorted.clear();
    this.pruned.clear();
    const useRegex = this.counts.size > 0 && (this.strategy === 'regex' || (this.strategy === 'auto' && this.counts.size <= REGEX_MAX_LITERALS));
    if (useRegex) {
      this.pattern = new RegExp([...this.counts.keys()].sort(longestFirst).map(escapeRegExp).join('|'), 'g');
      this.sticky = new RegExp(this.pattern.source, 'y');
    } else {
      this.pattern = this.sticky = undefined;
    }
    this.stale = false;
  }

  /** The longest literal starting at `at` among those whose head hashes to `h` (after `settle`). */
  private longestUnder(h: number, text: string, at: number): string | undefined {
    const list = this.byHead.get(h);
    if (!list) return undefined;
    let lookup: Lookup = list;
    if (list.length > DEEP_LIST) {
      const known = this.deep.get(h);
      if (known) lookup = known;
      else {
        lookup = lookupOf(list, HEAD);
        if (!Array.isArray(lookup)) this.deep.set(h, lookup);
      }
    }
    return longestIn(lookup, text, at);
  }

  /** The leftmost match at or after `from`: the longest literal starting there. */
  next(text: string, from = 0): LiteralMatch | undefined {
    this.settle();
    if (this.pattern) {
      this.pattern.lastIndex = from;
      const m = this.pattern.exec(text);
      this.pattern.lastIndex = 0;
      return m ? { at: m.index, literal: m[0] } : undefined;
    }
    if (this.byHead.size === 0 || text.length - from < HEAD) return undefined;
    let h = headHash(text, from);
    for (let at = from; ; at++) {
      const l = this.longestUnder(h & MASK, text, at);
      if (l !== undefined) return { at, literal: l };
      if (at + HEAD >= text.length) return undefined;
      // Roll the hash one character on: drop text[at], add text[at + HEAD].
      h = (Math.imul((h - Math.imul(text.charCodeAt(at), P3)) | 0, P) + text.charCodeAt(at + HEAD)) | 0;
    }
  }

  /** Some literal occurs in `text`. */
  test(text: string): boolean {
    this.settle();
    if (!this.pattern) return this.next(text) !== undefined;
    this.pattern.lastIndex = 0;
    const found = this.pattern.test(text);
    this.pattern.lastIndex = 0;
    return found;
  }

  /** The longest literal starting exactly at `at`, or undefined (after `settle`). */
  private longestAt(text: string, at: number): string | undefined {
    if (this.sticky) {
      this.sticky.lastIndex = at;
      const m = this.sticky.exec(text);
      this.sticky.lastIndex = 0;
      return m?.[0];
    }
    if (text.length - at < HEAD) return undefined;
    return this.longestUnder(headHash(text, at) & MASK, text, at);
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
