/** Memory tuning is chosen once (when the daemon starts): the collector it returns runs a full collection. */
import { describe, expect, it } from 'vitest';
import { garbageCollector } from '../../src/daemon/memory.js';

describe('garbageCollector', () => {
  it('returns a full collection to run after each reconcile', () => {
    const gc = garbageCollector();
    const holder: { garbage?: number[][] } = { garbage: Array.from({ length: 200 }, () => Array.from({ length: 20_000 }, (_, i) => i)) };
    const held = process.memoryUsage().heapUsed;
    expect(holder.garbage?.length).toBe(200);
    delete holder.garbage;
    gc();
    expect(process.memoryUsage().heapUsed).toBeLessThan(held - 10 * 1024 * 1024);
  });
});
