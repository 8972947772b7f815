/**
 * A secret in base64 (2026-11-28, third redaction audit): an `Authorization: Basic base64(user:password)` header echoed in
 * an error body (axios' `error.toJSON()` holds `config.headers`; a proxy's or an echo server's answer), a value encoded
 * alone, a value inside a longer encoded text. Nothing of it was redacted before.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED } from '../../src/util/redact.js';
import { base64Forms } from '../../src/util/secret-forms.js';

/** base64 of UTF-8 text, standard alphabet with padding. */
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const b64url = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

describe('base64', () => {
  const PASSWORD = 'xK9#mP2$vL8&nQ4!zü';

  it('an Authorization: Basic header echoed in an error body, whatever the length of the user name', () => {
    const r = new Redactor();
    r.add(PASSWORD);
    for (const user of ['a', 'ab', 'abc', 'govops_system', 'svc']) {
      const header = b64(`${user}:${PASSWORD}`);
      // axios' error.toJSON(): config.headers.Authorization
      const body = JSON.stringify({ message: 'Request failed with status code 401', config: { headers: { Authorization: `Basic ${header}` } } });
      const out = r.redactJsonText(body);
      expect(out, user).not.toContain(header.slice(-12));
      expect(out, user).toContain(REDACTED);
      // what is left is the user name's part, and at most one character mixing the user name's bits with the password's
      const left = /Basic ([^"[]*)\[redacted\]/.exec(out)?.[1] ?? '';
      expect(left.length, user).toBeLessThanOrEqual(Math.ceil(((user.length + 1) * 8) / 6));
      expect(r.redactText(`Authorization: Basic ${header}`)).toMatch(/^Authorization: Basic [A-Za-z0-9+/]*\[redacted\]=*$/);
    }
  });

  it('a value encoded alone: standard and URL-safe alphabets, with and without padding', () => {
    const r = new Redactor();
    r.add(PASSWORD);
    for (const written of [b64(PASSWORD), b64(PASSWORD).replace(/=+$/, ''), b64url(PASSWORD)]) {
      expect(r.redactText(`stored credential ${written} is invalid`)).toMatch(/^stored credential \[redacted\]=* is invalid$/);
    }
  });

  it('a value inside a longer encoded text, at each of the three alignments (a JSON config encoded in base64)', () => {
    const r = new Redactor();
    r.add(PASSWORD);
    for (const before of ['{"p":"', '{"pw":"', '{"pwd":"']) {
      for (const encode of [b64, b64url]) {
        const blob = encode(`${before}${PASSWORD}","host":"db.example.com"}`);
        const out = r.redactText(`bad config ${blob}`);
        expect(out).toContain(REDACTED);
        // the characters left around [redacted] hold at most 4 bits of the value at each end
        const core = encode(`${before}${PASSWORD}`).slice(0, -2);
        expect(out).not.toContain(core.slice(Math.ceil((before.length * 8) / 6) + 1));
      }
    }
  });

  it('forms are bounded: at most 9 per value and per encoding of it (63 in all), none shorter than 8 characters, none for a short value', () => {
    expect(base64Forms('abcdefgh').length).toBeLessThanOrEqual(9);
    for (const v of [PASSWORD, 'abcdefgh', 'pa/ss+w?rd>>>~~~', 'é'.repeat(20)]) {
      const forms = base64Forms(v);
      expect(new Set(forms).size).toBe(forms.length);
      expect(forms.length).toBeLessThanOrEqual(63);
      for (const f of forms) expect(f.length).toBeGreaterThanOrEqual(8);
    }
    expect(base64Forms('abcd')).toEqual([]);
  });

  it('ordinary text is left alone', () => {
    const r = new Redactor();
    r.add(PASSWORD, 'hunter22', 'correct horse battery staple');
    const text = 'applied integration columnar-main (id 42): syncState synced, revision 3f2a9c0d1e4b, token aGVsbG8gd29ybGQ=';
    expect(r.redactText(text)).toBe(text);
  });
});
