/**
 * Natural order of names: runs of digits compare as numbers (`col-2` before `col-10` before `col-101`), the
 * rest by code unit (locale-independent, so the same on every machine). Equal numbers with different leading
 * zeros (`a-01`, `a-1`) fall back to plain order, so the order is total.
 *
 * Read in place, chunk by chunk (no array of chunks, no string per chunk): a plan sorts 10,000 changes with it,
 * ~140,000 comparisons (issue #26).
 */
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** End of the run of digits (or of non-digits) starting at `i`. */
function chunkEnd(s: string, i: number): number {
  const digits = isDigit(s.charCodeAt(i));
  let e = i + 1;
  while (e < s.length && isDigit(s.charCodeAt(e)) === digits) e++;
  return e;
}

/** How many chunks `s` holds from `i` on. */
function chunksFrom(s: string, i: number): number {
  let n = 0;
  for (; i < s.length; i = chunkEnd(s, i)) n++;
  return n;
}

/** Code-unit order of s[i, ie) and t[j, je) (a prefix first); 0 when equal. */
function compareRange(s: string, i: number, ie: number, t: string, j: number, je: number): number {
  const n = Math.min(ie - i, je - j);
  for (let k = 0; k < n; k++) {
    const d = s.charCodeAt(i + k) - t.charCodeAt(j + k);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return ie - i === je - j ? 0 : ie - i < je - j ? -1 : 1;
}

export function naturalCompare(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ie = chunkEnd(a, i);
    const je = chunkEnd(b, j);
    if (isDigit(a.charCodeAt(i)) && isDigit(b.charCodeAt(j))) {
      // as numbers: leading zeros skipped (one digit kept), then the longer is the larger
      let x = i;
      while (x < ie - 1 && a.charCodeAt(x) === 48) x++;
      let y = j;
      while (y < je - 1 && b.charCodeAt(y) === 48) y++;
      if (ie - x !== je - y) return ie - x - (je - y);
      const c = compareRange(a, x, ie, b, y, je);
      if (c !== 0) return c;
    } else {
      const c = compareRange(a, i, ie, b, j, je);
      if (c !== 0) return c;
    }
    i = ie;
    j = je;
  }
  const left = chunksFrom(a, i) - chunksFrom(b, j);
  if (left !== 0) return left;
  return a < b ? -1 : 1;
}
