/**
 * The forms of a secret the redactor looks for: each as another serializer writes the value (written out here by
 * hand, as Go, .NET, Python, PHP and Java write them), nested in govops' own JSON, and no more forms than needed.
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED } from '../../src/util/redact.js';
import { forgetWorkedOut, formsByCharacter, formsByChains, formsWorkedOut, MAX_CHANGED_CHARACTERS, secretForms, WORTH_WORKING_OUT } from '../../src/util/secret-forms.js';

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

/**
 * The value in an HTML or XML page (a proxy's or a WAF's error page, a Java or Python framework's error page echoing a
 * submitted value), as each escaper writes it: the characters they rewrite are `& < > " '`.
 */
const HTML: Record<string, string> = {
  // escape-html (Express's error pages), lodash, .NET's WebUtility.HtmlEncode, Spring's HtmlUtils, Ruby's CGI.escapeHTML
  escapeHtml: 'Tr0ub4dor&amp;3-h&lt;b&gt;&#39;!(x)*~ü+&quot;q/',
  // Python's html.escape (Django's escape)
  python: 'Tr0ub4dor&amp;3-h&lt;b&gt;&#x27;!(x)*~ü+&quot;q/',
  // Go's html.EscapeString and xml.EscapeText, MarkupSafe (Jinja2, Flask), the OWASP Java Encoder
  go: 'Tr0ub4dor&amp;3-h&lt;b&gt;&#39;!(x)*~ü+&#34;q/',
  // Apache Commons Text escapeHtml4: `'` as it is
  commons: 'Tr0ub4dor&amp;3-h&lt;b&gt;\'!(x)*~ü+&quot;q/',
  // XML text content (a JAXP Transformer, Python's xml.sax.saxutils.escape): quotes as they are
  xmlText: 'Tr0ub4dor&amp;3-h&lt;b&gt;\'!(x)*~ü+"q/',
};

/** Other echoes of a value in an error message, each with the value and how it is written. */
const ECHOES: ReadonlyArray<[who: string, value: string, written: string]> = [
  // Go's %q (strconv.Quote): `fmt.Errorf("invalid password %q", p)`, `strconv.ParseInt: parsing "…"`
  ['Go %q', 'bell\x07-vt\x0b-esc\x1b-del\x7f-nbsp\u00a0-"q\\', String.raw`bell\a-vt\v-esc\x1b-del\x7f-nbsp\u00a0-\"q\\`],
  // Node's util.inspect (`Received '…'` of ERR_INVALID_ARG_VALUE, console.log of an object): upper-case hex
  ['Node inspect', 'esc\x1b-vt\x0b-c1\x85-all\'"`', String.raw`esc\x1B-vt\x0B-c1\x85-all\'"` + '`'],
  ['Node inspect, backquoted', 'it\'s"a\\b', String.raw`it's"a\\b`],
  // a SQL literal (a generated script, a statement in an error): `'` doubled
  ['SQL literal', "pa'ss'word!", "pa''ss''word!"],
  // Go's url.PathEscape: `$&+:=@` kept, `/;,?` and the rest escaped
  ['Go PathEscape', 'p@ss:w$rd&+=!*(x) /;,?', 'p@ss:w$rd&+=%21%2A%28x%29%20%2F%3B%2C%3F'],
];

