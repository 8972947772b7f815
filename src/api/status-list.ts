/**
 * GET /integrations read for ids and statuses only (the status poller, issue #26): a scan of the body that
 * decodes each item's top-level `id` and `status` and skips everything else without building it. A list of
 * 10,000 integrations is ~4 MB; JSON.parse of it built every config only to drop it.
 *
 * Same result as `JSON.parse` then `toStatus` per item (a property test pins it). Anything the scan does not
 * expect (not an array of objects, malformed JSON) returns undefined: the caller parses the whole body then,
 * so its errors stay those of JSON.parse.
 */
import type { IntegrationStatus } from './types.js';
import { toStatus } from './normalize.js';
import { endOfString, unsafeIntegerLiteral } from './wire-json.js';

const QUOTE = 34; // "
const COMMA = 44;
const COLON = 58;
const OPEN_OBJ = 123;
const CLOSE_OBJ = 125;
const OPEN_ARR = 91;
const CLOSE_ARR = 93;

function skipWs(t: string, i: number): number {
  for (;;) {
    const c = t.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

/** Index just past the value that starts at `i`, or -1. */
function endOfValue(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === QUOTE) return endOfString(t, i);
  if (c !== OPEN_OBJ && c !== OPEN_ARR) {
    // number, true, false, null: up to the next delimiter
    let j = i;
    for (;;) {
      const d = t.charCodeAt(j);
      if (Number.isNaN(d) || d === COMMA || d === CLOSE_OBJ || d === CLOSE_ARR || d === 32 || d === 10 || d === 13 || d === 9) break;
      j++;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  let j = i;
  for (;;) {
    const d = t.charCodeAt(j);
    if (Number.isNaN(d)) return -1;
    if (d === QUOTE) {
      j = endOfString(t, j);
      if (j < 0) return -1;
      continue;
    }
    if (d === OPEN_OBJ || d === OPEN_ARR) depth++;
    else if (d === CLOSE_OBJ || d === CLOSE_ARR) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
}

/** The id and status of every item of a GET /integrations body, or undefined when the scan cannot read it. */
export function scanStatuses(text: string): IntegrationStatus[] | undefined {
  try {
    return scan(text);
  } catch {
    return undefined; // a token JSON.parse refused: the caller's full parse reports it
  }
}

function scan(t: string): IntegrationStatus[] | undefined {
  const out: IntegrationStatus[] = [];
  let i = skipWs(t, 0);
  if (t.charCodeAt(i) !== OPEN_ARR) return undefined;
  i = skipWs(t, i + 1);
  if (t.charCodeAt(i) === CLOSE_ARR) return skipWs(t, i + 1) === t.length ? out : undefined;
  for (;;) {
    if (t.charCodeAt(i) !== OPEN_OBJ) return undefined;
    const item: { id?: unknown; status?: unknown } = {};
    i = skipWs(t, i + 1);
    if (t.charCodeAt(i) === CLOSE_OBJ) i++;
    else {
      for (;;) {
        if (t.charCodeAt(i) !== QUOTE) return undefined;
        const keyEnd = endOfString(t, i);
        if (keyEnd < 0) return undefined;
        const rawKey = t.slice(i, keyEnd);
        const key = rawKey.includes('\\') ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1);
        i = skipWs(t, keyEnd);
        if (t.charCodeAt(i) !== COLON) return undefined;
        i = skipWs(t, i + 1);
        const end = endOfValue(t, i);
        if (end < 0) return undefined;
        if (key === 'id' || key === 'status') {
          const literal = t.slice(i, end);
          // an id past 2^53 kept as its digits, as parseWireJson reads it (src/api/wire-json.ts)
          item[key] = key === 'id' && unsafeIntegerLiteral(literal) ? literal : (JSON.parse(literal) as unknown);
        }
        i = skipWs(t, end);
        const c = t.charCodeAt(i);
        if (c === CLOSE_OBJ) {
          i++;
          break;
        }
        if (c !== COMMA) return undefined;
        i = skipWs(t, i + 1);
      }
    }
    out.push(toStatus(item));
    i = skipWs(t, i);
    const c = t.charCodeAt(i);
    if (c === CLOSE_ARR) return skipWs(t, i + 1) === t.length ? out : undefined;
    if (c !== COMMA) return undefined;
    i = skipWs(t, i + 1);
  }
}
