import { describe, expect, it } from 'vitest';
import { eachLimit, mapLimit } from '../../src/util/map-limit.js';

/** A call that finishes when the test releases it, so the calls in flight can be counted. */
function gated<T>(): { calls: Array<{ item: T; release: () => void }>; fn: (item: T) => Promise<T> } {
  const calls: Array<{ item: T; release: () => void }> = [];
  return {
    calls,
    fn: (item) => new Promise<T>((resolve) => calls.push({ item, release: () => resolve(item) })),
  };
}
const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('mapLimit', () => {
  it('never more than the limit in flight; results in the order of the items', async () => {
    const g = gated<number>();
    const done = mapLimit([1, 2, 3, 4, 5], 2, g.fn);
    await flush();
    expect(g.calls.map((c) => c.item)).toEqual([1, 2]);
    g.calls[1]!.release(); // the second finishes first
    await flush();
    expect(g.calls.map((c) => c.item)).toEqual([1, 2, 3]);
    for (let i = 0; i < 5; i++) {
      g.calls[i]?.release();
      await flush();
    }
    for (const c of g.calls) c.release();
    expect(await done).toEqual([1, 2, 3, 4, 5]);
  });

  it('no items: no call', async () => {
    expect(await mapLimit([], 32, () => Promise.reject(new Error('called')))).toEqual([]);
  });

  it('a rejection rejects the whole', async () => {
    await expect(mapLimit([1, 2, 3], 2, (n) => (n === 2 ? Promise.reject(new Error('two')) : Promise.resolve(n)))).rejects.toThrow('two');
  });
});

describe('eachLimit', () => {
  it('never more than the limit in flight; after a failure starts nothing more and rejects only once the calls under way finished', async () => {
    const calls: Array<{ item: number; settle: (err?: Error) => void }> = [];
    const fn = (item: number) => new Promise<void>((resolve, reject) => calls.push({ item, settle: (err) => (err ? reject(err) : resolve()) }));
    let outcome: unknown = 'pending';
    const done = eachLimit([1, 2, 3, 4, 5], 2, fn).then(
      () => (outcome = 'resolved'),
      (err: unknown) => (outcome = err),
    );
    await flush();
    expect(calls.map((c) => c.item)).toEqual([1, 2]);
    calls[0]!.settle(new Error('one'));
    await flush();
    expect(calls.map((c) => c.item)).toEqual([1, 2]); // nothing new starts after the failure
    expect(outcome).toBe('pending'); // 2 is still under way
    calls[1]!.settle();
    await done;
    expect((outcome as Error).message).toBe('one');
    expect(calls.map((c) => c.item)).toEqual([1, 2]);
  });

  it('runs every item when none fails; no items: no call', async () => {
    const seen: number[] = [];
    await eachLimit([1, 2, 3, 4, 5], 2, async (n) => {
      seen.push(n);
    });
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    await eachLimit([], 32, () => Promise.reject(new Error('called')));
  });
});
