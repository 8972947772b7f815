/** Sizes in flags: a number of bytes, or with a unit: `512KiB`, `1MiB`, `256KB` (1000s), `64k` (= KiB). */
const UNIT: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, kb: 1000, m: 1024 ** 2, mib: 1024 ** 2, mb: 1000 ** 2 };

export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNIT[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new Error(`invalid size "${text}": write bytes, or a number with a unit, e.g. 256KiB, 1MiB`);
  return Math.floor(Number(m[1]) * unit);
}
