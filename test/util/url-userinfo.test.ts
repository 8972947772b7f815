/**
 * URL userinfo is found and dropped as the regular expression the redactor used finds and replaces it, in time
 * linear in the text (the expression took quadratic time on runs such as `a.a.a.a`, which a manifest value can hold).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dropUrlUserinfo, hasUrlUserinfo } from '../../src/util/url-userinfo.js';

/**
 * As the redactor used it, up to the last `@` of a run (a password holding an unencoded `@`: `https://u:p@ss@host`);
 * and a password holding an unencoded `/` (`https://u:pa/ss@host`: something after the last `:` before the first `/`
 * that is not a digit, so not a port), up to the last `@` of the stretch.
 */
const URL_USERINFO = new RegExp(
  String.raw`\b([a-z][a-z0-9+.-]*:\/\/)(?:[^/@\s"'<>]+@(?:[^/@\s"'<>]*@)*|(?!\[)[^/@\s"'<>]*:[^/@\s"'<>:]*[^/@\s"'<>:0-9][^/@\s"'<>:]*\/[^@\s"'<>]*@(?:[^@\s"'<>]*@)*)`,
  'gi',
);

describe('URL userinfo', () => {
  it('drops what the regular expression replaced, and finds what it found (random texts)', () => {
    const piece = fc.constantFrom('a', 'Z', '1', '_', '.', '+', '-', ':', '/', '@', ' ', '\u00a0', '"', '<', 'x', '://', 'https://', 'u:p@', 'u:p/', ':8/', '[', 'é', '\u2028');
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

  it("a password holding an unencoded `/`, as git prints it (`unable to access '…'`), plain and HTML-escaped", () => {
    expect(dropUrlUserinfo("fatal: unable to access 'https://user:pa/ss@127.0.0.1:9/x.git/': URL using bad/illegal format")).toBe(
      "fatal: unable to access 'https://***@127.0.0.1:9/x.git/': URL using bad/illegal format",
    );
    expect(dropUrlUserinfo('see https://user:p/a/s&amp;s@host/r')).toBe('see https://***@host/r');
    expect(dropUrlUserinfo('clone https://user:pa/s@s@host/r failed')).toBe('clone https://***@host/r failed');
    // a port, an IPv6 literal, a path holding `@`: not userinfo
    for (const text of ['https://host:8080/org/repo@v1', 'http://[::1]:8080/a@b', 'https://host/a:b/c@d', 'https://host:/p@x']) {
      expect(dropUrlUserinfo(text), text).toBe(text);
    }
  });

  it('a megabyte of `https://u:p/` without an `@` is read in one pass', () => {
    const text = 'https://u:p/'.repeat(80_000);
    expect(dropUrlUserinfo(`${text} x`)).toBe(`${text} x`);
    expect(dropUrlUserinfo(`${text}@host`)).toBe('https://***@host');
  });

  it('a megabyte of `a.a.a.` beside a URL is read in one pass (the expression took minutes)', () => {
    const text = `see https://host/ ${'a.'.repeat(500_000)} and https://u:p@host/`;
    expect(hasUrlUserinfo(text)).toBe(true);
    expect(dropUrlUserinfo(text).endsWith('https://***@host/')).toBe(true);
  });
});
