/**
 * Keeping the comment under the platform's limit (GitHub: 65,536 characters) by shortening details, never
 * the summary (pure). The comment is a fixed head (marker, facts, summary, status) followed by sections in
 * priority order; each section is a list of self-contained items (a table row, a collapsed block). A section
 * takes as many whole items as fit, then says how many it left out; every later section keeps at least its
 * short form (a title and a count), so nothing disappears without a trace.
 */

export interface Section {
  /** Lines before the items (a heading, a table header). */
  head: string[];
  /** Self-contained Markdown items, most important first. */
  items: string[];
  /** Lines after the items (closing a table or a block). */
  tail?: string[];
  /** The line that replaces the items left out. */
  more: (left: number) => string;
  /** What stands in for the whole section when not even one item fits. */
  short: string[];
  /** At most this many characters, so one long section (hundreds of warnings) leaves room for the others. */
  max?: number;
}

/** GitHub's limit, less a margin for what a CI step may add around the comment. */
export const COMMENT_LIMIT = 65_000;

const size = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length + 1, 0);

function render(s: Section, budget: number): string[] {
  if (s.items.length === 0) return [...s.head, ...(s.tail ?? [])];
  const fixed = size(s.head) + size(s.tail ?? []);
  const out: string[] = [];
  let used = fixed;
  let taken = 0;
  for (const item of s.items) {
    const left = s.items.length - taken - 1;
    const reserve = left > 0 ? s.more(left).length + 1 : 0;
    if (used + item.length + 1 + reserve > budget) break;
    out.push(item);
    used += item.length + 1;
    taken++;
  }
  if (taken === 0) return size(s.short) <= budget ? [...s.short] : [];
  if (taken < s.items.length) out.push(s.more(s.items.length - taken));
  return [...s.head, ...out, ...(s.tail ?? [])];
}

export function fitComment(head: readonly string[], sections: readonly Section[], limit = COMMENT_LIMIT): string {
  const out = [...head];
  let used = size(head);
  let reserved = sections.reduce((n, s) => n + size(s.short), 0);
  for (const s of sections) {
    reserved -= size(s.short);
    const lines = render(s, Math.min(limit - used - reserved, s.max ?? Infinity));
    out.push(...lines);
    used += size(lines);
  }
  return `${out.join('\n').trimEnd()}\n`;
}
