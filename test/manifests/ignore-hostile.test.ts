/**
 * A `.govopsignore` is written by whoever commits (a pull request too), and its patterns are matched against every
 * path of the tree. The `ignore` package compiles a `**` between two segments into a group that backtracks: each more
 * of them multiplies the work by the depth of the path (one line with twelve of them against a 40-folder path ran for
 * hours, blocking the daemon's event loop or the CI job). The work is bounded: at most one such `**` a pattern, at most
 * 1,000 patterns in the ignore files of a tree together, at most 64 folders deep; past a bound the file (or the
 * folder) is an error, not read.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findManifestFiles, MAX_FOLDER_DEPTH, MAX_IGNORE_PATTERNS } from '../../src/manifests/discover.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'govops-ignore-'));
  dirs.push(d);
  return d;
}

/** A chain of `depth` folders named `a` under `root`, with a manifest at its bottom; the bottom folder. */
async function chain(root: string, depth: number): Promise<string> {
  const bottom = join(root, ...Array.from({ length: depth }, () => 'a'));
  await mkdir(bottom, { recursive: true });
  await writeFile(join(bottom, 'x.yaml'), 'kind: Webhook\n');
  return bottom;
}

describe('a hostile .govopsignore', () => {
  it('a pattern with more than one `**` between segments is an error at the file, not matched', async () => {
    const d = await tmp();
    await chain(d, 40);
    // six of them: ~0.3 s for this tree with the old code, each more ~10x (twelve: hours)
    await writeFile(join(d, '.govopsignore'), `# ok\nkeep/**/old\n${Array(6).fill('a').join('/**/')}/**/b\n`);
    const found = await findManifestFiles(['.'], d);
    expect(found.problems.map((p) => [p.path, p.message])).toEqual([
      [join(d, '.govopsignore'), expect.stringMatching(/^line 3: more than one `\*\*` between folders \(a\/\*\*\/a\/\*\*\/a.*\): not read/)],
    ]);
  });

  it(`more than ${MAX_IGNORE_PATTERNS} patterns (in one file, or in the files of a tree together) is an error at the file, not matched`, async () => {
    const d = await tmp();
    await chain(d, 3);
    const lines = Array.from({ length: MAX_IGNORE_PATTERNS + 1 }, (_, i) => `zz${i}/x`);
    await writeFile(join(d, '.govopsignore'), `# many\n\n${lines.join('\n')}\n`);
    const found = await findManifestFiles(['.'], d);
    expect(found.problems.map((p) => p.message)).toEqual([expect.stringMatching(new RegExp(`^more than ${MAX_IGNORE_PATTERNS} patterns: not read`))]);
    // at the limit it is read
    await writeFile(join(d, '.govopsignore'), `${lines.slice(1).join('\n')}\n`);
    expect((await findManifestFiles(['.'], d)).problems).toEqual([]);
    // the files of one tree count together: each folder's patterns apply to every path below it (64 nested files of
    // 1,000 patterns each took 80 s over 2,000 manifests)
    await writeFile(join(d, '.govopsignore'), `${lines.slice(0, 600).join('\n')}\n`);
    await writeFile(join(d, 'a', '.govopsignore'), `${lines.slice(600, 1200).join('\n')}\n`);
    const nested = await findManifestFiles(['.'], d);
    expect(nested.problems.map((p) => [p.path, p.message])).toEqual([
      [join(d, 'a', '.govopsignore'), expect.stringMatching(new RegExp(`^more than ${MAX_IGNORE_PATTERNS} patterns with the other .govopsignore files read: not read`))],
    ]);
  });

  it(`folders nested more than ${MAX_FOLDER_DEPTH} deep are an error, not walked`, async () => {
    const d = await tmp();
    await chain(d, MAX_FOLDER_DEPTH + 3);
    const found = await findManifestFiles(['.'], d);
    expect(found.files).toEqual([]);
    expect(found.problems).toEqual([
      { path: join(d, ...Array.from({ length: MAX_FOLDER_DEPTH + 1 }, () => 'a')), message: expect.stringMatching(new RegExp(`nested more than ${MAX_FOLDER_DEPTH} folders deep`)) },
    ]);
    // at the limit the manifest is found
    const e = await tmp();
    const bottom = await chain(e, MAX_FOLDER_DEPTH);
    expect((await findManifestFiles(['.'], e)).files).toEqual([join(bottom, 'x.yaml')]);
  });

  it('ordinary patterns still apply: one `**` between folders, leading and trailing ones', async () => {
    const d = await tmp();
    await chain(d, 4);
    await mkdir(join(d, 'keep', 'x', 'old'), { recursive: true });
    await writeFile(join(d, 'keep', 'x', 'old', 'o.yaml'), 'kind: Webhook\n');
    await writeFile(join(d, 'keep', 'k.yaml'), 'kind: Webhook\n');
    await writeFile(join(d, '.govopsignore'), 'keep/**/old\n**/a/a/a/a/**\n');
    const found = await findManifestFiles(['.'], d);
    expect(found.problems).toEqual([]);
    expect(found.files).toEqual([join(d, 'keep', 'k.yaml')]);
  });
});
