/**
 * URL userinfo (`scheme://user:password@`) found in time linear in the text. What the redactor once did with
 * `/\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s"'<>]+@/gi`, which backtracks: from each word start in a run such as `a.a.a.a`
 * it scans the whole run looking for `://`, so 80 KB of it took 1.6 s and a 1 MB manifest value minutes (manifests
 * are written by people less trusted than the operator, and their values reach the plan output). Here each `://`
 * is found once and the scheme before it and the userinfo after it are read once: the same matches (a property test
 * pins this function to the expression), but for one change: the userinfo runs to the last `@` of the run
 * (`(?:[^/@\s"'<>]*@)*` after it), as a URL parser reads it, so a password holding an unencoded `@`
 * (`https://user:p@ss@host`) is dropped whole, not printed from its first `@` on. And one more: a password holding an
 * unencoded `/` (`https://user:pa/ss@host`, which git prints as it is) is dropped too, up to the last `@` of the
 * stretch (`passwordBeforeSlash`); so is a password of digits no port can be (`https://user:123456/pa@host`, or with no
 * `@` at all: `https://user:123456/path`, up to the digits' end).
 */

const AT = 64; // @
const SLASH = 47; // /

/** [A-Za-z0-9+.-]: a scheme's characters. */
function isSchemeChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 46 || c === 45;
}

function isLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

/** A word character of `\b` (without the `u` flag): [A-Za-z0-9_]. */
function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** `\s` of JavaScript's regular expressions. */
function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** [^/@\s"'<>]: a userinfo character. */
function isUserinfoChar(c: number): boolean {
  return !(c === 47 || c === AT || c === 34 || c === 39 || c === 60 || c === 62 || isSpace(c));
}

/**
 * Each URL userinfo in the text, left to right: where it starts (just past its `://`) and just past its `@`. A scheme
 * never starts inside a match before it, as with a global expression's `lastIndex`.
 */
function* userinfoSpans(text: string): Generator<{ userinfoStart: number; end: number }> {
  let done = 0;
  let from = 0;
  // The last stretch read for a password holding a `/` (below): where it ends, and its last `@` (-1: none). A later
  // `://` inside it finds the same end, so no character is read twice.
  let stretchEnd = -1;
  let stretchLastAt = -1;
  for (;;) {
    const at = text.indexOf('://', from);
    if (at < 0) return;
    // The scheme: a letter at a word start, then scheme characters up to the `://`.
    let runStart = at;
    while (runStart > done && isSchemeChar(text.charCodeAt(runStart - 1))) runStart--;
    let hasStart = false;
    for (let k = runStart; k < at && !hasStart; k++) {
      hasStart = isLetter(text.charCodeAt(k)) && (k === 0 || !isWordChar(text.charCodeAt(k - 1)));
    }
    // The userinfo: one or more of its characters, then `@`; up to the last `@` of the run (a password holding an
    // unencoded `@`, `https://u:p@ss@host`, ends where a URL parser ends it: at the last one).
    let j = at + 3;
    while (j < text.length && isUserinfoChar(text.charCodeAt(j))) j++;
    if (hasStart && j > at + 3 && text.charCodeAt(j) === AT) {
      for (let k = j + 1; k < text.length; k++) {
        const c = text.charCodeAt(k);
        if (c === AT) j = k;
        else if (!isUserinfoChar(c)) break;
      }
      yield { userinfoStart: at + 3, end: j + 1 };
      done = from = j + 1;
    } else if (hasStart && text.charCodeAt(j) === SLASH && passwordBeforeSlash(text, at + 3, j) !== undefined) {
      // `https://user:pa/ss@host`: a password holding an unencoded `/`. No URL parser reads it so (the `/` ends the
      // authority: host `user`, port `pa`), and so git leaves it as it is in `unable to access '…'`: the userinfo runs
      // to the last `@` of the stretch, host and path with it when they hold one.
      if (j >= stretchEnd) {
        stretchLastAt = -1;
        let k = j;
        for (; k < text.length; k++) {
          const c = text.charCodeAt(k);
          if (c === AT) stretchLastAt = k;
          else if (c !== SLASH && !isUserinfoChar(c)) break;
        }
        stretchEnd = k;
      }
      if (stretchLastAt > j) {
        yield { userinfoStart: at + 3, end: stretchLastAt + 1 };
        done = from = stretchLastAt + 1;
      } else if (passwordBeforeSlash(text, at + 3, j) === 'not-a-port') {
        yield { userinfoStart: at + 3, end: j };
        done = from = j;
      } else {
        from = at + 1;
      }
    } else if (hasStart && passwordBeforeSlash(text, at + 3, j) === 'not-a-port') {
      // `https://user:123456`: no host, and digits no port can be (git prints it in `unable to access '…'`)
      yield { userinfoStart: at + 3, end: j };
      done = from = j;
    } else {
      from = at + 1;
    }
  }
}

/**
 * text[start, end) (up to a `/`, or to the end of the authority) is `user:password`, not `host:port`: something after
 * its last `:` is not a digit (`password`), or its digits are no port, above 65535 (`not-a-port`: `user:123456`, a
 * password of digits only; a URL parser refuses it as a port). Undefined for a port, or no `:`. An IPv6 literal
 * (`[::1]:8080`) is a host. A password of 65535 or less before a `/` reads as a port (`host:8080/@scope/pkg` is a URL).
 */
function passwordBeforeSlash(text: string, start: number, end: number): 'password' | 'not-a-port' | undefined {
  if (text.charCodeAt(start) === 91) return undefined; // [
  let colon = end - 1;
  while (colon >= start && text.charCodeAt(colon) !== 58) colon--; // :
  if (colon < start) return undefined;
  let digits = 0;
  for (let k = colon + 1; k < end; k++) {
    const c = text.charCodeAt(k);
    if (c < 48 || c > 57) return 'password';
    // the value's digits, leading zeros left out (`00443` is port 443); six of them or 65536..99999 are no port
    if (digits > 0 || c !== 48) digits++;
  }
  if (digits > 5 || (digits === 5 && Number(text.slice(end - 5, end)) > 65535)) return 'not-a-port';
  return undefined;
}

/** The text holds URL userinfo somewhere. */
export function hasUrlUserinfo(text: string): boolean {
  return text.includes('://') && !userinfoSpans(text).next().done;
}

/** Each URL userinfo replaced by `***` (`https://***@host`). */
export function dropUrlUserinfo(text: string): string {
  if (!text.includes('://')) return text;
  let out = '';
  let done = 0;
  for (const s of userinfoSpans(text)) {
    out += `${text.slice(done, s.userinfoStart)}***@`;
    done = s.end;
  }
  return done === 0 ? text : out + text.slice(done);
}

/**
 * Where each URL userinfo is: [start, end) of `user:password`, its `@` left out (a decoded view's, for the redactor).
 * One already dropped (`***`, dropUrlUserinfo's) is not one: the text's own URLs were dropped before their views are read.
 */
export function urlUserinfoRanges(text: string): Array<[number, number]> {
  if (!text.includes('://')) return [];
  const ranges: Array<[number, number]> = [];
  for (const s of userinfoSpans(text)) {
    const end = text.charCodeAt(s.end - 1) === AT ? s.end - 1 : s.end;
    if (text.slice(s.userinfoStart, end) !== '***') ranges.push([s.userinfoStart, end]);
  }
  return ranges;
}