describe('secretForms', () => {
  it('holds the value as HTML and XML escapers write it, alone and after JSON escaping (a JSON body echoed in an HTML page)', () => {
    const forms = new Set(secretForms(VALUE));
    for (const [who, written] of Object.entries(HTML)) expect(forms.has(written), who).toBe(true);
    // the JSON body `{"password":"…"}` echoed by a proxy's HTML page: JSON first, then HTML
    expect(forms.has('Tr0ub4dor&amp;3-h&lt;b&gt;&#39;!(x)*~ü+\\&quot;q/')).toBe(true);
    const r = new Redactor();
    r.add(VALUE);
    for (const written of Object.values(HTML)) {
      const page = `<html><body><h1>400 Bad Request</h1><p>rejected value &quot;${written}&quot;</p></body></html>`;
      expect(r.redactText(page)).toBe(`<html><body><h1>400 Bad Request</h1><p>rejected value &quot;${REDACTED}&quot;</p></body></html>`);
      expect(r.redactText(JSON.stringify({ body: page }))).not.toContain(written.slice(0, 12));
    }
  });

  it("holds the value as Go's %q, Node's util.inspect, a SQL literal and Go's PathEscape write it", () => {
    for (const [who, value, written] of ECHOES) {
      expect(written, who).not.toBe(value);
      if (who.startsWith('Node')) expect(inspect(value).slice(1, -1), who).toBe(written);
      const forms = new Set(secretForms(value));
      expect(forms.has(written), who).toBe(true);
      expect(forms.has(JSON.stringify(written).slice(1, -1)), who).toBe(true);
      const r = new Redactor();
      r.add(value);
      expect(r.redactText(`error: invalid value ${written} given`), who).toBe(`error: invalid value ${REDACTED} given`);
    }
  });


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

  it("holds what Node's util.inspect writes for any string (quotes, backquotes, `${`, controls, lone surrogates)", () => {
    const piece = fc.constantFrom('a', "'", '"', '`', '${', '\\', '\n', '\x0b', '\x1b', '\x7f', '\x85', '\u00a0', 'ü', '\ud800', '\udc00', '😀', '\u2028');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 4, maxLength: 12 }).map((p) => p.join('')), (value) => {
        expect(secretForms(value)).toContain(inspect(value).slice(1, -1));
      }),
      { numRuns: 2_000 },
    );
  });

  it('adds a form only when an encoding changes something: bounded, one form for a plain value', () => {
    expect(secretForms('abcd1234EFGH')).toEqual(['abcd1234EFGH']);
    expect(secretForms('pw-2024.x_y')).toEqual(['pw-2024.x_y']);
    const forms = secretForms(VALUE);
    expect(new Set(forms).size).toBe(forms.length);
    // 630 forms: it holds every character some encoding rewrites (`& < > ' " + / ~ ( ) * !`, non-ASCII)
    expect(forms.length).toBeLessThan(700);
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

describe('secretForms, character by character', () => {
  // Every kind of character an encoding treats apart: quotes (Python's and Node's choice of quote: `'`, `"`, a backquote,
  // `${`), escapes, URL and HTML specials, controls, C1, non-ASCII in and beyond Latin-1, a line separator, a character
  // beyond the BMP, lone surrogates of both halves, a combining mark, and characters no encoding changes.
  const special = ['a', 'Z', '0', '-', '.', '"', "'", '`', '$', '{', '${', '\\', '/', '&', '<', '>', '+', ' ', '%', '~', '*', '!', '(', '\x00', '\x07', '\n', '\t', '\x1b', '\x7f', '\x85', '\u00a0', 'ü', 'é', '€', '\u2028', '\u200b', '😀', '\ud800', '\udc00', '\u0308', '=', '@', ':', '#', '?', ',', '""'];
  const same = (value: string): void => {
    const fast = formsByCharacter(value);
    expect(new Set(fast).size, JSON.stringify(value)).toBe(fast.length);
    expect(new Set(fast), JSON.stringify(value)).toEqual(new Set(formsByChains(value)));
  };

  it('makes the very forms of applying every chain of encodings to the value whole (random values of every kind of character)', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...special), { minLength: 1, maxLength: 14 }).map((p) => p.join('')), same), { numRuns: 600 });
    fc.assert(fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }), same), { numRuns: 150 });
  });

  it('a plain value, a value with `"` first, last and inside (the CSV field), and one with more characters that change than it works out one by one', () => {
    for (const value of ['abcd1234EFGH', '"abc"', '""a"b""', "it's \"q\" `${x}`", 'x'.repeat(40) + '&']) same(value);
    // a character beyond the BMP, then its two halves alone (lone surrogates): other characters, other forms
    for (const value of ['ab\u{1f600}cd', 'ab\ud83d-\ude00cd', 'ab\ude00-\ud83dcd']) same(value);
    const many = Array.from({ length: MAX_CHANGED_CHARACTERS + 5 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('') + '&"';
    same(many);
    same(many.slice(2 * 5));
  });

  it('the characters taken to be left by every chain are exactly those no chain changes (every ASCII character, and beyond)', () => {
    for (let cp = 0; cp < 0x100; cp++) {
      const c = String.fromCharCode(cp);
      expect(formsByChains(c.repeat(4)).length === 1, JSON.stringify(c)).toBe(/^[A-Za-z0-9._-]$/.test(c));
      expect(formsByCharacter(c.repeat(4)).length === 1, JSON.stringify(c)).toBe(/^[A-Za-z0-9._-]$/.test(c));
    }
  });

  it('a value is made the plain way until each of its characters that change has been met in enough values; the same forms either way', () => {
    // from a clean slate (the worker's other files make forms too, and the remembered characters are bounded): the
    // first values go the plain way, and from then on character by character
    forgetWorkedOut();
    const value = (i: number): string => `k${i}\u0a85\u0a86 x\u0a87`;
    for (let i = 0; i < WORTH_WORKING_OUT + 3; i++) {
      expect(formsWorkedOut('\u0a85')).toBe(i >= WORTH_WORKING_OUT);
      expect(new Set(secretForms(value(i)))).toEqual(new Set(formsByChains(value(i))));
    }
    expect(formsWorkedOut('\u0a87')).toBe(true);
  });
});

