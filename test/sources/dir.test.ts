import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { closeWatcher, DirSource } from '../../src/sources/dir.js';
import { watch } from 'chokidar';
import { digestFiles, gitSyncCommit, readTree } from '../../src/sources/snapshot.js';
import { findManifestFiles } from '../../src/manifests/discover.js';
import type { Revision } from '../../src/sources/types.js';
import { pino } from 'pino';
import { silentLogger } from '../../src/log.js';

/** The built snapshot module (vitest's global setup builds dist/), for a read made as another user. */
const SNAPSHOT_JS = fileURLToPath(new URL('../../dist/sources/snapshot.js', import.meta.url));

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

/**
 * A started DirSource on `dir`, once it published its first revision (unless `firstRevision` is false: a missing
 * folder). The first scan is not always the one that publishes: a watcher event that arrives while it reads (one
 * of the test's own writes just before, reported late) makes it a torn read, and the scan after the debounce
 * publishes instead (dir.ts, tornRead).
 */
async function watchDir(dir: string, debounceMs = 100, firstRevision = true) {
  const workdir = await tmp('govops-dirwork-');
  const revisions: Revision[] = [];
  const source = new DirSource({ dir, workdir, logger: silentLogger(), debounceMs });
  source.onRevision((r) => revisions.push(r));
  cleanups.push(() => source.stop());
  await source.start();
  if (firstRevision) await until(() => revisions.length >= 1);
  return { source, revisions, workdir };
}

