/**
 * Natural order of names: runs of digits compare as numbers (`col-2` before `col-10` before `col-101`), the
 * rest by code unit (locale-independent, so the same on every machine). Equal numbers with different leading
 * zeros (`a-01`, `a-1`) fall back to plain order, so the order is total.
 */
const CHUNK = /(\d+)|(\D+)/g;

export function naturalCompare(a: string, b: string): number {
  if (a === b) return 0;
  const xs = a.match(CHUNK) ?? [];
  const ys = b.match(CHUNK) ?? [];
  const n = Math.min(xs.length, ys.length);
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (x === y) continue;
    const xd = x.charCodeAt(0) >= 48 && x.charCodeAt(0) <= 57;
    const yd = y.charCodeAt(0) >= 48 && y.charCodeAt(0) <= 57;
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
