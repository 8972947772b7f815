/**
 * JSON as the service sends it, with every digit of its ids kept. Webhook and history ids are JSON integers
 * (interface 2.12, 2.13) and the status body's id is a number (2.2): JSON.parse reads an integer past 2^53 as the
 * nearest double (9007199254740993 → 9007199254740992), and a DELETE by that rounded id removes another webhook.
 * Such an integer, as the value of an id key (`id`, or a name ending in `Id`), is read as its digits (a string:
 * ids are strings in govops). Other numbers are left to JSON.parse.
 */
/** An id key followed by an integer long enough to be past 2^53 (16 digits): the only bodies scanned. */
const LONG_ID = /(?:"id"|Id")\s*:\s*-?\d{16}/;
const ID_KEY = /^(?:id|.+Id)$/;
const INTEGER = /^-?\d{16,}$/;

/** The literal is an integer JSON.parse would round (past Number.MAX_SAFE_INTEGER). */
export function unsafeIntegerLiteral(literal: string): boolean {
  return INTEGER.test(literal) && !Number.isSafeInteger(Number(literal));
}

/** JSON.parse of a service's body (undefined when empty), ids past 2^53 kept as their digits. */
export function parseWireJson(text: string): unknown {
  if (text === '') return undefined;
  return JSON.parse(LONG_ID.test(text) ? quoteLongIds(text) : text);
}

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const MINUS = 45;

/** Index just past the string that opens at `i` (a quote), or -1. */
export function endOfString(t: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = t.indexOf('"', j);
    if (q < 0) return -1;
    let bs = 0;
    for (let k = q - 1; t.charCodeAt(k) === BACKSLASH; k--) bs++;
    if (bs % 2 === 0) return q + 1;
    j = q + 1;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === MINUS || c === 43 || c === 46 || c === 69 || c === 101; // 0-9 - + . E e
}

/** The text with each long integer that is an id key's value put in quotes; anything malformed is left for JSON.parse. */
function quoteLongIds(t: string): string {
  let out = '';
  let from = 0;
  let lastString = '';
  let key: string | undefined;
  for (let i = 0; i < t.length; ) {
    const c = t.charCodeAt(i);
    if (c === QUOTE) {
      const end = endOfString(t, i);
      if (end < 0) break;
      lastString = t.slice(i + 1, end - 1);
      key = undefined;
      i = end;
    } else if (c === COLON) {
      key = lastString;
      i++;
    } else if (c === 32 || c === 10 || c === 13 || c === 9) {
      i++;
    } else if (isNumberChar(c)) {
      let j = i + 1;
      while (j < t.length && isNumberChar(t.charCodeAt(j))) j++;
      const literal = t.slice(i, j);
      if (key !== undefined && ID_KEY.test(key) && unsafeIntegerLiteral(literal)) {
        out += `${t.slice(from, i)}"${literal}"`;
        from = j;
      }
      key = undefined;
      i = j;
    } else {
      key = undefined;
      i++;
    }
  }
  return out + t.slice(from);
}
