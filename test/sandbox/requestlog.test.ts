/** The sandbox's request log keeps the last `limit` requests, oldest first, each numbered in order. */
import { describe, expect, it } from 'vitest';
import { RequestLog } from '../../src/sandbox/requestlog.js';

const entry = (i: number) => ({ method: 'GET', path: `/r/${i}`, query: { i: String(i) }, status: 200, time: 't', durationMs: 0 });

describe('RequestLog', () => {
  it('lists the last `limit` requests in order, across its trims, and copies what it lists', () => {
    const log = new RequestLog(5);
    for (let i = 1; i <= 3; i++) log.add(entry(i));
    expect(log.list().map((e) => [e.seq, e.path])).toEqual([
      [1, '/r/1'],
      [2, '/r/2'],
      [3, '/r/3'],
    ]);
    for (let n = 4; n <= 23; n++) {
      log.add(entry(n));
      const listed = log.list();
      const first = Math.max(1, n - 4);
      expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: n - first + 1 }, (_, k) => first + k));
      expect(listed.map((e) => e.path)).toEqual(listed.map((e) => `/r/${e.seq}`));
    }
    log.list()[0]!.query.i = 'changed';
    expect(log.list()[0]!.query.i).toBe('19');
    log.clear();
    expect(log.list()).toEqual([]);
  });
});
