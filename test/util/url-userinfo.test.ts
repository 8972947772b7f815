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
 * that is not a digit, so not a port), up to the last `@` of the stretch; the same with digits no port can be (above
 * 65535), and such digits without any `@` (`https://u:123456/`: no host), up to their end.
 */
/** Digits no port can be: above 65535 (leading zeros left out). */
const NOT_A_PORT = String.raw`0*(?:[1-9][0-9]{5,}|6553[6-9]|655[4-9][0-9]|65[6-9][0-9]{2}|6[6-9][0-9]{3}|[7-9][0-9]{4})`;
const URL_USERINFO = new RegExp(
  String.raw`\b([a-z][a-z0-9+.-]*:\/\/)(?:[^/@\s"'<>]+@(?:[^/@\s"'<>]*@)*|(?!\[)[^/@\s"'<>]*:(?:[^/@\s"'<>:]*[^/@\s"'<>:0-9][^/@\s"'<>:]*|${NOT_A_PORT})\/[^@\s"'<>]*@(?:[^@\s"'<>]*@)*|(?!\[)[^/@\s"'<>]*:${NOT_A_PORT}(?![^/@\s"'<>]))`,
  'gi',
);

describe('URL userinfo', () => {
  it('drops what the regular expression replaced, and finds what it found (random texts)', () => {
    const piece = fc.constantFrom('a', 'Z', '1', '_', '.', '+', '-', ':', '/', '@', ' ', '\u00a0', '"', '<', 'x', '://', 'https://', 'u:p@', 'u:p/', ':8/', '[', 'é', '\u2028', ':123456', ':65536', ':65535', '0', '9');
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

  it('a password of digits only that cannot be a port (more than 65535): before a `/`, and in a URL without a host', () => {
    expect(dropUrlUserinfo("fatal: unable to access 'https://user:123456/pa@host/r.git/'")).toBe("fatal: unable to access 'https://***@host/r.git/'");
    expect(dropUrlUserinfo('clone https://user:31415926/ failed')).toBe('clone https://***@/ failed');
    expect(dropUrlUserinfo("fatal: unable to access 'https://user:123456/path/': URL using bad/illegal format")).toBe(
      "fatal: unable to access 'https://***@/path/': URL using bad/illegal format",
    );
    expect(dropUrlUserinfo('postgres://govops:65536 and https://u:0065536/x@h')).toBe('postgres://***@ and https://***@h');
    expect(dropUrlUserinfo('see https://user:123456@host/')).toBe('see https://***@host/');
    // a port: as it is (`@` in a path is a path's, as npm's scoped packages have it)
    for (const text of ['https://host:65535/org/repo@v1', 'http://registry:4873/@scope/pkg', 'https://host:00443/x', 'https://host:8080']) {
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
