/**
 * The directory source's scan (src/sources/snapshot.ts `readTree`) against whoever writes the watched folder (the
 * manifests' author): a file listed as a regular file, then swapped for a symbolic link out of the folder (or its
 * folder for a link) before it is read, must not be read through the link. The swap is made deterministic: right
 * after the folder is listed, as a racing writer would.
 */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';

const race: { after?: string; swap?: () => Promise<void> } = {};

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const readdirRacing = (async (dir: string, options?: unknown) => {
    const entries = await fs.readdir(dir, options as never);
    if (race.after !== undefined && dir === race.after && race.swap) {
      const swap = race.swap;
      race.swap = undefined;
      await swap();
    }
    return entries;
  }) as typeof fs.readdir;
  return { ...fs, default: { ...fs, readdir: readdirRacing }, readdir: readdirRacing };
});

const { readTree } = await import('../../src/sources/snapshot.js');

const OUTSIDE = 'outside-secret-value-5e1d';
const dirs: string[] = [];
afterEach(async () => {
  race.after = undefined;
  race.swap = undefined;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tmp(prefix: string): Promise<string> {
  const d = realpathSync(await mkdtemp(join(tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

describe('a file swapped for a link out of the watched folder while the folder is scanned', () => {
  it('a manifest listed as a file, then replaced by a link, is never read through the link', async () => {
    const outside = await tmp('govops-outside-');
    await writeFile(join(outside, 'token'), `kind: Secret\nvalue: ${OUTSIDE}\n`);
    const d = await tmp('govops-watched-');
    await writeFile(join(d, 'a.yaml'), 'kind: Webhook\n');
    race.after = d;
    race.swap = async () => {
      await rename(join(d, 'a.yaml'), join(d, 'a.old'));
      await symlink(join(outside, 'token'), join(d, 'a.yaml'));
    };
    const got = await readTree(d).then(
      (set) => JSON.stringify([...set.files.values()].map((b) => b.toString())),
      (err: Error) => `error: ${err.message}`,
    );
    expect(got).not.toContain(OUTSIDE);
    expect(got).toMatch(/^error: cannot read .*: it changed while the folder was read/);
  });

  it('a folder listed as a folder, then replaced by a link, is never read through the link', async () => {
    const outside = await tmp('govops-outside-');
    await writeFile(join(outside, 'x.yaml'), `kind: Secret\nvalue: ${OUTSIDE}\n`);
    const d = await tmp('govops-watched-');
    await mkdir(join(d, 'team'));
    await writeFile(join(d, 'team', 'x.yaml'), 'kind: Webhook\n');
    race.after = d;
    race.swap = async () => {
      await rename(join(d, 'team'), join(d, 'team.old'));
      await symlink(outside, join(d, 'team'));
    };
    const got = await readTree(d).then(
      (set) => JSON.stringify([...set.files.values()].map((b) => b.toString())),
      (err: Error) => `error: ${err.message}`,
    );
    expect(got).not.toContain(OUTSIDE);
    expect(got).toMatch(/^error: cannot read .*: it changed while the folder was read/);
  });

  it('without a swap the files are read as before', async () => {
    const d = await tmp('govops-watched-');
    await mkdir(join(d, 'team'));
    await writeFile(join(d, 'team', 'x.yaml'), 'kind: Webhook\n');
    const set = await readTree(d);
    expect([...set.files.keys()]).toEqual(['team/x.yaml']);
  });
});
