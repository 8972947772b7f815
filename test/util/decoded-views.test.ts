/**
 * The redactor reads a text through its decoded views (src/util/decoded-views.ts): a secret nested deeper than the
 * forms reach, or written by an escaper the forms do not list, is replaced in the text, whole escapes, and nothing
 * around it. Each encoding below printed the value whole before (2026-11-28, fourth redaction audit).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodedViews, MAX_UNWRAPPED, MAX_VIEWS, viewMap } from '../../src/util/decoded-views.js';
import { Redactor, REDACTED } from '../../src/util/redact.js';

const VALUE = `Tr0ub4dor&3-'é€ü"+x /y\\z`;
const json = (s: string): string => JSON.stringify(s).slice(1, -1);
const hex4 = (c: string): string => c.charCodeAt(0).toString(16).padStart(4, '0');

/** Each encoding, as its writer writes it. */
const ECHOES: Record<string, (v: string) => string> = {
  'JSON four times over': (v) => json(json(json(json(v)))),
  'JSON six times over': (v) => json(json(json(json(json(json(v)))))),
  "XML's &apos;": (v) => v.replace(/&/g, '&amp;').replace(/'/g, '&apos;').replace(/"/g, '&quot;'),
  "Go html/template's &#43;": (v) => v.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/"/g, '&#34;').replace(/\+/g, '&#43;'),
  'lower-case hex entities': (v) => v.replace(/&/g, '&amp;').replace(/["'+]|[^ -~]/g, (c) => `&#x${c.codePointAt(0)!.toString(16)};`),
  'a decimal entity for every character': (v) => [...v].map((c) => `&#${c.codePointAt(0)};`).join(''),
  'JSON \\u escapes of every character (lower-case hex)': (v) => [...v].map((c) => `\\u${hex4(c)}`).join(''),
  'JSON \\u escapes of every character (upper-case hex)': (v) => [...v].map((c) => `\\u${hex4(c).toUpperCase()}`).join(''),
  '\\x escapes of every byte-sized character': (v) => [...v].map((c) => (c.charCodeAt(0) < 256 ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c)).join(''),
  'a query string, lower-case hex and + for a space': (v) => new URLSearchParams({ p: v }).toString().slice(2).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  '%XX of every byte': (v) => [...Buffer.from(v)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  // a Python service's error holding the body it read (`request.body`, httpx's `Response content b'…'`): UTF-8 bytes as \xNN
  "Python's repr of bytes": (v) => [...Buffer.from(v)].map((b) => (b === 0x5c ? '\\\\' : b === 0x27 ? "\\'" : b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join(''),
  // Java's URLEncoder.encode(v, ISO_8859_1), PHP's urlencode of a Latin-1 string: one %XX a character
  'percent-encoded Latin-1': (v) => [...v].map((c) => (c.charCodeAt(0) < 0x80 ? encodeURIComponent(c) : c.charCodeAt(0) < 0x100 ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c)).join(''),
  // git's quoted paths, C's and bash's $'…' escapes, `printf %q`: each byte of UTF-8 as three octal digits
  'octal escapes of every byte': (v) => [...Buffer.from(v)].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join(''),
  'octal escapes of the bytes outside printable ASCII, shortest': (v) => [...Buffer.from(v)].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\${b.toString(8)}`)).join(''),
  'JSON in an XML page in JSON': (v) => json(json(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')),
  'JSON three times over, then percent-encoded': (v) => encodeURIComponent(json(json(json(v)))),
};

describe('decoded views', () => {
  for (const [what, encode] of Object.entries(ECHOES)) {
    it(`replaces the value written as ${what}, and nothing around it`, () => {
      const r = new Redactor();
      r.add(VALUE);
      expect(r.redactText(`before ${encode(VALUE)} after`)).toBe(`before ${REDACTED} after`);
      expect(JSON.parse(r.redactJsonText(JSON.stringify({ msg: `before ${encode(VALUE)} after` })))).toEqual({ msg: `before ${REDACTED} after` });
    });
  }

  it('any chain of up to six encodings (each one step) of a value is replaced whole, the text around it kept (random chains)', () => {
    const single = Object.entries(ECHOES).filter(([what]) => !/times over|JSON in/.test(what)).map(([, e]) => e);
    const encodings = fc.constantFrom(...single, json, encodeURIComponent, (v: string) => encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
    const value = fc.string({ unit: fc.constantFrom('a', 'Z', '9', '"', "'", '\\', '&', '+', ' ', '/', '%', 'é', '€', '<', '\n'), minLength: 6, maxLength: 12 });
    fc.assert(
      fc.property(value, fc.array(encodings, { maxLength: 6 }), (v, chain) => {
        const r = new Redactor();
        r.add(`QQ${v}QQ`);
        const written = chain.reduce((s, e) => e(s), `QQ${v}QQ`);
        expect(r.redactText(`<< ${written} >>`)).toBe(`<< ${REDACTED} >>`);
      }),
      { numRuns: 500 },
    );
  });

  it('a text without `\\ % & +` has no view; a text with all of them at most MAX_VIEWS', () => {
    expect([...decodedViews('plain text with "quotes" and <tags>')]).toEqual([]);
    const hostile = '\\\\\\\\%2525%2525&amp;amp;amp;+%2B&#x26;'.repeat(50);
    const views = [...decodedViews(hostile)];
    expect(views.length).toBe(MAX_VIEWS);
    for (const v of views) expect(viewMap(v).length).toBe(v.text.length + 1);
  });

  it("a `+` with a space or a line's edge on each side is no form-encoded space: a plan's markers make no view", () => {
    // a plan: `+ Integration/...` and `+ field = value` on every line; the view was a copy of the whole text
    const plan = 'Plan: 1 to create.\n\n  + Integration/store-0 (object_store)\n        + type = "object_store"\n+ x\n';
    expect([...decodedViews(plan)]).toEqual([]);
    // a form-encoded value's `+` always touches another of its characters: found, at an edge of the value too
    for (const value of ['pass word here', ' lead-space', 'trail-space ', 'a  b']) {
      const r = new Redactor();
      r.add(value);
      const written = new URLSearchParams({ p: value }).toString().slice(2);
      expect(r.redactText(`+ pw = ${written} +\n+ ${written}`), value).toBe(`+ pw = ${REDACTED} +\n+ ${REDACTED}`);
    }
  });

  it('indented lines are joined only as a base64 block: each line the same indentation and base64 alone', () => {
    const block = '  data: |\n    QUJDREVGR0hJSktMTU5PUFFS\n    U1RVVldYWVphYmNkZWZnaGlq\n    a2xt\nend';
    expect([...decodedViews(block)].map((v) => v.text)).toContain('  data: |\n    QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xt\nend');
    // a plan's or a log's indented lines after a line ending in a long name: not joined (a joined view costs a scan)
    const plan = '  + Webhook/hook-1\n      url: https://example.com/hooks/abcdefghijklmnop1\n      events: [created]\n';
    for (const v of decodedViews(plan)) expect(v.text).toContain('abcdefghijklmnop1\n      events');
    // nor after a base64 line of another indentation
    expect([...decodedViews('    QUJDREVGR0hJSktMTU5PUFFS\n  U1RVVldYWVphYmNkZWZnaGlq\n')]).toEqual([]);
  });

  it('a value nested eleven times over is found in a text whose lines end in base64 characters (joined views do not use up the views)', () => {
    let nested = VALUE;
    for (let i = 0; i < 11; i++) nested = json(nested);
    // a line ending in 16 base64 characters or more (32 and 33 long) before another: an unwrap view of each view
    for (const line of ['see configuration/integrations/store', 'see configuration/integrations/stores']) {
      const r = new Redactor();
      r.add(VALUE);
      expect(r.redactText(`${line}\nretrying-now\nerror: ${nested} done`), line).toBe(`${line}\nretrying-now\nerror: ${REDACTED} done`);
    }
    // still bounded: MAX_VIEWS of the other families, MAX_UNWRAPPED joined
    const hostile = `${'\\\\%2525&amp;amp;+%2B&#x26;QUJDQUJDQUJDQUJDQUJD\nQUJD'.repeat(50)}`;
    const views = [...decodedViews(hostile)];
    expect(views.filter((v) => v.decoder?.name === 'unwrap').length).toBe(MAX_UNWRAPPED);
    expect(views.length).toBe(MAX_VIEWS + MAX_UNWRAPPED);
  });

  it("each view's characters map to the escapes they came from", () => {
    const [view, second] = decodedViews('a\\u0041&amp;%41b');
    expect(view!.text).toBe('aA&amp;%41b');
    expect([...viewMap(view!)]).toEqual([0, 1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(second!.text).toBe('a\\u0041&%41b');
    expect([...viewMap(second!)]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16]);
  });
});
