/** The collection helpers: grouping and first-by-key keep the items' order; pushAll takes any number of items. */
import { describe, expect, it } from 'vitest';
import { appendTo, firstBy, groupBy, pushAll } from '../../src/util/multimap.js';

describe('multimap helpers', () => {
  it('groupBy and firstBy keep the order of the items; appendTo starts a list for a new key', () => {
    const items = ['b1', 'a1', 'b2', 'a2', 'c1'];
    expect([...groupBy(items, (s) => s[0])]).toEqual([
      ['b', ['b1', 'b2']],
      ['a', ['a1', 'a2']],
      ['c', ['c1']],
    ]);
    expect([...firstBy(items, (s) => s[0])]).toEqual([
      ['b', 'b1'],
      ['a', 'a1'],
      ['c', 'c1'],
    ]);
    const m = new Map<string, number[]>();
    appendTo(m, 'x', 1);
    appendTo(m, 'x', 2);
    expect(m.get('x')).toEqual([1, 2]);
  });

  it('pushAll appends 300,000 items in order (a spread into push overflows the stack past ~125,000)', () => {
    const target = [-1];
    const items = Array.from({ length: 300_000 }, (_, i) => i);
    pushAll(target, items);
    expect(target).toHaveLength(300_001);
    expect(target[0]).toBe(-1);
    expect(target[300_000]).toBe(299_999);
  });
});
