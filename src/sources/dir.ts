/**
 * Directory source: watches a folder with chokidar (debounced; atomic saves and write-in-progress
 * are absorbed by chokidar's `atomic` + `awaitWriteFinish` and by the debounce). It follows the
 * symlink swap git-sync does (`<root>/<link>` atomically re-pointed to a new worktree): the parent
 * folder of every symlink on the path is watched too, and the path is re-resolved on each scan.
 * Each distinct content becomes a revision: an immutable snapshot `<workdir>/snapshots/<digest>` of
 * the manifest files only (never a secret file: those are read from the watched folder itself); with `--render`,
 * of every file (the command runs in the copy and may read any of them: `allFiles`).
 * Revision id: the git-sync commit SHA when the resolved path names one, else `sha256:<digest>`.
 */
import { lstat, readdir, realpath, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';
import { ensureDir } from '../util/fs.js';
import { markWorkdir } from '../util/own-files.js';
import { WORK_DIR, nextRevisionOrder, type Revision, type Source, type SourceDescription, type SourceMetricsHooks } from './types.js';
import { digestFiles, gitSyncCommit, isHidden, readTree, writeSnapshot } from './snapshot.js';
import { CoalescingRunner } from './serial.js';
import { HealthTracker, type SourceHealth } from './health.js';
import { OwnPaths } from './own-paths.js';

export interface DirSourceOptions {
  dir: string;
  workdir: string;
  logger: Logger;
  /**
   * Quiet period after the last change of a burst before scanning (default 300ms). A lone change (one
   * file saved) waits only a quarter of it (at least 50ms): when nothing else follows, it is one save.
   */
  debounceMs?: number;
  /** Full rescan interval, a safety net for missed events (default 60s). */
  intervalMs?: number;
  /**
   * `--render`: the revision's copy holds every file of the folder, not only the manifests, since the render command
   * runs in it (src/sources/snapshot.ts `readTree`).
   */
  allFiles?: boolean;
  /** The state file: it (and its journal, lock, temporary files) is never read nor watched, like the work folder. */
  statePath?: string;
  hooks?: SourceMetricsHooks & {
    /** Runs after a scan read the folder, before it checks whether the folder changed meanwhile (tests). */
    afterRead?: () => Promise<void> | void;
  };
}

/** Scans in a row whose folder changed while being read, after which the next one is published anyway. */
const MAX_TORN_SCANS = 5;

export class DirSource implements Source {
  private readonly dir: string;
  private readonly snapDir: string;
  private readonly debounceMs: number;
  private listeners: Array<(r: Revision) => void> = [];
  private latest?: Revision;
  private latestDigest?: string;
  private content?: FSWatcher;
  private contentReal?: string;
  /** The watched folder's identity (`dev:ino`): a folder deleted and created again at the same path is another one. */
  private contentId?: string;
  /** Ends the wait for the content watcher's `ready` (watchContent), when the watcher is closed first. */
  private releaseReady?: () => void;
  private links: FSWatcher[] = [];
  private debounce?: NodeJS.Timeout;
  /** Changes seen since the last scan was scheduled to start. */
  private burst = 0;
  /** Every change the watchers reported (a scan compares it before and after reading the folder). */
  private changes = 0;
  /** Scans in a row not published because the folder changed while they read it. */
  private torn = 0;
  private ticker?: NodeJS.Timeout;
  private readonly runner = new CoalescingRunner(() => this.scan());
  private stopped = false;
  private digests = new Map<string, string>();
  private readonly tracker = new HealthTracker();
  /** What govops writes (work folder, state file family): never read, never a reason to scan. */
  private own?: OwnPaths;

  constructor(private readonly opts: DirSourceOptions) {
    this.dir = resolve(opts.dir);
    this.snapDir = join(resolve(opts.workdir), 'snapshots');
    this.debounceMs = opts.debounceMs ?? 300;
  }

  describe(): SourceDescription {
    return { type: 'dir', location: this.opts.dir };
  }

  onRevision(cb: (revision: Revision) => void): void {
    this.listeners.push(cb);
  }

  current(): Revision | undefined {
    return this.latest;
  }

  /** Changes the watchers reported so far (what a scan compares before and after reading the folder). */
  get changesSeen(): number {
    return this.changes;
  }

  health(): SourceHealth {
    return this.tracker.snapshot();
  }

  /** The watched folder is govops' own work folder or inside it: refused. */
  async preflight(): Promise<void> {
    this.own = await this.ownPaths();
    const refusal = this.own.refusal(this.dir, await realpath(this.dir).catch(() => this.dir));
    if (refusal) throw refusal;
  }

  async start(): Promise<void> {
    await this.preflight(); // again: a caller may start it without (tests, dev)
    await rm(this.snapDir, { recursive: true, force: true });
    await ensureDir(this.snapDir, WORK_DIR);
    await markWorkdir(this.opts.workdir);
    await this.watchLinks();
    await this.refresh();
    const every = this.opts.intervalMs ?? 60_000;
    this.ticker = setInterval(() => void this.refresh(), every);
    this.ticker.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.releaseReady?.();
    if (this.debounce) clearTimeout(this.debounce);
    if (this.ticker) clearInterval(this.ticker);
    await Promise.all([closeWatcher(this.content), ...this.links.map(closeWatcher)]);
    await this.runner.settled();
  }

  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.runner.run();
  }

  private ownPaths(): Promise<OwnPaths> {
    return OwnPaths.of({ workdir: this.opts.workdir, ...(this.opts.statePath ? { statePath: this.opts.statePath } : {}) });
  }

  private owns(path: string): boolean {
    return this.own?.owns(path) ?? false;
  }

  /** Drop snapshots no longer needed; serialised with scans (never removes a snapshot being published). */
  retain(ids: Iterable<string>): Promise<void> {
    const wanted = [...ids];
    return this.runner.exclusive(() => this.dropSnapshots(wanted));
  }

  private async dropSnapshots(ids: readonly string[]): Promise<void> {
    const keep = new Set<string>();
    for (const id of ids) {
      const d = this.digests.get(id);
      if (d) keep.add(d);
    }
    if (this.latestDigest) keep.add(this.latestDigest);
    for (const name of await readdir(this.snapDir).catch(() => [] as string[])) {
      if (!keep.has(name)) await rm(join(this.snapDir, name), { recursive: true, force: true });
    }
    for (const [id, d] of this.digests) if (!keep.has(d)) this.digests.delete(id);
  }

  /**
   * Adaptive debounce: the first change of a burst waits a short quiet period; any further change (a
   * checkout, a copy of many files) waits the full one after it. Files are reported once their writes
   * settled (chokidar's awaitWriteFinish), so a single save costs that plus the short period.
   */
  private changed(): void {
    if (this.stopped) return;
    this.changes++;
    if (this.debounce) clearTimeout(this.debounce);
    this.burst++;
    const wait = this.burst === 1 ? Math.min(this.debounceMs, Math.max(50, this.debounceMs / 4)) : this.debounceMs;
    this.debounce = setTimeout(() => {
      this.burst = 0;
      void this.refresh();
    }, wait);
  }

  /**
   * Watch the parent of every symlink on the path (depth 0), to see git-sync's swap. Only the entry on the way to the
   * folder (the link, or the folder itself) is a reason to scan: the rest of a parent (a shared /tmp, git-sync's
   * worktrees being prepared beside the link) changes on its own, and each such change would tear the scan under way.
   */
  private async watchLinks(): Promise<void> {
    const parents = new Set<string>();
    let p = this.dir;
    while (p !== dirname(p)) {
      const st = await lstat(p).catch(() => undefined);
      if (st?.isSymbolicLink()) parents.add(dirname(p));
      p = dirname(p);
    }
    // the folder, or a link or folder it lies under
    const onTheWay = (path: string): boolean => {
      const at = resolve(path);
      return at === this.dir || this.dir.startsWith(at.endsWith(sep) ? at : `${at}${sep}`);
    };
    // Always watch the folder's own parent: the folder may be created or replaced as a whole.
    parents.add(dirname(this.dir));
    for (const parent of parents) {
      const w = watch(parent, { depth: 0, ignoreInitial: true, followSymlinks: false, persistent: true, ignored: (path: string) => this.owns(path) });
      w.on('all', (event: string, path: string) => {
        if (onTheWay(path)) {
          // The folder (or a folder or link on its way) removed or created: a folder at that path now is another one,
          // which the content watcher does not see (its watches were on the old one, even when the inode is reused).
          if (event !== 'change') this.contentId = undefined;
          this.changed();
        }
        else this.opts.logger.trace({ path }, 'a change beside the watched folder: no reason to scan');
      });
      w.on('error', (err) => this.opts.logger.warn({ err }, 'directory watch error'));
      this.links.push(w);
    }
  }

  private async watchContent(real: string): Promise<void> {
    // A folder deleted and created again keeps its path, not its watches (inotify watched the old folder, now gone):
    // a new watcher, or no edit in the new folder is seen until the periodic rescan. Its identity tells it apart,
    // unless the inode number is reused: then the parent's watcher cleared `contentId` (watchLinks).
    const st = await stat(real);
    const id = `${st.dev}:${st.ino}`;
    if (this.contentReal === real && this.contentId === id && this.content) return;
    await closeWatcher(this.content);
    this.contentReal = real;
    this.contentId = id;
    this.content = watch(real, {
      ignoreInitial: true,
      // Links are recorded as links (snapshot.ts); what they point to is not ours to watch.
      followSymlinks: false,
      awaitWriteFinish: { stabilityThreshold: 80, pollInterval: 20 },
      ignored: (path: string) => path !== real && (path.slice(real.length + 1).split(sep).some(isHidden) || this.owns(path)),
    });
    this.content.on('all', () => this.changed());
    this.content.on('error', (err) => this.opts.logger.warn({ err }, 'directory watch error'));
    // Scan only once chokidar watches every file it found: an edit between its initial walk and
    // `ready` is no event (ignoreInitial), so a scan before it could miss that edit until the rescan.
    // Closing a watcher drops its listeners (no `ready` ever comes): stop() releases the wait.
    const content = this.content;
    await new Promise<void>((done) => {
      this.releaseReady = done;
      content.once('ready', () => done());
      content.once('error', () => done());
    });
    this.releaseReady = undefined;
  }

  /**
   * The folder changed while it was read (files being removed one by one, a copy under way): what was read may be
   * a set no commit meant (with --prune, resources missing from it would be deleted), so it is not published; the
   * change already scheduled the next scan, once the folder is quiet. A folder that never stops changing is
   * published anyway after MAX_TORN_SCANS such scans in a row.
   */
  private tornRead(changesBefore: number): boolean {
    if (this.changes === changesBefore) {
      this.torn = 0;
      return false;
    }
    if (this.stopped) return true;
    if (++this.torn > MAX_TORN_SCANS) {
      this.torn = 0;
      this.opts.logger.warn({ dir: this.opts.dir }, `the folder changed while each of ${MAX_TORN_SCANS} scans in a row read it: published as read`);
      return false;
    }
    this.opts.logger.debug({ dir: this.opts.dir, torn: this.torn }, 'the folder changed while it was read: read again once it is quiet');
    return true;
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    const started = process.hrtime.bigint();
    let ok = false;
    try {
      const real = await realpath(this.dir);
      await this.watchContent(real);
      // Own paths are looked up again at each scan: a folder on their way may have been re-pointed (git-sync).
      this.own = await this.ownPaths();
      const own = this.own;
      const changesBefore = this.changes;
      const set = await readTree(real, undefined, (path) => own.owns(path), this.opts.allFiles === true);
      await this.opts.hooks?.afterRead?.();
      ok = true;
      this.tracker.succeeded(new Date());
      if (this.tornRead(changesBefore)) return;
      const digest = digestFiles(set);
      const root = join(this.snapDir, digest);
      // Unchanged content is not a new revision, unless its snapshot is gone (an I/O failure): written again.
      if (digest === this.latestDigest && (await lstat(root).catch(() => undefined))) return;
      await writeSnapshot(root, set);
      const commit = gitSyncCommit(real);
      const id = commit ?? `sha256:${digest}`;
      const uniqueId = commit && [...this.digests].some(([i, d]) => i === commit && d !== digest)
        ? `${commit}+${digest.slice(0, 12)}`
        : id;
      this.digests.set(uniqueId, digest);
      this.latestDigest = digest;
      this.latest = {
        id: uniqueId,
        root,
        paths: ['.'],
        display: this.opts.dir,
        origin: real,
        observedAt: new Date().toISOString(),
        order: nextRevisionOrder(),
      };
      this.opts.logger.info({ revision: uniqueId, dir: this.opts.dir, files: set.files.size }, 'new directory revision');
      for (const cb of this.listeners) cb(this.latest);
    } catch (err) {
      this.tracker.failed(new Date(), `cannot read ${this.opts.dir}: ${(err as Error).message}`);
      this.opts.logger.error(
        { dir: this.opts.dir, err: { message: (err as Error).message } },
        `cannot read ${basename(this.dir)}; retrying on the next change`,
      );
    } finally {
      this.opts.hooks?.onFetch?.(Number(process.hrtime.bigint() - started) / 1e9, ok);
    }
  }
}

/**
 * Close a chokidar watcher and keep absorbing its errors: `close()` removes every listener, but the timers that wait for
 * a write to finish still run and report a failed stat (other than ENOENT) as `error`, which with no listener crashes
 * the process (a file saved just before a git-sync swap, its folder then replaced).
 */
export async function closeWatcher(w: FSWatcher | undefined): Promise<void> {
  if (!w) return;
  await w.close();
  w.on('error', () => undefined);
}
