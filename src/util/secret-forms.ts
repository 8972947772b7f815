/**
 * The forms a secret value can take in an echo of a request: what the redactor looks for (src/util/redact.ts).
 *
 * A form is the value through up to three encodings:
 * - *nesting* encodings, any number of them: JSON string escapes as JavaScript writes them (standard, ASCII-only,
 *   with `\/`) and URL encodings (encodeURIComponent in both hex cases, encodeURI, form `+`). A JSON body echoed
 *   inside a JSON message that is itself in a JSON log line is three of them.
 * - at most one *re-encoding*: a service that parsed the request and wrote it again with another serializer. JSON as
 *   Go's encoding/json writes it (HTML-safe: `\u0026 \u003c \u003e`, and `\u2028 \u2029`); as .NET's System.Text.Json
 *   writes it (upper-case hex: `\u0022 \u0026 \u0027 \u002B \u003C \u003E \u0060`, and every character outside
 *   printable ASCII with the default encoder, or only the controls with `UnicodeRanges.All`); ASCII-only with
 *   upper-case hex (`\u00FC`); ASCII-only with `\/` (PHP's json_encode). Percent-encoding as RFC 3986 strictly
 *   reserves it (only `A-Z a-z 0-9 - . _ ~` kept: Python's quote(safe=''), .NET's Uri.EscapeDataString, PHP's
 *   rawurlencode) in both hex cases, with `/` kept too (Python's quote with its default safe='/'), with `+` for a space
 *   (Go's url.QueryEscape, Python's quote_plus), and the form encoding of URLSearchParams and Java's URLEncoder (`*`
 *   kept, `~` encoded, `+` for a space). A string as Python's repr() writes it (an exception's text, pydantic's
 *   `input_value='…'`: `\\` and the quote it chose escaped, `"` not, controls as `\x1b`), as Go's `%q` writes it
 *   (`\a \v \x1b`), as Node's util.inspect writes it (`\x1B`, its choice of quotes), as a SQL literal (`''`), as
 *   Go's url.PathEscape writes it (`$&+:=@` kept). HTML and XML escaping (a proxy's, a WAF's or a framework's error
 *   page echoing a submitted value): `&amp; &lt; &gt;` with `"` as `&quot;`, `&#34;` or as it is and `'` as `&#39;`,
 *   `&#x27;` or as it is, as escape-html, Python's html.escape, Go's html.EscapeString, Commons' escapeHtml4 and XML
 *   text write them. After a re-encoding only the JSON nesting encodings follow (govops' outputs and the service's own
 *   JSON nest it; nothing URL-encodes it again).
 * Each form is kept once: a value without the characters an encoding rewrites adds no form for it, so a plain
 * alphanumeric value has one form and one full of special characters a few hundred.
 *
 * Not covered: any other transformation (base64, other HTML entities: `&#039;`, `&apos;`, `&#43;`, a non-ASCII
 * character as an entity; case folding, a part of the value). A URL's userinfo as Go or Java escape it needs no form:
 * the redactor drops every URL userinfo. Pure.
 */

type Encode = (v: string) => string;

function jsonEscape(v: string): string {
  return JSON.stringify(v).slice(1, -1);
}

