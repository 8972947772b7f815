/**
 * Where an export stages its files: inside the output folder, never beside it. The folder's parent may be one
 * govops cannot write (the image's WORKDIR /data is a volume whose parent `/` belongs to root: `govops export --out .`)
 * or another filesystem (a volume's mount point, `--out /out`: a hard link from the parent's filesystem is EXDEV).
 * Here a parent that cannot be written is simulated: any temporary folder made outside the output folder fails as
 * it would there (the tests run as root, which writes anywhere).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const guard = vi.hoisted(() => ({ inside: undefined as string | undefined }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const mkdtempGuarded = async (prefix: string, options?: unknown): Promise<string> => {
    const { inside } = guard;
    if (inside !== undefined && !prefix.startsWith(inside + path.sep)) {
      throw Object.assign(new Error(`EACCES: permission denied, mkdtemp '${prefix}XXXXXX'`), { code: 'EACCES' });
    }
    return fs.mkdtemp(prefix, options as never);
  };
  return { ...fs, default: { ...fs, mkdtemp: mkdtempGuarded }, mkdtemp: mkdtempGuarded };
});

const { commitExport, ENV_TEMPLATE, prepareExport } = await import('../../src/export/write.js');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-staging-'));
});
afterEach(async () => {
  guard.inside = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('commitExport staging', () => {
  it('writes into a folder whose parent it cannot write, and leaves nothing but the export in it', async () => {
    const out = path.join(dir, 'data');
    guard.inside = out;
    const files = new Map([
      ['webhook-pager.yaml', '# pager\n'],
      ['integration-x.yaml', '# x\n'],
      [ENV_TEMPLATE, 'GOVOPS_SECRET_X=\n'],
    ]);
    const written = await commitExport(await prepareExport(out, files, false));
    expect(written.map((f) => path.basename(f))).toEqual(['webhook-pager.yaml', 'integration-x.yaml', ENV_TEMPLATE]);
    expect((await readdir(out)).sort()).toEqual(['integration-x.yaml', ENV_TEMPLATE, 'webhook-pager.yaml']);
    expect(await readFile(path.join(out, 'integration-x.yaml'), 'utf8')).toBe('# x\n');
    expect(await readdir(dir)).toEqual(['data']);
  });

  it('with --force too', async () => {
    const out = path.join(dir, 'data');
    guard.inside = out;
    await commitExport(await prepareExport(out, new Map([['webhook-pager.yaml', 'old\n']]), false));
    await commitExport(await prepareExport(out, new Map([['webhook-pager.yaml', 'new\n']]), true));
    expect(await readdir(out)).toEqual(['webhook-pager.yaml']);
    expect(await readFile(path.join(out, 'webhook-pager.yaml'), 'utf8')).toBe('new\n');
  });
});
