/** sameComparable (the in-sync check over the config shape): never "same" where the full diff reports anything. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configShapes } from '../../src/manifests/shapes.js';
import { deepEqual, diffObjects, type DiffContext } from '../../src/plan/diff.js';
import { comparable, sameComparable, type FieldShape } from '../../src/plan/shape.js';
import { isSensitiveKey } from '../../src/kinds/registry.js';
import { isPlainObject } from '../../src/util/object.js';
import { MASK } from '../../src/service/kinds.js';

const shapes = configShapes();
const types = Object.keys(shapes).filter((t) => shapes[t]?.fields);

function context(recorded: Record<string, unknown>): DiffContext & { notComparable: string[] } {
  return {
    isSensitive: (_path, key) => isSensitiveKey(key),
    compareSecret: (path, _live, desired) => (!(path in recorded) ? 'unknown' : recorded[path] === desired ? 'same' : 'changed'),
    forcesReplace: () => false,
    notComparable: [],
  };
}

/** The leaf the planner hands over (plan/integrations.ts), with this test's context. */
const leafOf = (ctx: DiffContext) => (prefix: string, key: string, d: unknown, l: unknown): boolean => {
  if (d === undefined || isPlainObject(d) || isPlainObject(l)) return false;
  if (isSensitiveKey(key) || l === MASK) return ctx.compareSecret(`${prefix}.${key}`, l, d) === 'same';
  return deepEqual(d, l);
};

const scalar = fc.constantFrom<unknown>(undefined, null, '', 'a', 'A', 'https://H.example.com/x', 'h.example.com', MASK, 443, '443', 0, true, false, 'true', [], ['x', 'y'], ['y', 'x', 'x']);

function configOf(fields: Record<string, FieldShape>, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([k, s]) => [k, s.fields && depth < 2 ? fc.oneof(scalar, configOf(s.fields, depth + 1)) : scalar] as const);
  return fc.record(Object.fromEntries(entries), { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>;
}

describe('sameComparable', () => {
  it('is true only when the diff of the comparable configs is empty (random configs of every kind, near copies)', () => {
    const arb = fc.constantFrom(...types).chain((type) => {
      const c = configOf(shapes[type]!.fields!);
      return fc.tuple(fc.constant(type), c, c, fc.boolean(), fc.dictionary(fc.constantFrom('config.password', 'config.token', 'config.secretKey', 'config.okta.password'), scalar));
    });
    let same = 0;
    fc.assert(
      fc.property(arb, ([type, a, b, copy, recorded]) => {
        const live = copy ? structuredClone(a) : b;
        const ctx = context(recorded);
        const changes = diffObjects('config', comparable(shapes, type, a), comparable(shapes, type, live), ctx);
        if (sameComparable(shapes, type, a, live, 'config', leafOf(context(recorded)))) {
          same++;
          expect(changes).toEqual([]);
          expect(ctx.notComparable).toEqual([]);
        }
      }),
      { numRuns: 3000 },
    );
    expect(same).toBeGreaterThan(100); // the cheap path is taken, not only refused
  });

  it('tells an in-sync config from its echo (defaults, numbers as strings, host case, a masked secret)', () => {
    const desired = { host: 'wh.example.com', warehouse: 'WH', database: 'D', authenticationType: 'userPassword', username: 'svc', password: 'pw', audit: { enabled: true } };
    const live = { host: 'WH.example.com', warehouse: 'WH', database: 'D', authenticationType: 'userPassword', username: 'svc', password: MASK, audit: { enabled: true }, port: '443', extra: 'not compared' };
    const leaf = leafOf(context({ 'config.password': 'pw', 'config.username': 'svc' }));
    expect(sameComparable(shapes, 'cloud_warehouse', desired, live, 'config', leaf)).toBe(true);
    expect(sameComparable(shapes, 'cloud_warehouse', desired, { ...live, port: 444 }, 'config', leaf)).toBe(false);
    expect(sameComparable(shapes, 'cloud_warehouse', desired, { ...live, audit: { enabled: false } }, 'config', leaf)).toBe(false);
    expect(sameComparable(shapes, 'cloud_warehouse', desired, live, 'config', leafOf(context({ 'config.password': 'old', 'config.username': 'svc' })))).toBe(false);
  });
});
