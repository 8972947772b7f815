/**
 * `.govopsignore`: gitignore-like patterns, one per line, relative to the folder holding the file.
 * Supported: `#` comments, blank lines, `name` (matches at any depth below), `dir/` (folders only),
 * `a/b` or `/a` (anchored to that folder), `*`, `?`, `**` globs, and `!pattern` to re-include.
 */
export const IGNORE_FILE = '.govopsignore';

export interface IgnoreRule {
  negate: boolean;
  dirOnly: boolean;
  anchored: boolean;
  regex: RegExp;
}

function globToRegex(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

export function parseIgnore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith('/');
    line = line.replace(/\/+$/, '');
    const anchored = line.includes('/');
    line = line.replace(/^\/+/, '');
    if (!line) continue;
    rules.push({ negate, dirOnly, anchored, regex: globToRegex(line) });
  }
  return rules;
}

/** Is `rel` (path relative to the rules' folder, `/`-separated) ignored? Last matching rule wins. */
export function isIgnored(rules: readonly IgnoreRule[], rel: string, isDir: boolean): boolean {
  let ignored = false;
  const base = rel.slice(rel.lastIndexOf('/') + 1);
  for (const r of rules) {
    if (r.dirOnly && !isDir) continue;
    if (r.regex.test(r.anchored ? rel : base)) ignored = !r.negate;
  }
  return ignored;
}
