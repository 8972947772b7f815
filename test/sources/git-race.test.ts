/**
 * The Git source's revision folders: retention (`retain`) runs in the same serial runner as fetch +
 * checkout, so it can never remove a folder that is being published; a folder that vanished anyway is
 * checked out again on the next look. Real Git repositories in temp dirs.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { DirSource } from '../../src/sources/dir.js';
import { GitSource } from '../../src/sources/git.js';
import type { Revision } from '../../src/sources/types.js';
import { createRepo } from './gitrepo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function tmp(prefix: string): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}

describe('Git source retention vs checkout', () => {
  it('the overlap forced on 20 revisions: every revision is published complete and stays until it is no longer needed', async () => {
    const repo = await createRepo();
    cleanups.push(repo.cleanup);
    const workdir = await tmp('govops-gitrace-');
    /** What the daemon still needs when the checkout starts (the previous revision): retain() keeps only that. */
    let inUse: string[] = [];
    const retains: Array<Promise<void>> = [];
    const source: GitSource = new GitSource({
      url: repo.bare,
      workdir,
      path: 'm',
      intervalMs: 60_000,
      logger: silentLogger(),
      hooks: {
        // Between checkout and publication, the daemon's retention of the previous attempt runs.
        afterCheckout: async () => {
          retains.push(source.retain(inUse));
          await new Promise((r) => setTimeout(r, 25));
        },
      },
    });
    cleanups.push(() => source.stop());
    const published: Array<{ rev: Revision; complete: boolean }> = [];
    source.onRevision((rev) => published.push({ rev, complete: existsSync(join(rev.root, 'm', 'a.yaml')) }));
    await repo.commit({ 'm/a.yaml': 'n: 0\n' });
    await source.start();
    for (let i = 1; i <= 20; i++) {
      inUse = [published.at(-1)!.rev.id];
      await repo.commit({ 'm/a.yaml': `n: ${i}\n` });
      await source.refresh();
      await Promise.all(retains);
      const last = published.at(-1)!;
      expect(last.complete, `revision ${i} published complete`).toBe(true);
      // still there after the retention that overlapped its checkout
      expect(await readFile(join(last.rev.root, 'm', 'a.yaml'), 'utf8')).toBe(`n: ${i}\n`);
    }
    expect(published).toHaveLength(21);
    expect(published.every((p) => p.complete)).toBe(true);
    expect(retains.length).toBeGreaterThanOrEqual(20);
  });

  it('a revision whose folder vanished (an I/O failure) is checked out again and published again on the next look', async () => {
    const repo = await createRepo();
    cleanups.push(repo.cleanup);
    const workdir = await tmp('govops-gitrace-');
    const source = new GitSource({ url: repo.bare, workdir, intervalMs: 60_000, logger: silentLogger() });
    cleanups.push(() => source.stop());
    const published: Revision[] = [];
    source.onRevision((rev) => published.push(rev));
    const sha = await repo.commit({ 'a.yaml': 'x\n' });
    await source.start();
    await rm(published[0]!.root, { recursive: true, force: true });
    await source.refresh();
    expect(published.map((r) => r.id)).toEqual([sha, sha]);
    expect(await readFile(join(published[1]!.root, 'a.yaml'), 'utf8')).toBe('x\n');
    await source.refresh(); // complete again: nothing new
    expect(published).toHaveLength(2);
  });
});

describe('directory source retention vs scan', () => {
  it('a snapshot that vanished is written again on the next scan; retention waits for a scan in progress', async () => {
    const dir = await tmp('govops-dirrace-');
    const workdir = await tmp('govops-dirrace-work-');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'a.yaml'), 'x\n');
    const source = new DirSource({ dir, workdir, logger: silentLogger(), debounceMs: 20, intervalMs: 60_000 });
    cleanups.push(() => source.stop());
    const published: Revision[] = [];
    source.onRevision((rev) => published.push(rev));
    await source.start();
    // a first scan that saw a watcher event while it read (a late event for a.yaml on a busy machine) is not
    // published (DirSource.tornRead): scan again; after 5 such scans in a row one is published anyway
    while (published.length === 0) await source.refresh();
    await rm(published[0]!.root, { recursive: true, force: true });
    // a scan and a retention requested together: the retention runs after the scan, keeping its snapshot
    const scan = source.refresh();
    const retain = source.retain([]);
    await Promise.all([scan, retain]);
    expect(published).toHaveLength(2);
    expect(await readFile(join(published[1]!.root, 'a.yaml'), 'utf8')).toBe('x\n');
  });
});
