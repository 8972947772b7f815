/**
 * The one neutraliser of untrusted text in Markdown (the preview comment, `plan -o markdown`, the apply summary):
 * file names, resource names, service messages and revisions come from a pull request or the service. Whatever
 * they hold, they render as the text they are: no `@mention` (or `#123` reference) notifies anyone, no HTML,
 * link or autolink is made, no pipe breaks a table, no backtick or fence closes a code span or block, and no
 * control character survives (src/util/terminal.ts). Each function redacts first (src/util/redact.ts): the
 * redactor at the output boundary knows a secret's encodings, not these escapes of them. Each context has its function:
 * - `mdText`: Markdown text (a table cell, a list item, a quote);
 * - `mdHtml`: text inside raw HTML (`<summary>`, `<code>`), where backslash escapes would show;
 * - `mdCode`: an inline code span;
 * - `mdFenced`: lines inside a fenced code block.
 */
import { redactText } from './redact.js';
import { printable, printableLines } from './terminal.js';

const entities = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A zero-width space (as an entity, visible in the source) after the characters that start a mention, a
 * reference or an autolink: `@octo-org`, `#12`, `https://`, `www.` render as text and link nowhere.
 */
const unlink = (s: string): string =>
  s
    .replace(/#(?=\d)/g, '#&#8203;') // first: the entities below hold `#8`
    .replace(/@/g, '@&#8203;')
    .replace(/:\/\//g, ':&#8203;//')
    .replace(/\b(www)\./gi, '$1&#8203;.');

/**
 * Markdown text: HTML as entities; backslashes, backticks (code spans), brackets (links, images) and pipes
 * (tables) escaped; line breaks shown as `\n`. Emphasis characters (`*`, `_`) are left: they can only style.
 */
export function mdText(s: string): string {
  return unlink(entities(printable(redactText(s))).replace(/[\\`[\]|]/g, '\\$&'));
}

/** Text inside raw HTML. */
export function mdHtml(s: string): string {
  return unlink(entities(printable(redactText(s))).replace(/"/g, '&quot;'));
}

/** An inline code span of `s` (mentions and links are not made in code; its pipes are escaped for tables). */
export function mdCode(s: string): string {
  return `\`${printable(redactText(s)).replace(/`/g, "'").replace(/\|/g, '\\|')}\``;
}

/** Lines for a fenced code block: it cannot be closed early; line breaks kept. */
export function mdFenced(s: string): string {
  return printableLines(s).replace(/```/g, "'''").replace(/~~~/g, "'''");
}
