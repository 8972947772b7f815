/** printableData: the check that decides whether plan data must be copied walks every own string, keys included. */
import { describe, expect, it } from 'vitest';
import { printableData } from '../../src/util/terminal.js';

describe('printableData', () => {
  it('returns the same object when nothing would be escaped', () => {
    const plan = { changes: [{ name: 'a', fields: [{ path: 'url', after: 'https://h.example.com' }], n: 1, b: false, z: null }] };
    expect(printableData(plan)).toBe(plan);
  });

  it('finds an unprintable value or key at any depth, through arrays', () => {
    const value = { changes: [{ fields: [{ after: 'a\u001b[2Jb' }] }] };
    expect(printableData(value)).toEqual({ changes: [{ fields: [{ after: 'a\\x1b[2Jb' }] }] });
    const key = { changes: [[{ 'k\u200b': 1 }]] };
    expect(Object.keys((printableData(key).changes[0]![0] as object))).toEqual(['k\\u200b']);
  });

  it('leaves the raw fields as they are', () => {
    const value = { raw: 'a\u001bb', other: 'ok' };
    expect(printableData(value, new Set(['raw']))).toBe(value);
  });
});
