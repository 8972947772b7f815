import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyPlain } from '../../src/util/copy.js';

describe('copyPlain (deep copy of parsed manifests and bodies)', () => {
  it('gives what structuredClone gives for JSON-like data, sharing nothing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const copy = copyPlain(v);
        expect(copy).toStrictEqual(structuredClone(v));
        if (typeof v === 'object' && v !== null) expect(copy).not.toBe(v);
      }),
      { numRuns: 500 },
    );
    const m = { spec: { config: { audit: { enabled: true }, list: [{ a: 1 }] } } };
    const c = copyPlain(m);
    c.spec.config.audit.enabled = false;
    c.spec.config.list[0]!.a = 2;
    expect(m.spec.config).toEqual({ audit: { enabled: true }, list: [{ a: 1 }] });
  });

  it('copies a __proto__ key as an own property, never as the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = copyPlain(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('keeps undefined values and hands other objects to structuredClone', () => {
    const d = new Date(0);
    const copy = copyPlain({ u: undefined, d });
    expect('u' in copy).toBe(true);
    expect(copy.d).toEqual(d);
    expect(copy.d).not.toBe(d);
  });
});