function jsonEscapeAscii(v: string): string {
  return jsonEscape(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function lowerHex(v: string): string {
  return v.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A JSON string's content as a serializer writes it: `\uXXXX` (hex in upper or lower case) for each character of the
 * class `hexClass`, JSON's short escapes for the others that need one, `\uXXXX` for the remaining controls.
 */
function jsonWriter(hexClass: string, upper: boolean): Encode {
  const escaped = new RegExp(`[${hexClass}]`);
  const any = new RegExp(`["\\\\\\u0000-\\u001f]|[${hexClass}]`, 'g');
  const hex = (c: string): string => {
    const h = c.charCodeAt(0).toString(16).padStart(4, '0');
    return `\\u${upper ? h.toUpperCase() : h}`;
  };
  return (v) => v.replace(any, (c) => (escaped.test(c) ? hex(c) : (SHORT_ESCAPES[c] ?? hex(c))));
}

/** & < > and the JavaScript line terminators: Go's encoding/json (HTML-safe, the default of json.Marshal). */
const GO_HEX = '&<>\\u2028\\u2029';
/** The HTML-sensitive characters .NET's encoders always escape. */
const DOTNET_HEX = '"&\'+<>`';

/** A UTF-16 surrogate without its pair (a YAML literal `"\ud800…"` can hold one). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * encodeURIComponent and encodeURI with a lone surrogate as U+FFFD (`%EF%BF%BD`), as a URL encoder of a service writes
 * it: both throw a URIError on one, and a manifest's literal credential holding one made every output of the run
 * throw (`govops plan` exited 1 printing nothing).
 */
function uriComponent(v: string): string {
  return encodeURIComponent(v.replace(LONE_SURROGATE, '\ufffd'));
}
function uri(v: string): string {
  return encodeURI(v.replace(LONE_SURROGATE, '\ufffd'));
}

/** Percent-encoding with `keep` as the only characters written as they are (UTF-8, upper-case hex). */
function percentEncode(v: string, keep: RegExp, space: '%20' | '+'): string {
  return uriComponent(v).replace(/[!'()*~]/g, (c) => (keep.test(c) ? c : `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).replace(/%20/g, space);
}

/** Characters Python's repr() escapes (not `str.isprintable()`): the Unicode categories Other and Separator, but a space. */
const PY_UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const PY_SHORT: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A string as Python's repr() writes it, without its quotes (an exception's text, `str()` of a dict, pydantic's
 * `input_value=`): `'` quotes unless the value holds `'` and no `"`; that quote and `\` escaped, `\t \n \r`, every
 * other character that is not printable as `\xNN`, `\uNNNN` or `\UNNNNNNNN` (lower-case hex); the rest as it is.
 */
function pythonRepr(v: string): string {
  const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
  let out = '';
  for (const c of v) {
    const short = PY_SHORT[c];
    if (short !== undefined) out += short;
    else if (c === quote) out += `\\${c}`;
    else if (c !== ' ' && PY_UNPRINTABLE.test(c)) {
      const cp = c.codePointAt(0)!;
      out += cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += c;
  }
  return out;
}

/**
 * HTML or XML escaping as an escaper writes it: `& < >` always, `"` and `'` as `quot` and `apos` say, as they are when
 * undefined. A proxy's or a WAF's error page, or a framework's, echoing a submitted value.
 */
function htmlEscaper(quot: string | undefined, apos: string | undefined): Encode {
  const entity: Readonly<Record<string, string | undefined>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': quot, "'": apos };
  return (v) => v.replace(/[&<>"']/g, (c) => entity[c] ?? c);
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const GO_PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;
const GO_SHORT: Readonly<Record<string, string>> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\' };

/**
 * A string as Go's `%q` (strconv.Quote) writes it, without its quotes (`fmt.Errorf("invalid value %q", v)`, strconv's
 * `parsing "…"`): `"` and `\` escaped, `\a \b \f \n \r \t \v`, the other controls and DEL as `\x1b`, every other
 * character that is not printable as `\u00a0` or `\U000e0001` (lower-case hex).
 */
function goQuote(v: string): string {
  let out = '';
  for (const c of v) {
    const short = GO_SHORT[c];
    if (short !== undefined) out += short;
    else if (GO_PRINTABLE.test(c)) out += c;
    else {
      const cp = c.codePointAt(0)!;
      out += cp < 0x20 || cp === 0x7f ? `\\x${cp.toString(16).padStart(2, '0')}` : cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return out;
}

const NODE_SHORT: Readonly<Record<string, string>> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r', '\\': '\\\\' };

/**
 * A string as Node's util.inspect writes it, without its quotes (`Received '…'` of an ERR_INVALID_ARG_VALUE, an object
 * logged with console.log): `'` quotes, or `"` when it holds `'` and no `"`, or a backquote when it holds both and no
 * backquote nor `${`; `'` escaped only inside `'` quotes, `\` escaped, `\b \t \n \f \r`, the other C0 and C1
 * controls and DEL as `\x1B` (upper-case hex), a lone surrogate as `\ud800`.
 */
function nodeInspect(v: string): string {
  const single = !v.includes("'") || (v.includes('"') && (v.includes('`') || v.includes('${')));
  // eslint-disable-next-line no-control-regex
  return v.replace(/[\u0000-\u001f'\\\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => {
    if (c === "'") return single ? "\\'" : c;
    const short = NODE_SHORT[c];
    if (short !== undefined) return short;
    const cp = c.charCodeAt(0);
    return cp >= 0xd800 ? `\\u${cp.toString(16)}` : `\\x${cp.toString(16).toUpperCase().padStart(2, '0')}`;
  });
}

/** Go's url.PathEscape: RFC 3986 strict, but `$ & + : = @` kept as they are. */
function goPathEscape(v: string): string {
  return percentEncode(v, RFC3986_KEEP, '%20').replace(/%(?:24|26|2B|3A|3D|40)/g, (m) => String.fromCharCode(parseInt(m.slice(1), 16)));
}

/** RFC 3986 unreserved characters beyond encodeURIComponent's: only `-._~` with the alphanumerics. */
const RFC3986_KEEP = /[~]/;
/** URLSearchParams and Java's URLEncoder: `*-._` with the alphanumerics. */
const FORM_KEEP = /[*]/;

/** JSON as JavaScript writes it (standard, ASCII-only, with `\/`): how govops' outputs and a service's JSON nest a text. */
const JSON_NESTING: readonly Encode[] = [jsonEscape, jsonEscapeAscii, (v) => jsonEscape(v).replace(/\//g, '\\/')];

/** URL encodings: encodeURIComponent (upper- and lower-case hex), encodeURI, form encoding (`+`). */
const URL_NESTING: readonly Encode[] = [
  uriComponent,
  (v) => lowerHex(uriComponent(v)),
  uri,
  (v) => uriComponent(v).replace(/%20/g, '+'),
];

/** Another serializer's writing of a value it parsed: at most one of these in a chain. */
const REENCODING: readonly Encode[] = [
  jsonWriter(GO_HEX, false),
  // .NET's default encoder: also every character outside printable ASCII; with UnicodeRanges.All, DEL and C1 only
  jsonWriter(`${DOTNET_HEX}\\u007f-\\uffff`, true),
  jsonWriter(`${DOTNET_HEX}\\u007f-\\u009f`, true),
  jsonWriter('\\u007f-\\uffff', true),
  (v) => jsonEscapeAscii(v).replace(/\//g, '\\/'),
  (v) => percentEncode(v, RFC3986_KEEP, '%20'),
  (v) => lowerHex(percentEncode(v, RFC3986_KEEP, '%20')),
  // Python's quote() with its default safe='/'
  (v) => percentEncode(v, RFC3986_KEEP, '%20').replace(/%2F/g, '/'),
  pythonRepr,
  (v) => percentEncode(v, RFC3986_KEEP, '+'),
  (v) => percentEncode(v, FORM_KEEP, '+'),
  goPathEscape,
  goQuote,
  nodeInspect,
  // a SQL string literal (a generated script, a statement quoted in an error)
  (v) => v.replace(/'/g, "''"),
  // HTML: escape-html (Express), lodash, .NET's WebUtility.HtmlEncode, Spring's HtmlUtils (Spring Boot's error page)
  htmlEscaper('&quot;', '&#39;'),
  // Python's html.escape (Django)
  htmlEscaper('&quot;', '&#x27;'),
  // Go's html.EscapeString and xml.EscapeText, MarkupSafe (Jinja2, Flask), the OWASP Java Encoder
  htmlEscaper('&#34;', '&#39;'),
  // Apache Commons Text's escapeHtml4: `'` as it is
  htmlEscaper('&quot;', undefined),
  // XML text content (a JAXP Transformer, Python's xml.sax.saxutils.escape, html.escape(quote=False)): quotes as they are
  htmlEscaper(undefined, undefined),
];

/** How many encodings a form is made of at most. */
export const MAX_DEPTH = 3;

/**
 * How a form was made, as bits: only JSON nestings (or none: the value), some URL nesting, a re-encoding. A form
 * made by JSON nestings only can still take any encoding; after a URL nesting, no re-encoding; after a re-encoding,
 * JSON nestings only.
 */
const BY_JSON = 1;
const BY_URL = 2;
const BY_REENCODING = 4;

const NEXT: ReadonlyArray<readonly [from: number, encodings: readonly Encode[], to: number]> = [
  [BY_JSON, JSON_NESTING, BY_JSON],
  [BY_JSON, URL_NESTING, BY_URL],
  [BY_JSON, REENCODING, BY_REENCODING],
  [BY_URL, JSON_NESTING, BY_URL],
  [BY_URL, URL_NESTING, BY_URL],
  [BY_REENCODING, JSON_NESTING, BY_REENCODING],
];

/**
 * Every form of `value` that an echo of a request could contain: the value through up to three encodings, with at
 * most one re-encoding, preceded and followed by JSON nestings only (see the top of this file).
 */
export function secretForms(value: string): string[] {
  // Each form with the ways it was made (a form made in two ways goes on in both, unless one of them allows all).
  const made = new Map<string, number>([[value, BY_JSON]]);
  let frontier: Array<{ form: string; by: number }> = [{ form: value, by: BY_JSON }];
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const next: typeof frontier = [];
    for (const { form, by } of frontier) {
      for (const [from, encodings, to] of NEXT) {
        if (by !== from) continue;
        for (const encode of encodings) {
          const g = encode(form);
          const before = made.get(g) ?? 0;
          // made by JSON nestings only, it went on every way already
          if (before & (to | BY_JSON)) continue;
          made.set(g, before | to);
          next.push({ form: g, by: to });
        }
      }
    }
    frontier = next;
  }
  return [...made.keys()];
}
