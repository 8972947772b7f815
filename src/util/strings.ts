/** Small string helpers. */

/**
 * Trailing slashes trimmed in one pass from the end. `s.replace(/\/+$/, '')` is not: unanchored at the start, it tries every
 * position inside a run of slashes and scans the run from each (a `cloudLocationPath` of 100,000 slashes, which a
 * manifest may hold, took 3.5 s; the same from the service, in a live list).
 */
export function withoutTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 47) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** `s` as a regular expression matching exactly it. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * `word` after its indefinite article: "an object_store", "a lakehouse", "an Integration", "a Webhook". By the first
 * letter (every type and kind name govops prints is an English word or a snake_case one; none starts with a silent
 * or a "you" sound).
 */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

/** withArticle at the start of a sentence: "An object_store", "A lakehouse". */
export function withCapitalArticle(word: string): string {
  const w = withArticle(word);
  return w.charAt(0).toUpperCase() + w.slice(1);
}

const spellings = new WeakMap<readonly string[], Map<string, string | null>>();

/**
 * `v` as `values` spell it when it names exactly one of them in another case (`USERPASSWORD` → `userPassword`: a
 * service writing its enum constants' names); otherwise `v` as it is (no match, or two values that differ only by case).
 */
export function spelledAs(values: readonly string[], v: string): string {
  let byLower = spellings.get(values);
  if (!byLower) {
    byLower = new Map();
    for (const x of values) byLower.set(x.toLowerCase(), byLower.has(x.toLowerCase()) ? null : x);
    spellings.set(values, byLower);
  }
  return byLower.get(v.toLowerCase()) ?? v;
}
