/**
 * Echoes the forms of test/util/secret-forms.test.ts did not cover (2026-11-28, third redaction audit): HTML written by
 * PHP's htmlspecialchars (`&#039;`), by escapers that write a non-ASCII character as an entity (`&#233;`, `&#xE9;`,
 * `&eacute;`). Each written out here by hand as the library writes it.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED } from '../../src/util/redact.js';
import { secretForms } from '../../src/util/secret-forms.js';

const VALUE = `Tr0ub4dor&3-'é€ü"+x`;

/** The value as each HTML escaper writes it. */
const HTML: Record<string, string> = {
  // PHP's htmlspecialchars (ENT_QUOTES, the default since PHP 8.1)
  phpHtmlspecialchars: 'Tr0ub4dor&amp;3-&#039;é€ü&quot;+x',
  // .NET's WebUtility.HtmlEncode / HttpUtility.HtmlEncode: U+00A0..U+00FF as decimal entities, the rest as it is
  dotnetWebUtility: 'Tr0ub4dor&amp;3-&#39;&#233;€&#252;&quot;+x',
  // ASP.NET Core's HtmlEncoder.Default (Razor): `'`, `+` and everything outside ASCII as upper-case hex entities
  aspnetCore: 'Tr0ub4dor&amp;3-&#x27;&#xE9;&#x20AC;&#xFC;&quot;&#x2B;x',
  // Python's html.escape(...).encode('ascii', 'xmlcharrefreplace') (ElementTree / lxml writing us-ascii)
  pythonXmlcharref: 'Tr0ub4dor&amp;3-&#x27;&#233;&#8364;&#252;&quot;+x',
  // Spring's HtmlUtils.htmlEscape: HTML 4 named entities
  springHtmlUtils: 'Tr0ub4dor&amp;3-&#39;&eacute;&euro;&uuml;&quot;+x',
  // Apache Commons Text's escapeHtml4 (and PHP's htmlentities without ENT_QUOTES' `'`): named entities, `'` as it is
  commonsEscapeHtml4: `Tr0ub4dor&amp;3-'&eacute;&euro;&uuml;&quot;+x`,
};

describe('HTML entities', () => {
  it('holds the value as PHP, .NET, ASP.NET Core, Python and Spring write it in an HTML page', () => {
    const forms = new Set(secretForms(VALUE));
    const r = new Redactor();
    r.add(VALUE);
    for (const [who, written] of Object.entries(HTML)) {
      expect(forms.has(written), who).toBe(true);
      const page = `<p>rejected value &quot;${written}&quot;</p>`;
      expect(r.redactText(page), who).toBe(`<p>rejected value &quot;${REDACTED}&quot;</p>`);
    }
  });

  it('adds nothing for a value without the characters they rewrite', () => {
    expect(secretForms('abcd1234EFGH')).toEqual(['abcd1234EFGH']);
  });
});

describe('percent-encoded, then HTML-escaped', () => {
  it("a value in a URL built with encodeURI (`&` and `'` kept), on an HTML page", () => {
    const value = "p&ss wörd'x/1";
    const url = encodeURI(value); // p&ss%20w%C3%B6rd'x/1
    const r = new Redactor();
    r.add(value);
    for (const written of [url.replace(/&/g, '&amp;').replace(/'/g, '&#39;'), url.replace(/&/g, '&amp;').replace(/'/g, '&#x27;'), url.replace(/&/g, '&amp;').replace(/'/g, '&#039;'), url.replace(/&/g, '&amp;')]) {
      expect(r.redactText(`<a href="https://host/reset?p=${written}">retry</a>`), written).toBe(`<a href="https://host/reset?p=${REDACTED}">retry</a>`);
    }
  });
});
