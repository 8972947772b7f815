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
 *   (`\a \v \x1b`), as Node's util.inspect writes it (`\x1B`, its choice of quotes), as a SQL literal (`''`), as a CSV field (`""`), as
 *   Go's url.PathEscape writes it (`$&+:=@` kept). HTML and XML escaping (a proxy's, a WAF's or a framework's error
 *   page echoing a submitted value): `&amp; &lt; &gt;` with `"` as `&quot;`, `&#34;` or as it is and `'` as `&#39;`,
 *   `&#x27;` or as it is, as escape-html, Python's html.escape, Go's html.EscapeString, Commons' escapeHtml4 and XML
 *   text write them; PHP's htmlspecialchars (`&#039;`); and with a non-ASCII character as an entity: .NET's
 *   WebUtility.HtmlEncode (`&#233;` for U+00A0..U+00FF), ASP.NET Core's HtmlEncoder (`&#xE9;`, `&#x2B;`), Python's
 *   xmlcharrefreplace (`&#8364;`), Spring's HtmlUtils and Commons' escapeHtml4 (HTML 4's names: `&eacute;`). HTML
 *   escaping may also follow URL nestings (a link on an error page: encodeURI keeps `&` and `'`). After a re-encoding only the JSON nesting encodings follow (govops' outputs and the service's own
 *   JSON nest it; nothing URL-encodes it again).
 * Each form is kept once: a value without the characters an encoding rewrites adds no form for it, so a plain
 * alphanumeric value has one form and one full of special characters a few hundred.
 *
 * And apart from these, the value in base64, and a few encodings of it in base64 (`base64Forms`, not nested in the others),
 * the list of its bytes (`byteListForms`), and a CSV field framed by its quote (`csvFieldForms`).
 *
 * Not covered here: a form nested deeper, other spellings of an escape (XML's `&apos;`, Go html/template's `&#43;`, a
 * lower-case hex entity, `\u` escapes of every character): the redactor also reads a text through its decoded views
 * (src/util/decoded-views.ts), which find these; the value's Unicode normalizations: the redactor makes the forms of
 * each that differs from it (`normalizedForms`). Not covered at all: base64 of an encoded form other than
 * BASE64_SOURCES', case folding, a part of the value. A URL's userinfo as Go or Java escape it needs no form:
 * the redactor drops every URL userinfo. Pure.
 */

type Encode = (v: string) => string;

function jsonEscape(v: string): string {
  return JSON.stringify(v).slice(1, -1);
}

function jsonEscapeAscii(v: string): string {
  return jsonEscape(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A CSV field's `"` doubled but for the run of `"` that starts the value and the one that ends it (see REENCODING). */
function csvInnerQuotes(v: string): string {
  let head = 1;
  while (head < v.length && v[head - 1] === '"' && v[head] === '"') head++;
  let tail = 1;
  while (tail < v.length && v[v.length - tail] === '"' && v[v.length - tail - 1] === '"') tail++;
  return v.length > head + tail ? v.slice(0, head) + v.slice(head, -tail).replace(/"/g, '""') + v.slice(-tail) : v;
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
  return pythonReprIn(pythonQuote(v), v);
}

/** The quote Python's repr() chooses for `v`. */
function pythonQuote(v: string): string {
  return v.includes("'") && !v.includes('"') ? '"' : "'";
}

/** `pythonRepr` with its choice of quote made (`secretForms` makes it for the value and applies it to its characters). */
function pythonReprIn(quote: string, v: string): string {
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

/** The characters HTML 4 names (`&eacute;`, `&euro;`): code point in hex, then the name. */
export const HTML4_NAMED: ReadonlyMap<number, string> = new Map(
  (
    'a0:nbsp a1:iexcl a2:cent a3:pound a4:curren a5:yen a6:brvbar a7:sect a8:uml a9:copy aa:ordf ab:laquo ac:not ' +
    'ad:shy ae:reg af:macr b0:deg b1:plusmn b2:sup2 b3:sup3 b4:acute b5:micro b6:para b7:middot b8:cedil b9:sup1 ' +
    'ba:ordm bb:raquo bc:frac14 bd:frac12 be:frac34 bf:iquest c0:Agrave c1:Aacute c2:Acirc c3:Atilde c4:Auml c5:Aring ' +
    'c6:AElig c7:Ccedil c8:Egrave c9:Eacute ca:Ecirc cb:Euml cc:Igrave cd:Iacute ce:Icirc cf:Iuml d0:ETH d1:Ntilde ' +
    'd2:Ograve d3:Oacute d4:Ocirc d5:Otilde d6:Ouml d7:times d8:Oslash d9:Ugrave da:Uacute db:Ucirc dc:Uuml dd:Yacute ' +
    'de:THORN df:szlig e0:agrave e1:aacute e2:acirc e3:atilde e4:auml e5:aring e6:aelig e7:ccedil e8:egrave e9:eacute ' +
    'ea:ecirc eb:euml ec:igrave ed:iacute ee:icirc ef:iuml f0:eth f1:ntilde f2:ograve f3:oacute f4:ocirc f5:otilde ' +
    'f6:ouml f7:divide f8:oslash f9:ugrave fa:uacute fb:ucirc fc:uuml fd:yacute fe:thorn ff:yuml 152:OElig 153:oelig ' +
    '160:Scaron 161:scaron 178:Yuml 192:fnof 2c6:circ 2dc:tilde 391:Alpha 392:Beta 393:Gamma 394:Delta 395:Epsilon ' +
    '396:Zeta 397:Eta 398:Theta 399:Iota 39a:Kappa 39b:Lambda 39c:Mu 39d:Nu 39e:Xi 39f:Omicron 3a0:Pi 3a1:Rho ' +
    '3a3:Sigma 3a4:Tau 3a5:Upsilon 3a6:Phi 3a7:Chi 3a8:Psi 3a9:Omega 3b1:alpha 3b2:beta 3b3:gamma 3b4:delta ' +
    '3b5:epsilon 3b6:zeta 3b7:eta 3b8:theta 3b9:iota 3ba:kappa 3bb:lambda 3bc:mu 3bd:nu 3be:xi 3bf:omicron 3c0:pi ' +
    '3c1:rho 3c2:sigmaf 3c3:sigma 3c4:tau 3c5:upsilon 3c6:phi 3c7:chi 3c8:psi 3c9:omega 3d1:thetasym 3d2:upsih ' +
    '3d6:piv 2002:ensp 2003:emsp 2009:thinsp 200c:zwnj 200d:zwj 200e:lrm 200f:rlm 2013:ndash 2014:mdash 2018:lsquo ' +
    '2019:rsquo 201a:sbquo 201c:ldquo 201d:rdquo 201e:bdquo 2020:dagger 2021:Dagger 2022:bull 2026:hellip 2030:permil ' +
    '2032:prime 2033:Prime 2039:lsaquo 203a:rsaquo 203e:oline 2044:frasl 20ac:euro 2111:image 2118:weierp 211c:real ' +
    '2122:trade 2135:alefsym 2190:larr 2191:uarr 2192:rarr 2193:darr 2194:harr 21b5:crarr 21d0:lArr 21d1:uArr ' +
    '21d2:rArr 21d3:dArr 21d4:hArr 2200:forall 2202:part 2203:exist 2205:empty 2207:nabla 2208:isin 2209:notin ' +
    '220b:ni 220f:prod 2211:sum 2212:minus 2217:lowast 221a:radic 221d:prop 221e:infin 2220:ang 2227:and 2228:or ' +
    '2229:cap 222a:cup 222b:int 2234:there4 223c:sim 2245:cong 2248:asymp 2260:ne 2261:equiv 2264:le 2265:ge 2282:sub ' +
    '2283:sup 2284:nsub 2286:sube 2287:supe 2295:oplus 2297:otimes 22a5:perp 22c5:sdot 2308:lceil 2309:rceil ' +
    '230a:lfloor 230b:rfloor 2329:lang 232a:rang 25ca:loz 2660:spades 2663:clubs 2665:hearts 2666:diams'
  )
    .split(' ')
    .map((e): [number, string] => [parseInt(e.slice(0, e.indexOf(':')), 16), e.slice(e.indexOf(':') + 1)]),
);

/**
 * HTML escaping with entities beyond `& < > " '`: `quot` and `apos` as `htmlEscaper` takes them, `other` for each other
 * character (by code point; undefined: as it is). What writes a non-ASCII character as an entity.
 */
function htmlEntityEscaper(quot: string, apos: string | undefined, other: (cp: number) => string | undefined): Encode {
  const basic = htmlEscaper(quot, apos);
  return (v) => {
    let out = '';
    for (const c of basic(v)) out += other(c.codePointAt(0)!) ?? c;
    return out;
  };
}
const decimalEntity = (cp: number): string => `&#${cp};`;
const hexEntity = (cp: number): string => `&#x${cp.toString(16).toUpperCase()};`;

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
  return nodeInspectIn(nodeSingleQuotes(v), v);
}

/** Whether Node's util.inspect writes `v` in `'` quotes (escaping `'`). */
function nodeSingleQuotes(v: string): boolean {
  return !v.includes("'") || (v.includes('"') && (v.includes('`') || v.includes('${')));
}

/** `nodeInspect` with its choice of quotes made (`secretForms` makes it for the value and applies it to its characters). */
function nodeInspectIn(single: boolean, v: string): string {
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
  // a CSV field (RFC 4180: a service's export, a report attached to an error): `"` doubled, but for a first or last
  // character (doubled, it would be the quote around any quoted echo of the value, decoded: `"v"` in a view of
  // `"\"v\""` would be taken for CSV of `v"`); the other half of such a doubled `"` is `csvFieldForms`'. So is a
  // run of `"` that starts or ends the value (`v""` doubled inside is `v"""`: `v""` and the closing quote of a JSON echo)
  csvInnerQuotes,
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
  // PHP's htmlspecialchars (ENT_QUOTES, its default since PHP 8.1)
  htmlEscaper('&quot;', '&#039;'),
  // .NET's WebUtility.HtmlEncode and HttpUtility.HtmlEncode: U+00A0..U+00FF and characters beyond the BMP as decimal entities
  htmlEntityEscaper('&quot;', '&#39;', (cp) => ((cp >= 0xa0 && cp <= 0xff) || cp > 0xffff ? decimalEntity(cp) : undefined)),
  // ASP.NET Core's HtmlEncoder.Default (Razor): `' + \`` and every character outside printable ASCII as upper-case hex
  htmlEntityEscaper('&quot;', '&#x27;', (cp) => (cp === 0x2b || cp === 0x60 || cp < 0x20 || cp >= 0x7f ? hexEntity(cp) : undefined)),
  // Python's xmlcharrefreplace after html.escape (ElementTree or lxml writing us-ascii, `.encode('ascii', 'xmlcharrefreplace')`)
  htmlEntityEscaper('&quot;', '&#x27;', (cp) => (cp >= 0x80 ? decimalEntity(cp) : undefined)),
  // Spring's HtmlUtils.htmlEscape: HTML 4's named entities (`&eacute;`, `&euro;`)
  htmlEntityEscaper('&quot;', '&#39;', (cp) => (HTML4_NAMED.has(cp) ? `&${HTML4_NAMED.get(cp)};` : undefined)),
  // Apache Commons Text's escapeHtml4, PHP's htmlentities(ENT_COMPAT): the same, `'` as it is
  htmlEntityEscaper('&quot;', undefined, (cp) => (HTML4_NAMED.has(cp) ? `&${HTML4_NAMED.get(cp)};` : undefined)),
];

/**
 * HTML escaping of a URL-encoded value (a link on an error page): every URL encoder writes `" < >` as `%XX`, encodeURI
 * keeps `&` and `'`, so these are the escapers that differ there: `'` as `&#39;`, `&#x27;`, `&#039;` or as it is.
 */
const HTML_OF_URL: readonly Encode[] = [htmlEscaper('&quot;', '&#39;'), htmlEscaper('&quot;', '&#x27;'), htmlEscaper('&quot;', '&#039;'), htmlEscaper('&quot;', undefined)];

/** How many encodings a form is made of at most. */
export const MAX_DEPTH = 3;

/**
 * How a form was made, as bits: only JSON nestings (or none: the value), some URL nesting, a re-encoding. A form
 * made by JSON nestings only can still take any encoding; after a URL nesting, no re-encoding but HTML escaping
 * (`HTML_OF_URL`); after a re-encoding, JSON nestings only.
 */
const BY_JSON = 1;
const BY_URL = 2;
const BY_REENCODING = 4;

export const FORM_STEPS: ReadonlyArray<readonly [from: number, encodings: readonly Encode[], to: number]> = [
  [BY_JSON, JSON_NESTING, BY_JSON],
  [BY_JSON, URL_NESTING, BY_URL],
  [BY_JSON, REENCODING, BY_REENCODING],
  [BY_URL, JSON_NESTING, BY_URL],
  [BY_URL, URL_NESTING, BY_URL],
  [BY_URL, HTML_OF_URL, BY_REENCODING],
  [BY_REENCODING, JSON_NESTING, BY_REENCODING],
];

/**
 * Every form of `value` that an echo of a request could contain: the value through each chain of encodings FORM_STEPS
 * allows, up to MAX_DEPTH of them, at most one re-encoding, preceded and followed by JSON nestings only (see the top of
 * this file). Made by applying every chain to the value whole (`formsByChains`), or, once each of its characters that
 * change has been met in WORTH_WORKING_OUT values, character by character (`formsByCharacter`: the same set, which a
 * test compares), because applying every encoding to every form took ~0.2 ms for a random 20-character value and 2-3
 * ms for one full of special characters (a daemon taking 10,000 credentials in force waited seconds):
 * - Every encoding but the CSV field's writes each character of a text on its own, whatever is around it. Python's
 *   repr() and Node's util.inspect choose their quotes from the whole text, but only JSON nestings come before them,
 *   and these neither add nor remove a quote, a backquote or `${`: the choice is the value's. So a chain's form of the
 *   value is the value with each character replaced by the chain's form of that character.
 * - The chains' forms of a character are worked out once (`charForms`). A character no chain changes (letters, digits,
 *   `-._`) stays as it is. Two chains give the same form of the value when they give the same form of each of its other
 *   characters: one form per class of chains (`chainClasses`), the classes remembered for each set of such characters.
 * - The CSV field's chains (its first and last characters are not doubled: where a character is matters) are applied to
 *   the value whole (only for a value holding `"`: without one they are JSON nestings alone, among the others).
 * - A value with more than MAX_CHANGED_CHARACTERS characters that change is made the plain way (`formsByChains`): the
 *   forms of each character are ~1,500 strings, and an author's value could hold thousands of distinct ones.
 */
export function secretForms(value: string): string[] {
  const changing = new Set<string>();
  for (const c of value) if (!UNCHANGED.test(c)) changing.add(c);
  if (changing.size === 0) return [value];
  if (changing.size > MAX_CHANGED_CHARACTERS) return formsByChains(value);
  const modes = modesOf(value);
  let worked = true;
  for (const c of changing) {
    if (charFormsOf.has(`${modes}${c}`)) continue;
    const times = (timesMet.get(c) ?? 0) + 1;
    if (timesMet.size >= MAX_REMEMBERED) timesMet.clear();
    timesMet.set(c, times);
    if (times < WORTH_WORKING_OUT) worked = false;
  }
  return worked ? byCharacter(value, modes) : formsByChains(value);
}

/**
 * The characters no chain changes (a test checks every ASCII character; every other one is changed by the ASCII-only
 * JSON nesting).
 */
const UNCHANGED = /^[A-Za-z0-9._-]$/;

/**
 * A character's forms are worked out (~1,500 encodings, 1-2 ms) once it has been met in this many values: a command
 * resolving a few secrets makes their forms the plain way (well under a millisecond each), a daemon taking thousands in
 * force works out the few dozen characters they are made of.
 */
export const WORTH_WORKING_OUT = 8;

/** How many values each character was met in (until its forms are worked out). */
const timesMet = new Map<string, number>();

/** Forget every character's forms, the classes of chains and the counts (as when more come than are remembered). */
export function forgetWorkedOut(): void {
  charFormsOf.clear();
  classesOf.clear();
  timesMet.clear();
}

/** Whether the forms of the character `c` are worked out (for some choice of quotes). */
export function formsWorkedOut(c: string): boolean {
  for (const modes of [0, 1, 2, 3]) if (charFormsOf.has(`${modes}${c}`)) return true;
  return false;
}

/** `secretForms` character by character, whatever characters have been worked out before. */
export function formsByCharacter(value: string): string[] {
  return byCharacter(value, modesOf(value));
}

function byCharacter(value: string, modes: Modes): string[] {
  const tables: CharForms[] = [];
  const slotOf = new Map<string, number>();
  // the value as runs of characters no chain changes and slots for the others (indexes into `tables`)
  const parts: Array<string | number> = [];
  let run = '';
  for (const c of value) {
    if (UNCHANGED.test(c)) {
      run += c;
      continue;
    }
    let slot = slotOf.get(c);
    if (slot === undefined) {
      if (tables.length === MAX_CHANGED_CHARACTERS) return formsByChains(value);
      slot = tables.length;
      slotOf.set(c, slot);
      tables.push(charForms(c, modes));
    }
    if (run) parts.push(run);
    run = '';
    parts.push(slot);
  }
  if (run) parts.push(run);
  if (tables.length === 0) return [value];
  const forms = new Set<string>();
  for (const chain of chainClasses(tables, modes)) {
    let form = '';
    for (const p of parts) form += typeof p === 'string' ? p : tables[p]!.forms[tables[p]!.of[chain]!]!;
    forms.add(form);
  }
  if (value.includes('"')) for (const f of csvChainForms(value)) forms.add(f);
  return [...forms];
}

/** A value with more characters than this that some chain changes is made the plain way (`formsByChains`). */
export const MAX_CHANGED_CHARACTERS = 48;

/**
 * Every form of `value`, by applying each encoding to each form made so far, breadth first (each form kept once, with
 * the ways it was made: a form made in two ways goes on in both, unless one of them allows all). The reference
 * `secretForms` is checked against, and its way for a value with many characters that change.
 */
export function formsByChains(value: string): string[] {
  const after = stepsAfter();
  const made = new Map<string, number>([[value, BY_JSON]]);
  let frontier: Array<{ form: string; by: number }> = [{ form: value, by: BY_JSON }];
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const next: typeof frontier = [];
    for (const { form, by } of frontier) {
      for (const [encode, to] of after[by]!) {
        const g = encode(form);
        const before = made.get(g) ?? 0;
        // made by JSON nestings only, it went on every way already
        if (before & (to | BY_JSON)) continue;
        made.set(g, before | to);
        next.push({ form: g, by: to });
      }
    }
    frontier = next;
  }
  return [...made.keys()];
}

let stepsAfterList: ReadonlyArray<ReadonlyArray<readonly [Encode, number]>> | undefined;

/** By how a form was made (BY_JSON, BY_URL, BY_REENCODING), each encoding FORM_STEPS allows next and how that makes it. */
function stepsAfter(): ReadonlyArray<ReadonlyArray<readonly [Encode, number]>> {
  if (!stepsAfterList) {
    const after: Array<Array<readonly [Encode, number]>> = Array.from({ length: BY_REENCODING + 1 }, () => []);
    for (const [from, encodings, to] of FORM_STEPS) for (const encode of encodings) after[from]!.push([encode, to]);
    stepsAfterList = after;
  }
  return stepsAfterList;
}

/** One chain of encodings: its last step and the chain before it (an index into `allChains()`; the empty chain has none). */
interface Chain {
  parent: number;
  step: Encode;
}

let chainList: readonly Chain[] | undefined;

/**
 * Every chain FORM_STEPS allows, but those holding the CSV field's encoding (`csvChainForms`), each after the chain it
 * extends: the empty chain first, then those of one step, two, three (made at the first use: a command that makes no
 * forms character by character does not pay for them).
 */
function allChains(): readonly Chain[] {
  if (chainList) return chainList;
  const chains: Chain[] = [{ parent: -1, step: (v) => v }];
  let level: Array<{ at: number; by: number }> = [{ at: 0, by: BY_JSON }];
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const next: typeof level = [];
    for (const { at, by } of level) {
      for (const [step, to] of stepsAfter()[by]!) {
        if (step === csvInnerQuotes) continue;
        next.push({ at: chains.length, by: to });
        chains.push({ parent: at, step });
      }
    }
    level = next;
  }
  chainList = chains;
  return chains;
}

/** The whole value's choices an encoding of one character depends on: Python's quote, Node's quotes (`modesOf`). */
type Modes = 0 | 1 | 2 | 3;

function modesOf(value: string): Modes {
  return ((pythonQuote(value) === '"' ? 1 : 0) + (nodeSingleQuotes(value) ? 2 : 0)) as Modes;
}

/**
 * Each chain's last step with the value's choices made (per Modes), and a number for each distinct step (`ids`: a step
 * applied to a form once gives the same form for every chain that applies it there).
 */
const stepsIn = new Map<Modes, { steps: readonly Encode[]; ids: Uint16Array }>();

function chainSteps(modes: Modes): { steps: readonly Encode[]; ids: Uint16Array } {
  let known = stepsIn.get(modes);
  if (!known) {
    const quote = modes & 1 ? '"' : "'";
    const single = (modes & 2) !== 0;
    const python = (v: string): string => pythonReprIn(quote, v);
    const node = (v: string): string => nodeInspectIn(single, v);
    const steps = allChains().map(({ step }) => (step === pythonRepr ? python : step === nodeInspect ? node : step));
    const number = new Map<Encode, number>();
    const ids = Uint16Array.from(steps, (step) => {
      if (!number.has(step)) number.set(step, number.size);
      return number.get(step)!;
    });
    known = { steps, ids };
    stepsIn.set(modes, known);
  }
  return known;
}

/**
 * The forms of one character: each once (`forms`, the character itself first), and for each chain (by its index in
 * `allChains()`) the index of its form there (`of`: what `chainClasses` refines by).
 */
interface CharForms {
  char: string;
  forms: string[];
  of: Uint16Array;
}

/** The forms of each character by modes and character. */
const charFormsOf = new Map<string, CharForms>();
/** The representatives of the classes of chains, for each set of characters (with modes). */
const classesOf = new Map<string, Int32Array>();

/**
 * Past this many characters (or sets of them), what was worked out for them is forgotten and worked out again as
 * values need it: an author's value can hold any character. A character's forms take a few kilobytes.
 */
const MAX_REMEMBERED = 1024;

/** The chains' forms of the character `c` (a code point, or a lone surrogate). */
function charForms(c: string, modes: Modes): CharForms {
  const key = `${modes}${c}`;
  const known = charFormsOf.get(key);
  if (known) return known;
  const { steps, ids } = chainSteps(modes);
  const forms: string[] = [c];
  const index = new Map<string, number>([[c, 0]]);
  const chains = allChains();
  const of = new Uint16Array(chains.length);
  // a step applied to one of the character's forms, by the step's number and the form's (fewer forms than chains)
  const applied = new Map<number, number>();
  for (let i = 1; i < chains.length; i++) {
    const from = of[chains[i]!.parent]!;
    const at = ids[i]! * chains.length + from;
    let k = applied.get(at);
    if (k === undefined) {
      const form = steps[i]!(forms[from]!);
      k = index.get(form);
      if (k === undefined) {
        k = forms.length;
        forms.push(form);
        index.set(form, k);
      }
      applied.set(at, k);
    }
    of[i] = k;
  }
  const result = { char: c, forms, of };
  if (charFormsOf.size >= MAX_REMEMBERED) {
    // the counts too: with more characters coming than are remembered, their values go the plain way again rather
    // than work each character out anew for every few values
    charFormsOf.clear();
    timesMet.clear();
  }
  charFormsOf.set(key, result);
  return result;
}

/**
 * One chain of each class of chains that give the same form of every character in `tables` (so of the value): the
 * classes refined character by character, each chain's class and the character's form of it making its new class.
 */
function chainClasses(tables: readonly CharForms[], modes: Modes): Int32Array {
  // JSON: a character beyond the BMP and its two halves alone (lone surrogates) must not make the same key
  const key = `${modes}${JSON.stringify(tables.map((t) => t.char).sort())}`;
  let reps = classesOf.get(key);
  if (reps) return reps;
  const n = allChains().length;
  const cls = new Int32Array(n);
  let count = 1;
  for (const { forms, of } of tables) {
    // a chain's new class: its class so far and its form of this character, numbered in the order first met (an array
    // of every pair: both below the number of chains, ~1,500; ~15,000 pairs for a value full of special characters)
    const classOf = new Int32Array(count * forms.length).fill(-1);
    let next = 0;
    for (let i = 0; i < n; i++) {
      const k = cls[i]! * forms.length + of[i]!;
      if (classOf[k] === -1) classOf[k] = next++;
      cls[i] = classOf[k]!;
    }
    count = next;
  }
  reps = new Int32Array(count).fill(-1);
  let filled = 0;
  for (let i = 0; i < n && filled < count; i++) {
    if (reps[cls[i]!] === -1) {
      reps[cls[i]!] = i;
      filled++;
    }
  }
  reps.sort();
  if (classesOf.size >= MAX_REMEMBERED) classesOf.clear();
  classesOf.set(key, reps);
  return reps;
}

/**
 * The forms made by the chains holding the CSV field's encoding: JSON nestings, the CSV field, JSON nestings (MAX_DEPTH
 * steps in all), applied to the value whole.
 */
function csvChainForms(value: string): string[] {
  const out: string[] = [];
  let before = [value];
  for (let a = 0; a < MAX_DEPTH; a++) {
    for (const x of before) {
      let after = [csvInnerQuotes(x)];
      out.push(...after);
      for (let b = a + 1; b < MAX_DEPTH; b++) {
        after = [...new Set(after.flatMap((y) => JSON_NESTING.map((encode) => encode(y))))];
        out.push(...after);
      }
    }
    before = [...new Set(before.flatMap((x) => JSON_NESTING.map((encode) => encode(x))))];
  }
  return out;
}

/** The password a URL parser holds (`new URL(…).password`: the URL standard's userinfo percent-encode set, `%` kept). */
function urlPassword(v: string): string {
  const u = new URL('http://x@h/');
  u.password = v;
  return u.password;
}

/**
 * What an echo may carry in base64 besides the value itself: the value JSON-escaped (a JSON document encoded whole: a
 * Kubernetes Secret's data, a JWT's payload), percent-encoded (a Basic header a service built from a URL's userinfo as
 * the parser holds it, or from a form), each as its most common writer writes it. Seven at most.
 */
const BASE64_SOURCES: readonly Encode[] = [
  (v) => v,
  jsonEscape,
  jsonEscapeAscii,
  uriComponent,
  (v) => percentEncode(v, RFC3986_KEEP, '%20'),
  (v) => percentEncode(v, FORM_KEEP, '+'),
  urlPassword,
];

/** A base64 form is at least this long (48 bits of the value): a shorter one could occur in any encoded text by chance. */
export const BASE64_MIN_FORM = 8;

/**
 * The value in base64, as an echo carries it: an `Authorization: Basic base64(user:password)` header a service, a proxy
 * or an HTTP library's error (axios' `toJSON()`) writes back, a value encoded alone, a value inside an encoded document.
 * Which characters stand for the value depends on how many bytes precede it in its group of three (its alignment), so
 * for each alignment: the characters made of the value's bits only (the characters at each end that mix in the bits of
 * what is around it are left: at most 4 bits of its first and of its last character), and, when the value ends the
 * encoded text (a Basic header's password, a value alone), up to its last character (the bits after it are zeros).
 * Standard alphabet; the URL-safe one (`-_`) for a form that differs, but for a value ending the text at alignment 1
 * or 2 (no Basic header is URL-safe). Padding (`=`) follows the value and tells nothing: not part of a form. These of
 * the value and of each of its BASE64_SOURCES that differs from it: at most 9 forms each, 63 in all, none for a value
 * whose forms would be shorter than BASE64_MIN_FORM. Not nested further (an encoded base64 is found by the redactor's
 * decoded views, src/util/decoded-views.ts).
 */
export function base64Forms(value: string): string[] {
  const forms = new Set<string>();
  for (const source of new Set(BASE64_SOURCES.map((encode) => encode(value)))) base64FormsOf(source, forms);
  return [...forms];
}

function base64FormsOf(value: string, forms: Set<string>): void {
  const bytes = Buffer.from(value.replace(LONE_SURROGATE, '\ufffd'), 'utf8');
  const add = (form: string, urlSafe: boolean): void => {
    if (form.length < BASE64_MIN_FORM) return;
    forms.add(form);
    if (urlSafe) forms.add(form.replace(/\+/g, '-').replace(/\//g, '_'));
  };
  for (let a = 0; a < 3; a++) {
    const encoded = Buffer.concat([Buffer.alloc(a), bytes]).toString('base64').replace(/=+$/, '');
    // character i holds bits [6i, 6i + 6); the value's bits are [8a, 8(a + n))
    const start = Math.ceil((8 * a) / 6);
    add(encoded.slice(start, Math.floor((8 * (a + bytes.length)) / 6)), true);
    add(encoded.slice(start), a === 0);
  }
}

/** A form with characters at its ends that are not the value's: found as a form, replaced without them. */
export interface FramedForm {
  form: string;
  /** How many characters at its start and at its end are the frame. */
  head: number;
  tail: number;
}

/**
 * A value whose first or last character is `"` in a CSV field (RFC 4180 doubles it: `"""v"`): the CSV form leaves that
 * `"` single (see REENCODING), so it covers one half of the doubled `""` and the other would be printed beside the
 * redaction, telling the value's first or last character. This form is the field's quote, that `""` and the rest of
 * the value doubled (the field's quote is the frame: three `"` together, which a JSON string's quote beside a decoded
 * `\"` of the value is not; a JSON string literal of the value inside a JSON string, decoded twice, is, and loses its
 * inner quote with it). None for a value not starting nor ending with `"`. Not nested (the decoded views read a CSV in
 * JSON, in HTML).
 */
export function csvFieldForms(value: string): FramedForm[] {
  const head = value.startsWith('"') ? 1 : 0;
  const tail = value.length > 1 && value.endsWith('"') ? 1 : 0;
  if (!head && !tail) return [];
  return [{ form: `${head ? '"' : ''}${value.replace(/"/g, '""')}${tail ? '"' : ''}`, head, tail }];
}

/** A byte-list form holds at least this many bytes of the value: a shorter list could be any numbers. */
export const BYTE_LIST_MIN_BYTES = 8;

/**
 * The value's UTF-8 bytes as a list, as a service logging the body it read as bytes writes it: Node's util.inspect of a
 * Buffer (`<Buffer 7b 22 70>`: lower-case hex, spaces), JSON.stringify of a Buffer (`"data":[123,34,112]`), Go's `%v`
 * of a []byte (`[123 34 112]`), Python's `list(body)` (`[123, 34, 112]`). Four forms, none for a value of fewer than
 * BYTE_LIST_MIN_BYTES bytes. Not nested in the other encodings (digits, spaces and commas: no escaper changes them).
 */
export function byteListForms(value: string): string[] {
  const bytes = [...Buffer.from(value.replace(LONE_SURROGATE, '\ufffd'), 'utf8')];
  if (bytes.length < BYTE_LIST_MIN_BYTES) return [];
  return [bytes.map((b) => b.toString(16).padStart(2, '0')).join(' '), bytes.join(' '), bytes.join(','), bytes.join(', ')];
}

/** A line of a multi-line value is a form of its own from this length, when it holds no whitespace. */
export const LINE_FORM_MIN = 16;

/**
 * The lines of a multi-line value (a PEM key, a token wrapped over lines), each with its forms (`secretForms`): printed
 * in a YAML block scalar or an indented log, each line is indented and the breaks may be other ones (`\r\n`), so the
 * value whole is not found. A line counts when it has at least LINE_FORM_MIN characters and no whitespace: a key's body,
 * not ordinary text (a sentence, a JSON line, the armour `-----BEGIN PRIVATE KEY-----`, which is the same in every
 * key). And each run of two or more lines without whitespace joined (a PEM's body, its short last line with it): the
 * redactor's `unwrap` view joins wrapped base64 lines again, indented or not. None for a value on one line.
 */
export function lineForms(value: string): string[] {
  if (!/[\r\n]/.test(value)) return [];
  const forms = new Set<string>();
  let run: string[] = [];
  const endRun = (): void => {
    const joined = run.join('');
    if (run.length > 1 && joined.length >= LINE_FORM_MIN) for (const f of secretForms(joined)) forms.add(f);
    run = [];
  };
  for (const line of value.split(/\r\n|\r|\n/)) {
    const t = line.trim();
    if (t === '' || /\s/.test(t)) {
      endRun();
      continue;
    }
    run.push(t);
    if (t.length >= LINE_FORM_MIN) for (const f of secretForms(t)) forms.add(f);
  }
  endRun();
  return [...forms];
}
