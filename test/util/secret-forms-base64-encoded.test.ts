/**
 * base64 of an encoded form of a value, and an encoded base64 of it (2026-11-28, fourth redaction audit): a Basic header a
 * service built from a URL's userinfo as the URL parser holds it (`new URL(u).password` is percent-encoded), a JSON
 * document holding the value encoded in base64 (a Kubernetes Secret's data, a JWT's payload), a base64 value carried in
 * a query string. Each printed the value (in base64) before.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED } from '../../src/util/redact.js';
import { base64Forms } from '../../src/util/secret-forms.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const b64url = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');
/** What the password of `new URL(…)` holds: the userinfo percent-encode set of the URL standard. */
const userinfo = (v: string): string => new URL(`https://u:${encodeURIComponent(v)}@h/`).password;

/** Special characters each encoding rewrites; its base64 holds `+` and `/` (`?>` and `~~` are 0x3f3e, 0x7e7e). */
const PASSWORD = 'Zq8#tW3$ p@ss/ü"?>~~~';

describe('base64 of an encoded form', () => {
  for (const [what, encoded] of [
    ['percent-encoded (encodeURIComponent)', encodeURIComponent(PASSWORD)],
    ['percent-encoded as a URL holds its password', userinfo(PASSWORD)],
    ['percent-encoded, RFC 3986 strict', encodeURIComponent(PASSWORD).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)],
    ['form-encoded', new URLSearchParams({ p: PASSWORD }).toString().slice(2)],
    ['JSON-escaped', JSON.stringify(PASSWORD).slice(1, -1)],
    ['JSON-escaped, ASCII only', JSON.stringify(PASSWORD).slice(1, -1).replace(/ü/, '\\u00fc')],
  ] as const) {
    it(`an Authorization: Basic header of the password ${what}`, () => {
      expect(encoded).not.toBe(PASSWORD);
      const r = new Redactor();
      r.add(PASSWORD);
      for (const user of ['a', 'ab', 'svc']) {
        const header = b64(`${user}:${encoded}`);
        const out = r.redactText(`Authorization: Basic ${header}`);
        // what is left is the user name's part, and at most one character mixing its bits with the password's
        expect(out, `${what} ${user}`).toMatch(/^Authorization: Basic [A-Za-z0-9+/]*\[redacted\]=*$/);
        expect(out.indexOf('['), `${what} ${user}`).toBeLessThanOrEqual('Authorization: Basic '.length + Math.ceil(((user.length + 1) * 8) / 6));
      }
      for (const before of ['{"p":"', '{"pw":"', '{"pwd":"']) {
        const out = r.redactText(`data ${b64url(`${before}${encoded}"}`)}`);
        expect(out, `${what} ${before}`).toContain(REDACTED);
        expect(out).not.toContain(b64url(`${before}${encoded}`).slice(Math.ceil((before.length * 8) / 6) + 1, -2));
      }
    });
  }

  it('base64 of the value, percent-encoded or JSON-escaped with `\\/` (in a query string, in PHP JSON)', () => {
    const r = new Redactor();
    r.add(PASSWORD);
    expect(b64(PASSWORD)).toMatch(/[+/]/);
    for (const written of [encodeURIComponent(b64(PASSWORD)), encodeURIComponent(b64(PASSWORD)).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), b64(PASSWORD).replace(/\//g, '\\/')]) {
      expect(r.redactText(`?token=${written}&x=1`), written).toMatch(/^\?token=\[redacted\][%3Dd=]*&x=1$/);
    }
  });

  it('still bounded: at most 9 forms for each of at most 7 encodings of a value', () => {
    for (const v of [PASSWORD, 'abcdefgh', 'é'.repeat(20)]) {
      const forms = base64Forms(v);
      expect(new Set(forms).size).toBe(forms.length);
      expect(forms.length).toBeLessThanOrEqual(63);
    }
    expect(base64Forms('abcdefghij').length).toBeLessThanOrEqual(9);
  });
});
