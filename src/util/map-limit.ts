/**
 * `fn` over `items` with at most `limit` calls in flight; results in the order of the items. A rejection
 * rejects the whole (the calls already started finish unobserved), as `Promise.all` would.
 * (The manifest loader's file reads: a plain pool is cheaper than a p-queue per load, and keeps p-queue and
 * its four modules out of `validate`; issue #26.)
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
