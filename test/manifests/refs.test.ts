/** replaceRefs: placeholders for the schema check, copying only the way to each reference. */
import { describe, expect, it } from 'vitest';
import { REF_PLACEHOLDER, replaceRefs, type RefIssue } from '../../src/manifests/refs.js';

describe('replaceRefs', () => {
  it('returns the value itself when it holds no reference, and never changes it', () => {
    const config = { host: 'h', audit: { enabled: true }, list: [1, { a: 2 }] };
    const before = structuredClone(config);
    const paths = new Set<string>();
    expect(replaceRefs(config, ['spec', 'config'], [], paths)).toBe(config);
    expect(config).toEqual(before);
    expect(paths.size).toBe(0);
  });

  it('copies only the objects on the way to a reference; the rest is shared and the original kept', () => {
    const config = { host: 'h', audit: { enabled: true }, nested: { password: { fromEnv: 'GOVOPS_SECRET_X' }, keep: { a: 1 } }, list: [{ token: { fromFile: 'x.txt' } }, { b: 2 }] };
    const before = structuredClone(config);
    const issues: RefIssue[] = [];
    const paths = new Set<string>();
    const out = replaceRefs(config, ['spec', 'config'], issues, paths) as typeof config & { nested: { password: unknown }; list: Array<Record<string, unknown>> };
    expect(out).toEqual({ ...before, nested: { password: REF_PLACEHOLDER, keep: { a: 1 } }, list: [{ token: REF_PLACEHOLDER }, { b: 2 }] });
    expect(config).toEqual(before);
    expect(out).not.toBe(config);
    expect(out.audit).toBe(config.audit);
    expect(out.nested).not.toBe(config.nested);
    expect(out.nested.keep).toBe(config.nested.keep);
    expect(out.list).not.toBe(config.list);
    expect(out.list[1]).toBe(config.list[1]);
    expect([...paths]).toEqual(['/spec/config/nested/password', '/spec/config/list/0/token']);
    expect(issues).toEqual([]);
  });
});
