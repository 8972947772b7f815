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

/**
 * `fn` over `items` with at most `limit` calls in flight, for their effects. After the first failure no further
 * call starts, and it rejects with that failure once the calls under way have finished: a caller that undoes what
 * was done sees all of it (unlike `mapLimit`, whose calls may still finish after it rejected).
 */
export async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.err;
}
