/** "Did you mean" suggestions for unknown keys and values (optimal string alignment distance). */

export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  if (m === 0) return n;
  if (n === 0) return m;
  const d: number[][] = Array.from({ length: m + 1 }, (_, i) => {
    const row = new Array<number>(n + 1).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j <= n; j++) d[0]![j] = j;
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[m]![n]!;
}

/**
 * editDistance(a, b) when it is at most `bound`, else any number above `bound`: only the cells within `bound` of the
 * diagonal are worked out, and the rows stop once none of them is within `bound`. A suggestion needs no more (its
 * limit is 1-3), so a word is checked against thousands of names in time linear in their number.
 */
export function editDistanceWithin(a: string, b: string, bound: number): number {
  const m = a.length;
  const n = b.length;
  if (Math.abs(m - n) > bound) return bound + 1;
  if (m === 0 || n === 0) return Math.max(m, n);
  const far = bound + 1;
  // Three rows: i - 2 (transpositions), i - 1 and i; cells outside the band count as `far`.
  let prev2 = new Array<number>(n + 1).fill(far);
  let prev = new Array<number>(n + 1).fill(far);
  let cur = new Array<number>(n + 1).fill(far);
  for (let j = 0; j <= Math.min(n, bound); j++) prev[j] = j;
  for (let i = 1; i <= m; i++) {
    const lo = Math.max(1, i - bound);
    const hi = Math.min(n, i + bound);
    cur.fill(far);
    if (i <= bound) cur[0] = i;
    let rowMin = cur[0]!;
    for (let j = lo; j <= hi; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = Math.min(v, far);
      if (cur[j]! < rowMin) rowMin = cur[j]!;
    }
    if (rowMin > bound) return far;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n]!;
}

/** The closest candidate to `word`, if it is close enough to be a plausible typo (the first of the closest). */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const limit = word.length <= 3 ? 1 : word.length <= 6 ? 2 : 3;
  let best: string | undefined;
  let bestScore = limit + 1;
  for (const c of candidates) {
    if (c === word) continue;
    const cl = c.toLowerCase();
    // Only a strictly closer candidate replaces the best, so nothing further than bestScore - 1 is worked out.
    const score = cl === lower ? 0 : editDistanceWithin(lower, cl, bestScore - 1);
    if (score < bestScore) {
      best = c;
      bestScore = score;
      if (score === 0) break;
    }
  }
  return best;
}

export function suggestion(word: string, candidates: Iterable<string>): string {
  const s = didYouMean(word, candidates);
  return s === undefined ? '' : ` (did you mean \`${s}\`?)`;
}
