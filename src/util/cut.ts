/**
 * Cutting text that came from outside (a service's message, a platform's answer, a delivery record, a command's
 * stderr) to a length.
 *
 * The redactor finds a secret by its whole value, in each of its forms: a cut through one leaves a part it cannot
 * recognise, and that part would be printed. So the text is redacted first and cut after, and the cut never falls
 * inside the `[redacted]` standing for a value (`[reda…` would read as the service's own text) nor between the two
 * halves of a surrogate pair.
 */
import { REDACTED, redactText } from './redact.js';

/** Where to cut `text` (redacted already) to keep at most `max` characters: never inside a `[redacted]` or a pair. */
export function cutPoint(text: string, max: number): number {
  if (text.length <= max) return text.length;
  let at = Math.max(0, max);
  // `[redacted]` cannot overlap itself: the last one starting before the cut is the only one it can split.
  const last = at > 0 ? text.lastIndexOf(REDACTED, at - 1) : -1;
  if (last >= 0 && last + REDACTED.length > at) at = last;
  const before = text.charCodeAt(at - 1);
  if (before >= 0xd800 && before <= 0xdbff) at--;
  return at;
}

/** The last `max` characters of `text` (redacted already) at most, never starting inside a `[redacted]` or a pair. */
export function lastChars(text: string, max: number): string {
  let from = text.length - Math.max(0, max);
  if (from <= 0) return text;
  const last = text.lastIndexOf(REDACTED, from - 1);
  if (last >= 0 && last + REDACTED.length > from) from = last + REDACTED.length;
  const first = text.charCodeAt(from);
  if (first >= 0xdc00 && first <= 0xdfff) from++;
  return text.slice(from);
}

/**
 * At most `max` characters of `text`, redacted already (see `redactThenCut`), then `more(n)` when n characters were
 * left out (`…` unless said otherwise).
 */
export function cutRedacted(text: string, max: number, more: (left: number) => string = () => '…'): string {
  const at = cutPoint(text, max);
  return at === text.length ? text : `${text.slice(0, at)}${more(text.length - at)}`;
}

/** `text` redacted, then cut to `max` characters (`more` as for `cutRedacted`). */
export function redactThenCut(text: string, max: number, more?: (left: number) => string): string {
  return cutRedacted(redactText(text), max, more);
}

/** Characters of a value from a manifest that a message quotes at most: the rest is counted, not repeated. */
export const MAX_QUOTED = 200;

/**
 * A value from a manifest as a message quotes it: whole when short, else cut (redacted first) with the count of what
 * was left out. A name or value as long as its file (1 MiB) was repeated in each of its diagnostics, in full.
 */
export function quotedPart(text: string): string {
  return text.length <= MAX_QUOTED ? text : redactThenCut(text, MAX_QUOTED, (n) => `… (${n} more characters)`);
}
