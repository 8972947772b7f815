/**
 * Writing an export (`commitExport`): the files are written and placed many at a time, and the folder still gets
 * all of them or none of the new ones, in a stable order, whatever finishes first.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitExport, ENV_TEMPLATE, prepareExport } from '../../src/export/write.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-commit-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const files = (n: number): Map<string, string> => {
  const m = new Map<string, string>();
  for (let i = 0; i < n; i++) m.set(`webhook-${String(i).padStart(3, '0')}.yaml`, `# ${i}\n`);
  m.set(ENV_TEMPLATE, 'GOVOPS_SECRET_X=\n');
  return m;
};

describe('commitExport', () => {
  it('writes every file, and returns them in the order of the export with the env template last', async () => {
    const out = path.join(dir, 'out');
    const wanted = files(200);
    const written = await commitExport(await prepareExport(out, wanted, false));
    expect(written).toEqual([...[...wanted.keys()].filter((n) => n !== ENV_TEMPLATE), ENV_TEMPLATE].map((n) => path.join(out, n)));
    expect((await readdir(out)).sort()).toEqual([...wanted.keys()].sort());
    expect(await readFile(path.join(out, 'webhook-123.yaml'), 'utf8')).toBe('# 123\n');
    expect((await readdir(dir)).filter((n) => n.includes('govops-export-'))).toEqual([]); // no staging folder left
  });

  it('a file that appeared after the checks: refused, and none of the new files stays (every placement under way is undone)', async () => {
    const out = path.join(dir, 'out');
    const prepared = await prepareExport(out, files(200), false);
    // another writer creates one of the files between the checks and the commit
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, 'webhook-150.yaml'), 'theirs\n');
    await expect(commitExport(prepared)).rejects.toThrow(/webhook-150\.yaml/);
    expect(await readdir(out)).toEqual(['webhook-150.yaml']);
    expect(await readFile(path.join(out, 'webhook-150.yaml'), 'utf8')).toBe('theirs\n');
    expect((await readdir(dir)).filter((n) => n.includes('govops-export-'))).toEqual([]);
  });
});
