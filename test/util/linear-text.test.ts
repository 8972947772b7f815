/**
 * Text that less-trusted people (manifests, a pull request's .gitmodules) or the service (scripts, live locations)
 * write is read in linear time: each replacement of a regular expression that backtracked quadratically gives what
 * the expression gave (property tests), and a large crafted input is read at once (each took minutes before).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGitmodules } from '../../src/manifests/discover.js';
import { fenceFor, renderManualStep } from '../../src/preview/render-manual.js';
import { prefixUnderLocation } from '../../src/service/data-sources.js';
import { withoutTrailingSlashes } from '../../src/util/strings.js';

/**
 * parseGitmodules as first written, but for one case: a value of spaces only, which the expression read as one of
 * those spaces (a submodule at ` `) and Git reads as empty (values are trimmed): no path now.
 */
function gitmodulesByRegex(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*path\s*=\s*(.+?)\s*$/.exec(line);
    if (m && m[1]!.trim() !== '') out.push(m[1]!.replace(/^"(.*)"$/, '$1'));
  }
  return out;
}

const MB = 1_000_000;

describe('linear reading of untrusted text', () => {
  it('withoutTrailingSlashes is `replace(/\\/+$/, "")`', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('/', 'a', ':', ' ', 's3://b'), { maxLength: 20 }).map((p) => p.join('')), (s) => {
        expect(withoutTrailingSlashes(s)).toBe(s.replace(/\/+$/, ''));
      }),
      { numRuns: 5000 },
    );
  });

  it('parseGitmodules reads what the expression read (random lines, spaces of every kind, quotes, line breaks)', () => {
    const piece = fc.constantFrom('path', ' path', 'path ', '=', ' = ', ' ', '\t', '\u00a0', '\u2028', '\r', '\r\n', '\n', '"', 'sub/dir', 'x', '[submodule "a"]');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }).map((p) => p.join('')), (text) => {
        expect(parseGitmodules(text)).toEqual(gitmodulesByRegex(text));
      }),
      { numRuns: 10_000 },
    );
  });

  it('trimEnd is `replace(/\\s+$/, "")` for a script', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\ufeff', 'x', ';'), { maxLength: 20 }).map((p) => p.join('')), (s) => {
        expect(s.trimEnd()).toBe(s.replace(/\s+$/, ''));
      }),
      { numRuns: 5000 },
    );
  });

  it('a megabyte of crafted input in each is read at once', () => {
    expect(parseGitmodules(`path = a${' '.repeat(MB)}b\npath = sub`)).toEqual([`a${' '.repeat(MB)}b`, 'sub']);
    const slashes = `s3://bucket/a${'/'.repeat(MB)}x`;
    expect(prefixUnderLocation(slashes, `${slashes}/data`)).toBe(true);
    expect(withoutTrailingSlashes(`a${'/'.repeat(MB)}`)).toBe('a');
    const script = `GRANT${' '.repeat(MB)};${' '.repeat(MB)}`;
    const lines = renderManualStep('lake', { phase: 'create', script, command: 'govops scripts lake', language: 'sql' } as never);
    expect(lines).toContain(`GRANT${' '.repeat(MB)};`);
    expect(fenceFor('`'.repeat(3) + ' x`'.repeat(300_000))).toBe('````');
  });
});
