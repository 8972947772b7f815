/**
 * `.govopsignore`: gitignore patterns, one per line, relative to the folder holding the file, matched
 * by the `ignore` package (the gitignore specification: `#` comments, `!` re-includes, `dir/` folders
 * only, `/a` and `a/b` anchored, `*`, `?`, `**`, `[...]` classes and `\` escapes).
 */
import ignore, { type Ignore } from 'ignore';

export const IGNORE_FILE = '.govopsignore';

export type IgnoreRules = Ignore;

export function parseIgnore(text: string): IgnoreRules {
  return ignore({ ignorecase: false }).add(text);
}

/** Is `rel` (path relative to the rules' folder, `/`-separated) ignored? Last matching rule wins. */
export function isIgnored(rules: IgnoreRules, rel: string, isDir: boolean): boolean {
  return rules.ignores(isDir ? `${rel}/` : rel);
}
