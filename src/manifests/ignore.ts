/**
 * `.govopsignore`: gitignore patterns, one per line, relative to the folder holding the file, matched
 * by the `ignore` package (the gitignore specification: `#` comments, `!` re-includes, `dir/` folders
 * only, `/a` and `a/b` anchored, `*`, `?`, `**`, `[...]` classes and `\` escapes).
 *
 * The package is loaded with `require` when the first ignore file is parsed, not imported: it is CommonJS,
 * and Node's ESM import of it runs the CommonJS export scan over its 50 KB of regular expressions, ~30 ms of
 * CPU at every start (issue #26); `require` costs ~2 ms, and a run without any .govopsignore pays nothing.
 */
import { createRequire } from 'node:module';
import type { Ignore, Options } from 'ignore';

export const IGNORE_FILE = '.govopsignore';

export type IgnoreRules = Ignore;

let make: ((options?: Options) => Ignore) | undefined;

export function parseIgnore(text: string): IgnoreRules {
  make ??= createRequire(import.meta.url)('ignore') as (options?: Options) => Ignore;
  return make({ ignorecase: false }).add(text);
}

/** Is `rel` (path relative to the rules' folder, `/`-separated) ignored? Last matching rule wins. */
export function isIgnored(rules: IgnoreRules, rel: string, isDir: boolean): boolean {
  return rules.ignores(isDir ? `${rel}/` : rel);
}
