/** Pure parts of the sandbox: router precedence, config merge, masking, scripts, failure rules. */
import { describe, expect, it } from 'vitest';
import { Router } from '../../src/sandbox/router.js';
import { mergeConfig } from '../../src/sandbox/control.js';
import { maskConfig, maskedValuePaths } from '../../src/sandbox/integrations/view.js';
import { Failures, parseFailNext, parseFailTest } from '../../src/sandbox/integrations/failures.js';
import { generateScript } from '../../src/sandbox/integrations/scripts.js';
import { buildTokens, authenticate } from '../../src/sandbox/auth.js';
import { HttpError, type Route } from '../../src/sandbox/http.js';

const route = (method: string, pattern: string): Route => ({ method, pattern, auth: 'none', handler: () => ({ status: 200 }) });

describe('Router', () => {
  const r = new Router([
    route('POST', '/integrations/:id/scripts/edit'),
    route('GET', '/integrations/:id'),
    route('POST', '/integrations/scripts/create'),
    route('GET', '/integrations'),
  ]);

  it('literal segments win over parameters', () => {
    const m = r.match('POST', '/integrations/scripts/create');
    expect(m.kind === 'found' && m.route.pattern).toBe('/integrations/scripts/create');
  });

  it('extracts params and decodes them', () => {
    const m = r.match('GET', '/integrations/4%32');
    expect(m.kind === 'found' && m.params).toEqual({ id: '42' });
  });

  it('method mismatch lists the allowed methods; unknown paths are none', () => {
    expect(r.match('DELETE', '/integrations')).toEqual({ kind: 'method', allowed: ['GET'] });
    expect(r.match('GET', '/integrations/1/unknown')).toEqual({ kind: 'none' });
  });
});

describe('config helpers', () => {
  it('mergeConfig deep-merges, null deletes, arrays replace', () => {
    expect(mergeConfig({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { b: { c: 9, d: null }, e: [2], f: 'x' })).toEqual({
      a: 1,
      b: { c: 9 },
      e: [2],
      f: 'x',
    });
  });

  it('maskConfig masks credential keys at any depth, in arrays too, without touching the input', () => {
    const input = { password: 'p', nested: { token: 't', list: [{ secretKey: 's', keep: 1 }] }, host: 'h' };
    expect(maskConfig(input)).toEqual({ password: '********', nested: { token: '********', list: [{ secretKey: '********', keep: 1 }] }, host: 'h' });
    expect(input.password).toBe('p');
    expect(maskedValuePaths({ okta: { password: '********' }, password: 'real' })).toEqual(['config.okta.password']);
  });
});

describe('failure rules', () => {
  it('fail-tests with count expire; selectors restrict', () => {
    const f = new Failures();
    f.tests.push(parseFailTest({ name: 'T', id: 3, count: 1 }));
    expect(f.forcedStatus('T', { operation: 'edit', id: 4, host: 'h' })).toBeUndefined();
    expect(f.forcedStatus('T', { operation: 'edit', id: 3, host: 'h' })).toBe('failed');
    expect(f.forcedStatus('T', { operation: 'edit', id: 3, host: 'h' })).toBeUndefined();
  });

  it('fail-next defaults to one operation; late-fail host always fails creates', () => {
    const f = new Failures();
    f.next.push(parseFailNext({ operation: 'delete' }));
    expect(f.takeLateFailure({ operation: 'edit', host: 'h' })).toBe(false);
    expect(f.takeLateFailure({ operation: 'delete', host: 'h' })).toBe(true);
    expect(f.takeLateFailure({ operation: 'delete', host: 'h' })).toBe(false);
    expect(f.takeLateFailure({ operation: 'create', host: 'x.late-fail.example' })).toBe(true);
  });

  it('rejects bad rules', () => {
    expect(() => parseFailTest({})).toThrow(/name/);
    expect(() => parseFailTest({ name: 'x', status: 'odd' })).toThrow(/status/);
    expect(() => parseFailNext({ operation: 'explode' })).toThrow(/operation/);
  });
});

describe('scripts', () => {
  it('never contain credentials and reflect the config', () => {
    const s = generateScript('create', 'columnar_warehouse', { host: 'h', database: 'db1', username: 'u1', password: 'pw-secret' });
    expect(s).toContain('CREATE DATABASE "db1" OWNER "u1"');
    expect(s).not.toContain('pw-secret');
    expect(generateScript('delete', 'cloud_warehouse', { database: 'D', username: 'u' }, '7')).toContain('DROP DATABASE IF EXISTS "D"');
  });
});

describe('auth', () => {
  it('integration scheme: raw token, admin only; webhook scheme: Bearer', () => {
    const t = buildTokens({ adminToken: 'a', userToken: 'u' });
    expect(authenticate('integration', 'a', t.callers)?.role).toBe('admin');
    const status = (fn: () => unknown): number | undefined => {
      try {
        fn();
        return undefined;
      } catch (err) {
        return (err as HttpError).status;
      }
    };
    expect(status(() => authenticate('integration', 'u', t.callers))).toBe(403);
    expect(status(() => authenticate('integration', undefined, t.callers))).toBe(401);
    expect(status(() => authenticate('webhook', 'u', t.callers))).toBe(401);
    expect(authenticate('webhook', 'Bearer u', t.callers)?.userId).toBe(2);
    expect(authenticate('none', undefined, t.callers)).toBeUndefined();
  });
});
