/** Finding our comment among a pull request's comments, and keeping a body within the platform's limit (pure). */
import { cutPoint } from '../util/cut.js';

export interface ExistingComment {
  id: string;
  body: string;
  author?: string;
}

/** The body starts with the marker (leading blank space allowed). */
export function hasMarker(body: string, marker: string): boolean {
  return body.trimStart().startsWith(marker);
}

/** The comment starts with the marker (leading blank space allowed) and, when given, is by `author`. */
export function isOurs(c: ExistingComment, marker: string, author: string | undefined): boolean {
  if (!hasMarker(c.body, marker)) return false;
  return author === undefined || author === '' || c.author?.toLowerCase() === author.toLowerCase();
}

/** The first (oldest) comment that is ours: editing it keeps the comment where reviewers first saw it. */
export function findOurs<C extends ExistingComment>(comments: readonly C[], marker: string, author?: string): C | undefined {
  return comments.find((c) => isOurs(c, marker, author));
}

/**
 * Our marked comments after the oldest: two runs that both found none (a push right after the pull request was
 * opened) each post one, and only the oldest is edited after that: the other would show an old preview for good.
 * Only with an author (without one, a marked comment may be anyone's), and at most `MAX_EXTRA_DELETES`.
 */
export function extraOfOurs<C extends ExistingComment>(comments: readonly C[], kept: C, marker: string, author?: string): C[] {
  if (author === undefined || author === '') return [];
  return comments.filter((c) => c !== kept && isOurs(c, marker, author)).slice(0, MAX_EXTRA_DELETES);
}

/** Duplicates of our comment deleted in one run at most (best effort: the next run deletes more). */
export const MAX_EXTRA_DELETES = 10;

/** Pages of comments (or notes) read at most, 100 each: a marker beyond them is not looked for (a new comment is made). */
export const MAX_COMMENT_PAGES = 100;

/** GitHub rejects a comment body longer than 65,536 characters. */
export const GITHUB_BODY_LIMIT = 65_536;
/** GitLab's note limit (1,000,000 characters). */
export const GITLAB_BODY_LIMIT = 1_000_000;

/**
 * What is still open at the end of `text`: a code fence (the line that closes it: the same character, as long) and
 * `<details>` blocks outside code (a cut inside one would hide the note in a collapsed block).
 */
function closers(text: string): string {
  let fence: string | undefined;
  let details = 0;
  for (const line of text.split('\n')) {
    if (fence !== undefined) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)?.[1];
      if (close !== undefined && close[0] === fence[0] && close.length >= fence.length) fence = undefined;
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !(open[1]!.startsWith('`') && open[2]!.includes('`'))) {
      fence = open[1]!;
      continue;
    }
    details = Math.max(0, details + (line.match(/<details\b/gi)?.length ?? 0) - (line.match(/<\/details\s*>/gi)?.length ?? 0));
  }
  return `${fence !== undefined ? `\n${fence}` : ''}${'\n</details>'.repeat(details)}`;
}

/** Where to cut `text` to keep at most `max` characters, at the end of a line when one ends in the last 2,000. */
function cutAt(text: string, max: number): number {
  const at = cutPoint(text, max);
  if (at >= text.length || text[at] === '\n') return at;
  // a newline is never inside a `[redacted]` nor a surrogate pair; a whole line leaves no half tag, entity or fence
  const nl = text.lastIndexOf('\n', at - 1);
  return nl > 0 && at - nl <= 2000 ? nl : at;
}

/**
 * The body (redacted already: src/util/cut.ts), cut to `limit` characters with a note when longer (the preview
 * already stays within the limit; this guards any other body), never inside a `[redacted]`, at the end of a line,
 * with the code fence and the `<details>` blocks left open there closed, so the note is text, seen. The marker stays
 * on the first line, so the comment is still found.
 */
export function fitBody(body: string, marker: string, limit: number): string {
  const withMarker = body.trimStart().startsWith(marker) ? body : `${marker}\n${body}`;
  if (withMarker.length <= limit) return withMarker;
  const note = '\n\n_(cut: the body was longer than the platform allows; see the CI job for the full text)_\n';
  let budget = limit - note.length;
  for (;;) {
    const cut = withMarker.slice(0, cutAt(withMarker, Math.max(0, budget)));
    const tail = closers(cut);
    const over = cut.length + tail.length + note.length - limit;
    if (over <= 0 || budget <= 0) return cut + tail + note;
    budget -= over;
  }
}
