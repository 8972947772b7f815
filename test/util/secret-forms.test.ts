/**
 * The forms of a secret the redactor looks for: each as another serializer writes the value (written out here by
 * hand, as Go, .NET, Python, PHP and Java write them), nested in govops' own JSON, and no more forms than needed.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED } from '../../src/util/redact.js';
import { secretForms } from '../../src/util/secret-forms.js';

// Every character a re-encoding rewrites: HTML-sensitive ones, RFC 3986 sub-delimiters, a space, non-ASCII.
const VALUE = `Tr0ub4dor&3-h<b>'!(x)*~ü+"q/`;

/** The same value as each serializer writes it (in a JSON string, or percent-encoded). */
const WRITTEN: Record<string, string> = {
  // json.Marshal: HTML-safe, lower-case hex, non-ASCII as it is
  go: String.raw`Tr0ub4dor\u00263-h\u003cb\u003e'!(x)*~ü+\"q/`,
  // System.Text.Json, JavaScriptEncoder.Default: HTML-sensitive and non-ASCII, upper-case hex
  dotnet: String.raw`Tr0ub4dor\u00263-h\u003Cb\u003E\u0027!(x)*~\u00FC\u002B\u0022q/`,
  // JavaScriptEncoder.Create(UnicodeRanges.All): HTML-sensitive only
  dotnetAllRanges: String.raw`Tr0ub4dor\u00263-h\u003Cb\u003E\u0027!(x)*~ü\u002B\u0022q/`,
  // an ASCII-only encoder writing upper-case hex
  asciiUpper: String.raw`Tr0ub4dor&3-h<b>'!(x)*~\u00FC+\"q/`,
  // PHP's json_encode: ASCII-only and \/
  php: String.raw`Tr0ub4dor&3-h<b>'!(x)*~\u00fc+\"q\/`,
  // RFC 3986 unreserved only (Python's quote(safe=''), .NET's Uri.EscapeDataString, PHP's rawurlencode)
  rfc3986: 'Tr0ub4dor%263-h%3Cb%3E%27%21%28x%29%2A~%C3%BC%2B%22q%2F',
  rfc3986Lower: 'Tr0ub4dor%263-h%3cb%3e%27%21%28x%29%2a~%c3%bc%2b%22q%2f',
  // Go's url.QueryEscape, Python's quote_plus: the same with + for a space
  queryEscape: 'a%21+b~%2A',
  // URLSearchParams, Java's URLEncoder: `*` kept, `~` encoded, + for a space
  urlSearchParams: new URLSearchParams({ p: VALUE }).toString().slice(2),
  // Python's quote() with its default safe='/' (a path, a URL built from the value): `/` kept
  pythonQuote: 'Tr0ub4dor%263-h%3Cb%3E%27%21%28x%29%2A~%C3%BC%2B%22q/',
  // Python's repr() (an exception's text, str() of a dict, pydantic's input_value=): the quote it chose escaped, `"` not
  pythonRepr: String.raw`Tr0ub4dor&3-h<b>\'!(x)*~ü+"q/`,
};

/** Values whose Python repr() differs from every JSON escape (repr('…') as Python 3.11 prints it, without the quotes). */
const PYTHON_REPR: ReadonlyArray<[value: string, repr: string]> = [
  ['back\\slash"quoted', String.raw`back\\slash"quoted`],
  ['esc\x1b-del\x7f-c1\x85-zw\u200b-ls\u2028-ü😀 x', String.raw`esc\x1b-del\x7f-c1\x85-zw\u200b-ls\u2028-ü😀 x`],
  ['bell\x07-ff\x0c-both\'"', String.raw`bell\x07-ff\x0c-both\'"`],
  ["only'single", "only'single"],
];

describe('secretForms', () => {
  it('holds the value as Go, .NET, PHP, Python and Java write it', () => {
    const forms = new Set(secretForms(VALUE));
    for (const [who, written] of Object.entries(WRITTEN)) {
      if (who === 'queryEscape') continue;
      expect(forms.has(written), who).toBe(true);
    }
    expect(new Set(secretForms('a! b~*')).has(WRITTEN.queryEscape!)).toBe(true);
    expect(WRITTEN.urlSearchParams).toContain('%7E'); // what URLSearchParams does to `~`, unlike encodeURIComponent
  });

  it("holds the value as Python's repr() writes it, alone and nested in JSON", () => {
    for (const [value, repr] of PYTHON_REPR) {
      const forms = new Set(secretForms(value));
      expect(forms.has(repr), repr).toBe(true);
      expect(forms.has(JSON.stringify(repr).slice(1, -1)), repr).toBe(true);
      const r = new Redactor();
      r.add(value);
      expect(r.redactJsonText(JSON.stringify({ message: `1 validation error: input_value='${repr}', input_type=str` }))).toBe(
        JSON.stringify({ message: `1 validation error: input_value='${REDACTED}', input_type=str` }),
      );
    }
  });

  it('holds each re-encoding nested in JSON, as govops outputs and log lines write it (once and twice)', () => {
    const forms = new Set(secretForms(VALUE));
    const json = (s: string): string => JSON.stringify(s).slice(1, -1);
    for (const written of [WRITTEN.go!, WRITTEN.dotnet!]) {
      expect(forms.has(json(written))).toBe(true);
      expect(forms.has(json(json(written)))).toBe(true);
    }
  });

  it('adds a form only when an encoding changes something: bounded, one form for a plain value', () => {
    expect(secretForms('abcd1234EFGH')).toEqual(['abcd1234EFGH']);
    expect(secretForms('pw-2024.x_y')).toEqual(['pw-2024.x_y']);
    const forms = secretForms(VALUE);
    expect(new Set(forms).size).toBe(forms.length);
    expect(forms.length).toBeLessThan(400);
  });

  it('a value holding a lone surrogate (a YAML literal `"\\ud800…"`) has its forms, and redaction does not throw', () => {
    const value = '\ud800abcd-x y';
    expect(secretForms(value)).toContain(value);
    expect(secretForms(value)).toContain('%EF%BF%BDabcd-x%20y'); // URL encoders write it as U+FFFD
    const r = new Redactor();
    r.inForceAuthored(value);
    expect(r.redactText(`rejected ${value}`)).toBe(`rejected ${REDACTED}`);
    expect(r.redactJsonText(JSON.stringify({ message: `rejected ${value}` }))).toBe(JSON.stringify({ message: `rejected ${REDACTED}` }));
  });

  it('the redactor replaces every one of them in a text', () => {
    const r = new Redactor();
    r.add(VALUE, 'a! b~*');
    for (const written of Object.values(WRITTEN)) {
      const out = r.redactText(`invalid request {"password":"${written}"}`);
      expect(out).toBe(`invalid request {"password":"${REDACTED}"}`);
    }
  });
});
