/** The in-sync check of the diff (sameObjects): never says "same" where diffObjects would report anything. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createdFields, diffObjects, sameObjects, type DiffContext } from '../../src/plan/diff.js';
import { isSensitiveKey } from '../../src/kinds/registry.js';
import { MASK } from '../../src/service/kinds.js';

/** A context as the planner's: sensitive by key name; a secret is the same when the recorded value matches. */
function context(recorded: Record<string, unknown>): DiffContext & { notComparable: string[] } {
  return {
    isSensitive: (_path, key) => isSensitiveKey(key),
    compareSecret: (path, _live, desired) => (!(path in recorded) ? 'unknown' : recorded[path] === desired ? 'same' : 'changed'),
    forcesReplace: (path) => path === 'config.host',
    notComparable: [],
  };
}

const KEYS = ['host', 'password', 'token', 'audit', 'enabled', 'list', '10', 'z'];
const leaf = fc.oneof(fc.constantFrom('a', 'b', '', MASK, 1, 2, '2', true, false, null), fc.constant(undefined), fc.array(fc.constantFrom('x', 'y', 1), { maxLength: 3 }));
const { tree } = fc.letrec((tie) => ({
  tree: fc.dictionary(fc.constantFrom(...KEYS), fc.oneof({ depthSize: 'small' }, leaf, tie('tree')), { maxKeys: 5 }),
}));

describe('sameObjects', () => {
  it('is true only when diffObjects reports no change and no path out of reach (random configs, near copies)', () => {
    fc.assert(
      fc.property(tree, tree, fc.boolean(), fc.dictionary(fc.constantFrom('config.password', 'config.token', 'config.audit.password'), leaf), (a, b, copy, recorded) => {
        const desired = a as Record<string, unknown>;
        const live = copy ? (structuredClone(a) as Record<string, unknown>) : (b as Record<string, unknown>);
        const ctx = context(recorded);
        const changes = diffObjects('config', desired, live, ctx);
        const same = sameObjects('config', desired, live, context(recorded), isSensitiveKey);
        if (same) {
          expect(changes).toEqual([]);
          expect(ctx.notComparable).toEqual([]);
        }
        // a copy without secrets is always told the same (the cheap path is taken)
        if (copy && !JSON.stringify(a).includes('"password"') && !JSON.stringify(a).includes('"token"') && !JSON.stringify(a).includes(MASK)) expect(same).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('says the same of an in-sync config whose secret the service masks (key order, undefined values ignored)', () => {
    const desired = { host: 'h', password: 'pw', audit: { enabled: true, months: 6 }, list: ['a', 'b'], gone: undefined };
    const live = { list: ['a', 'b'], audit: { months: 6, enabled: true }, password: MASK, host: 'h' };
    expect(sameObjects('config', desired, live, context({ 'config.password': 'pw' }), isSensitiveKey)).toBe(true);
    expect(sameObjects('config', desired, live, context({ 'config.password': 'old' }), isSensitiveKey)).toBe(false);
    expect(sameObjects('config', desired, { ...live, extra: 1 }, context({ 'config.password': 'pw' }), isSensitiveKey)).toBe(false);
    expect(sameObjects('config', desired, { ...live, list: ['b', 'a'] }, context({ 'config.password': 'pw' }), isSensitiveKey)).toBe(false);
    expect(sameObjects('config', desired, { ...live, audit: { enabled: true } }, context({ 'config.password': 'pw' }), isSensitiveKey)).toBe(false);
  });
});

describe('createdFields', () => {
  const withObjects = fc.letrec((tie) => ({
    tree: fc.dictionary(
      fc.constantFrom(...KEYS),
      fc.oneof({ depthSize: 'small' }, leaf, fc.array(fc.dictionary(fc.constantFrom('password', 'x'), fc.constantFrom('a', 1, MASK)), { maxLength: 2 }), tie('tree')),
      { maxKeys: 5 },
    ),
  })).tree;

  it('lists what diffObjects lists against an empty live side: same paths, order, values, secrets (random configs)', () => {
    fc.assert(
      fc.property(withObjects, fc.dictionary(fc.constantFrom('config.password', 'config.token', 'config.audit.password'), leaf), (a, recorded) => {
        const value = a as Record<string, unknown>;
        const before = structuredClone(value);
        const expectedCtx = context(recorded);
        const expected = diffObjects('config', structuredClone(value), {}, expectedCtx);
        const ctx = context(recorded);
        expect(createdFields('config', value, ctx)).toEqual(expected);
        expect(ctx.notComparable).toEqual(expectedCtx.notComparable);
        expect(value).toEqual(before); // read, never changed
      }),
      { numRuns: 2000 },
    );
  });

  it('appends to the list it is given, and lists a masked value or an array holding a secret as sensitive, without its value', () => {
    const ctx = context({});
    const out = createdFields('config', { b: [{ password: 'x' }], a: MASK, c: { d: 1 } }, { ...ctx, compareSecret: () => 'changed' }, [{ path: 'type', after: 't', sensitive: false, forcesReplace: false }]);
    expect(out).toEqual([
      { path: 'type', after: 't', sensitive: false, forcesReplace: false },
      { path: 'config.a', sensitive: true, forcesReplace: false },
      { path: 'config.b', sensitive: true, forcesReplace: false },
      { path: 'config.c.d', after: 1, sensitive: false, forcesReplace: false },
    ]);
  });
});