async function until(check: () => boolean, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('content digest', () => {
  it('depends on paths and contents only, not on hidden files', async () => {
    const a = await tmp('govops-d1-');
    const b = await tmp('govops-d2-');
    for (const d of [a, b]) {
      await mkdir(join(d, 'sub'));
      await writeFile(join(d, 'x.yaml'), 'x');
      await writeFile(join(d, 'sub/y.yaml'), 'y');
    }
    await writeFile(join(b, '.x.yaml.swp'), 'editor junk');
    await writeFile(join(a, '.govopsignore'), 'sub/\n');
    await writeFile(join(b, '.govopsignore'), 'sub/\n');
    expect([...(await readTree(a)).files.keys()]).toContain('.govopsignore'); // the loader honours it
    await mkdir(join(b, '.git'));
    await writeFile(join(b, '.git/HEAD'), 'ref');
    expect(digestFiles(await readTree(a))).toBe(digestFiles(await readTree(b)));
    await writeFile(join(b, 'sub/y.yaml'), 'Y');
    expect(digestFiles(await readTree(a))).not.toBe(digestFiles(await readTree(b)));
  });

  it('a manifest that cannot be read fails the read (never left out: with --prune its resources would be deleted)', async () => {
    const dir = await tmp('govops-unreadable-');
    await writeFile(join(dir, 'a.yaml'), 'a: 1\n');
    await writeFile(join(dir, 'b.yaml'), 'b: 1\n', { mode: 0o600 });
    await chmod(dir, 0o755);
    const script = `const { readTree } = await import(${JSON.stringify(SNAPSHOT_JS)});
      try { const set = await readTree(process.argv[1]); console.log(JSON.stringify([...set.files.keys()])); }
      catch (err) { console.log('error: ' + err.message); }`;
    let out: string;
    if (process.getuid?.() === 0) {
      // root reads every file: the read is made by another user, as a daemon not running as the files' owner does
      out = execFileSync(process.execPath, ['--input-type=module', '-e', script, dir], { uid: 65534, gid: 65534, encoding: 'utf8' }).trim();
    } else {
      await chmod(join(dir, 'b.yaml'), 0);
      out = await readTree(dir).then((set) => JSON.stringify([...set.files.keys()]), (err: Error) => `error: ${err.message}`);
    }
    expect(out).toMatch(/^error: cannot read b\.yaml: EACCES/); // the old code: ["a.yaml"]
  });

  it("reads a per-resource export of a large service (over 10,000 files); past its limit, says what to do", async () => {
    const dir = await tmp('govops-large-');
    // `govops export`'s default layout: one file per resource (issue #26 measures 10,000 webhooks + 10,000 data sources)
    await Promise.all(Array.from({ length: 10_001 }, (_, i) => writeFile(join(dir, `webhook-w${i}.yaml`), `n: ${i}\n`)));
    expect((await readTree(dir)).files.size).toBe(10_001); // the old code: "more than 10000 files under ..."
    await expect(readTree(dir, 3)).rejects.toThrow(/more than 3 manifest files and links under .*: watch the manifests' folder only \(--dir\).*--repo/);
  });

  it('copies what the loader reads, no more, no less (a folder named `old~` is read, node_modules is not)', async () => {
    const dir = await tmp('govops-select-');
    await mkdir(join(dir, 'old~'));
    await mkdir(join(dir, 'node_modules/pkg'), { recursive: true });
    await writeFile(join(dir, 'old~/a.yaml'), 'a: 1\n');
    await writeFile(join(dir, 'node_modules/pkg/n.yaml'), 'n: 1\n');
    await writeFile(join(dir, 'b.yaml'), 'b: 1\n');
    await writeFile(join(dir, 'b.yaml~'), 'an editor backup\n');
    const loaded = (await findManifestFiles(['.'], dir)).files.map((f) => relative(dir, f)).sort();
    expect(loaded).toEqual(['b.yaml', 'old~/a.yaml']);
    // the old code: ['b.yaml', 'node_modules/pkg/n.yaml']: old~/a.yaml's resources missing (deleted with --prune)
    expect([...(await readTree(dir)).files.keys()].sort()).toEqual(loaded);
  });

  it('finds the git-sync commit in a resolved path', () => {
    const sha = 'a'.repeat(40);
    expect(gitSyncCommit(`/git/.worktrees/${sha}`)).toBe(sha);
    expect(gitSyncCommit(`/git/rev-${sha}/manifests`)).toBe(sha);
    expect(gitSyncCommit('/srv/manifests')).toBeUndefined();
  });
});

describe('DirSource', () => {
  it('emits a snapshot revision on start and after an edit (debounced), with a content digest id', async () => {
    const dir = await tmp('govops-dir-');
    await writeFile(join(dir, 'a.yaml'), 'one');
    // A debounce much longer than two back-to-back writes take, even on a loaded machine.
    const { revisions } = await watchDir(dir, 1000);
    expect(revisions).toHaveLength(1);
    expect(revisions[0]!.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(revisions[0]!.display).toBe(dir);
    // Several quick writes: debounced into one new revision with the final content.
    await writeFile(join(dir, 'a.yaml'), 'two');
    await writeFile(join(dir, 'a.yaml'), 'three');
    await until(() => revisions.length >= 2);
    await new Promise((r) => setTimeout(r, 400));
    expect(revisions).toHaveLength(2);
    expect(await readFile(join(revisions[1]!.root, 'a.yaml'), 'utf8')).toBe('three');
    // The snapshot is immutable: editing the source doesn't change it.
    expect(await readFile(join(revisions[0]!.root, 'a.yaml'), 'utf8')).toBe('one');
  });

  it('handles atomic saves (write temp + rename) and new files in new folders', async () => {
    const dir = await tmp('govops-dir-');
    await writeFile(join(dir, 'a.yaml'), 'one');
    const { revisions } = await watchDir(dir);
    await writeFile(join(dir, '.a.yaml.tmp'), 'saved atomically');
    await rename(join(dir, '.a.yaml.tmp'), join(dir, 'a.yaml'));
    await until(() => revisions.length === 2);
    expect(await readFile(join(revisions[1]!.root, 'a.yaml'), 'utf8')).toBe('saved atomically');
    await mkdir(join(dir, 'more'));
    await writeFile(join(dir, 'more/b.yaml'), 'b');
    await until(() => revisions.length === 3);
    expect(await readFile(join(revisions[2]!.root, 'more/b.yaml'), 'utf8')).toBe('b');
  });

  it('a folder deleted and created again: edits in the new folder are seen (not only at the periodic rescan)', async () => {
    const base = await tmp('govops-dir-');
    const dir = join(base, 'manifests');
    await mkdir(dir);
    await writeFile(join(dir, 'a.yaml'), 'a: 1\n');
    const { revisions, source } = await watchDir(dir);
    await rm(dir, { recursive: true });
    await until(() => source.health().ok === false); // the scan saw it gone
    await mkdir(dir); // on Linux, often the same inode number again
    const latest = (): string | undefined => {
      const root = source.current()?.root;
      return root && existsSync(join(root, 'a.yaml')) ? readFileSync(join(root, 'a.yaml'), 'utf8') : undefined;
    };
    await writeFile(join(dir, 'a.yaml'), 'a: 2\n');
    await until(() => latest() === 'a: 2\n');
    const seen = revisions.length;
    await writeFile(join(dir, 'a.yaml'), 'a: 3\n');
    // the old code still watched the deleted folder: nothing until the periodic rescan (60 s)
    await until(() => latest() === 'a: 3\n');
    expect(revisions.length).toBe(seen + 1);
  });

  it('follows a git-sync style symlink swap and uses the commit SHA as revision', async () => {
    const root = await tmp('govops-gitsync-');
    const sha1 = '1'.repeat(40);
    const sha2 = '2'.repeat(40);
    for (const [sha, content] of [[sha1, 'first'], [sha2, 'second']] as const) {
      await mkdir(join(root, '.worktrees', sha, 'manifests'), { recursive: true });
      await writeFile(join(root, '.worktrees', sha, 'manifests', 'a.yaml'), content);
    }
    await symlink(join('.worktrees', sha1), join(root, 'repo'));
    const { revisions, source } = await watchDir(join(root, 'repo', 'manifests'));
    expect(revisions.map((r) => r.id)).toEqual([sha1]);
    // git-sync: new symlink beside, then rename over the old one (atomic swap).
    await symlink(join('.worktrees', sha2), join(root, 'repo.tmp'));
    await rename(join(root, 'repo.tmp'), join(root, 'repo'));
    await until(() => revisions.length === 2);
    expect(revisions[1]!.id).toBe(sha2);
    expect(await readFile(join(revisions[1]!.root, 'a.yaml'), 'utf8')).toBe('second');
    // git-sync removes the old worktree afterwards: our snapshot of it survives until released.
    await rm(join(root, '.worktrees', sha1), { recursive: true });
    expect(existsSync(revisions[0]!.root)).toBe(true);
    await source.retain([sha2]);
    expect(existsSync(revisions[0]!.root)).toBe(false);
    // Edits inside the new worktree are still seen (the content watcher moved to it).
    await writeFile(join(root, '.worktrees', sha2, 'manifests', 'b.yaml'), 'b');
    await until(() => revisions.length === 3);
    expect(revisions[2]!.id.startsWith(`${sha2}+`)).toBe(true);
  });

  it('reports nothing new for an unchanged directory and tolerates a missing one', async () => {
    const dir = await tmp('govops-dir-');
    await writeFile(join(dir, 'a.yaml'), 'one');
    const { revisions, source } = await watchDir(dir);
    await source.refresh();
    await writeFile(join(dir, 'a.yaml'), 'one'); // same content
    await new Promise((r) => setTimeout(r, 400));
    expect(revisions).toHaveLength(1);
    const missing = await watchDir(join(dir, 'nope'), 100, false);
    expect(missing.revisions).toHaveLength(0);
    expect(missing.source.current()).toBeUndefined();
  });
});

describe('DirSource: a folder that changes while it is read', () => {
  it('is not published as read (an in-between set): read again once quiet, and only the settled set is a revision', async () => {
    const dir = await tmp('govops-torn-');
    await writeFile(join(dir, 'a.yaml'), 'a: 1\n');
    await writeFile(join(dir, 'b.yaml'), 'b: 1\n');
    const workdir = await tmp('govops-dirwork-');
    const revisions: Revision[] = [];
    let scans = 0;
    const source: DirSource = new DirSource({
      dir, workdir, logger: silentLogger(), debounceMs: 100,
      hooks: {
        // the second scan has read {a: 2, b}: b is removed before it publishes, and the watcher reports it
        afterRead: async () => {
          if (++scans !== 2) return;
          const seen = source.changesSeen;
          await rm(join(dir, 'b.yaml'));
          await until(() => source.changesSeen > seen);
        },
      },
    });
    source.onRevision((r) => revisions.push(r));
    cleanups.push(() => source.stop());
    await source.start();
    expect(revisions).toHaveLength(1);
    await writeFile(join(dir, 'a.yaml'), 'a: 2\n');
    await until(() => revisions.length >= 2);
    await source.refresh(); // nothing else comes: the settled folder is the last revision
    const files = async (r: Revision) => (await readTree(r.root)).files;
    const second = await files(revisions[1]!);
    // never published: {a: 2, b} as the second scan read it
    expect([...second.keys()].sort()).toEqual(['a.yaml']);
    expect(second.get('a.yaml')?.toString()).toBe('a: 2\n');
    expect(revisions).toHaveLength(2);
    expect(scans).toBeGreaterThanOrEqual(3);
  });
});

describe('DirSource: the folder\'s parent', () => {
  it('a change beside the watched folder (a shared parent such as /tmp) neither tears a scan nor starts one', async () => {
    const base = await tmp('govops-parent-');
    const dir = join(base, 'watched');
    await mkdir(dir);
    await writeFile(join(dir, 'a.yaml'), 'a: 1\n');
    const workdir = await tmp('govops-dirwork-');
    const logs: Array<{ msg: string; path?: string }> = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void logs.push(JSON.parse(line) as { msg: string }) });
    const beside = () => logs.filter((l) => l.msg.startsWith('a change beside the watched folder')).length;
    let siblings = 0;
    /** A new file beside the folder, again every 200 ms until the parent's watcher has reported one more. */
    const changeBeside = async () => {
      const seen = beside();
      for (let i = 0; i < 40; i++) {
        await writeFile(join(base, `sibling-${++siblings}.txt`), 'x');
        if (await until(() => beside() > seen, 200).then(() => true, () => false)) return;
      }
      throw new Error('the parent watcher reported nothing');
    };
    let scans = 0;
    const scansAt: number[] = [];
    const revisions: Revision[] = [];
    const source = new DirSource({
      dir, workdir, logger, debounceMs: 100,
      // the scan after the first revision's: the parent changes while it reads, reported before the scan ends
      hooks: { afterRead: async () => { if (++scans === scansAt[0]! + 1) await changeBeside(); } },
    });
    source.onRevision((r) => {
      revisions.push(r);
      scansAt.push(scans);
    });
    cleanups.push(() => source.stop());
    await source.start();
    await until(() => revisions.length >= 1);
    const before = source.changesSeen;
    await changeBeside(); // not a reason to scan
    expect(source.changesSeen).toBe(before);
    await writeFile(join(dir, 'a.yaml'), 'a: 2\n');
    await until(() => revisions.length >= 2);
    // published by the scan the parent's change came during (the one after the first revision's): not torn
    expect(scansAt[1]).toBe(scansAt[0]! + 1);
    expect(logs.filter((l) => l.msg.startsWith('the folder changed while it was read'))).toEqual([]);
    expect((await readTree(revisions[1]!.root)).files.get('a.yaml')?.toString()).toBe('a: 2\n');
  });
});

describe('DirSource: govops never reads its own files', () => {
  it('the work folder and the state file family inside the watched folder (reached through a link) are neither read nor a reason to scan', async () => {
    const base = await tmp('govops-own-');
    await mkdir(join(base, 'real'));
    await symlink(join(base, 'real'), join(base, 'link'));
    const dir = join(base, 'link');
    await writeFile(join(dir, 'a.yaml'), 'one');
    let scans = 0;
    const revisions: Revision[] = [];
    const source = new DirSource({
      dir,
      workdir: join(dir, 'work'),
      statePath: join(dir, 'state.yaml'),
      logger: silentLogger(),
      debounceMs: 50,
      hooks: { onFetch: () => void scans++ },
    });
    source.onRevision((r) => revisions.push(r));
    cleanups.push(() => source.stop());
    await source.start();
    expect(revisions).toHaveLength(1);
    // (the watchers settle first: chokidar may report the link itself once, a scan that finds nothing new; on a busy
    // machine later than any fixed wait: settled once no scan came for 400 ms)
    for (let seen = -1, i = 0; seen !== scans && i < 25; i++) {
      seen = scans;
      await new Promise((r) => setTimeout(r, 400));
    }
    const scansAfterStart = scans;
    // what govops writes: state, journal, lock and its temporary files, snapshots and anything in the work folder
    await writeFile(join(dir, 'state.yaml'), 'formatVersion: 1');
    await writeFile(join(dir, 'state.yaml.journal'), '{}');
    await writeFile(join(dir, 'state.yaml.lock'), '{}');
    await writeFile(join(dir, 'state.yaml.lock.123.abcd.tmp'), '{}');
    await mkdir(join(dir, 'work', 'snapshots', 'x'), { recursive: true });
    await writeFile(join(dir, 'work', 'snapshots', 'x', 'a.yaml'), 'a copy');
    await new Promise((r) => setTimeout(r, 600));
    expect(scans).toBe(scansAfterStart);
    expect(revisions).toHaveLength(1);
    // a rescan (the safety net) does not read them either
    await source.refresh();
    expect(revisions).toHaveLength(1);
    // a manifest edit is a revision, holding the manifests only
    await writeFile(join(dir, 'b.yaml'), 'two');
    await until(() => revisions.length === 2);
    expect([...(await readTree(revisions[1]!.root)).files.keys()].sort()).toEqual(['a.yaml', 'b.yaml']);
  });
});

describe('closing a watcher', () => {
  it('keeps absorbing its errors after close (its write-finish timers may still report one; with no listener, a crash)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'govops-close-'));
    try {
      const w = watch(dir, { ignoreInitial: true, awaitWriteFinish: { stabilityThreshold: 80, pollInterval: 20 } });
      await new Promise<void>((r) => w.once('ready', () => r()));
      await closeWatcher(w);
      expect(() => w.emit('error', new Error('ENOTDIR: a late stat'))).not.toThrow();
      await closeWatcher(undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
