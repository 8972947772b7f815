/**
 * URL userinfo is found and dropped as the regular expression the redactor used finds and replaces it, in time
 * linear in the text (the expression took quadratic time on runs such as `a.a.a.a`, which a manifest value can hold).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dropUrlUserinfo, hasUrlUserinfo } from '../../src/util/url-userinfo.js';

/** As the redactor used it, up to the last `@` of a run (a password holding an unencoded `@`: `https://u:p@ss@host`). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s"'<>]+@(?:[^/@\s"'<>]*@)*/gi;

describe('URL userinfo', () => {
  it('drops what the regular expression replaced, and finds what it found (random texts)', () => {
    const piece = fc.constantFrom('a', 'Z', '1', '_', '.', '+', '-', ':', '/', '@', ' ', '\u00a0', '"', '<', 'x', '://', 'https://', 'u:p@', 'é', '\u2028');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((p) => p.join('')), (text) => {
        expect(dropUrlUserinfo(text)).toBe(text.replace(URL_USERINFO, '$1***@'));
        expect(hasUrlUserinfo(text)).toBe(new RegExp(URL_USERINFO.source, 'i').test(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('the usual cases', () => {
    expect(dropUrlUserinfo("fatal: unable to access 'https://x-access-token:ghp_123@github.com/o/r.git/'")).toBe("fatal: unable to access 'https://***@github.com/o/r.git/'");
    expect(dropUrlUserinfo('postgres://govops:pw@db:5432/x and HTTP://a@b')).toBe('postgres://***@db:5432/x and HTTP://***@b');
    expect(dropUrlUserinfo('clone https://user:p@ss@host/r failed')).toBe('clone https://***@host/r failed');
    expect(dropUrlUserinfo('mailto:a@b, https://host/path@x, x_http://u@h')).toBe('mailto:a@b, https://host/path@x, x_http://u@h');
  });

  it('a megabyte of `a.a.a.` beside a URL is read in one pass (the expression took minutes)', () => {
    const text = `see https://host/ ${'a.'.repeat(500_000)} and https://u:p@host/`;
    expect(hasUrlUserinfo(text)).toBe(true);
    expect(dropUrlUserinfo(text).endsWith('https://***@host/')).toBe(true);
  });
});
