/**
 * Read a manifest folder into memory, digest it, and write an immutable copy. Pure apart from
 * the file reads/writes; the digest is a function of (sorted relative paths, contents, links) only.
 * The copy holds what the loader reads and nothing else: manifest files (`*.yaml`, `*.yml`),
 * `.govopsignore`, `.gitmodules`, symbolic links as links (never followed: the loader refuses those
 * leading out), and an empty `.git` marker for a nested repository (the loader reports it). Secret
 * files stay where they are: the daemon reads them from the watched folder, never from a copy.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readlink, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { MAX_FILE_BYTES, MAX_SNAPSHOT_ENTRIES } from '../util/limits.js';
import { FILE_CHANGED, readFileUpToAt } from '../util/read-up-to.js';
import { isInside } from '../util/inside.js';
import { isSkippedName } from '../util/skipped-names.js';

export interface FileSet {
  /** Relative path (with `/`) → content. */
  files: Map<string, Buffer>;
  /** Relative path (with `/`) → symlink target, as written in the copy. */
  links: Map<string, string>;
}

const KEPT = /\.ya?ml$/i;
const KEPT_HIDDEN = new Set(['.govopsignore', '.gitmodules']);

/**
 * What the loader never reads (util/skipped-names.ts), so neither copied nor watched; `.govopsignore` and
 * `.gitmodules` are kept (the loader honours them). A folder named `old~` is read (an editor's backup file `a.yaml~`
 * is no manifest by its name).
 */
export function isHidden(name: string): boolean {
  return !KEPT_HIDDEN.has(name) && isSkippedName(name);
}

/**
 * `skip(path)`: an absolute path under `root` left out with everything below it (govops' own files). More than
 * `maxEntries` manifest files and links (other files do not count) is an error: the folder is not published.
 */
/**
 * `allFiles`: every regular file, not only what the loader reads (a directory source with `--render`: the command
 * runs in the copy and may read any file of the folder, a jsonnet file, a JSON patch, a chart's templates; each is
 * then part of the digest, so changing it is a new revision). Such a file past the manifest size limit fails the scan
 * (copied cut, the render would read a different file).
 */
export async function readTree(
  root: string,
  maxEntries = MAX_SNAPSHOT_ENTRIES,
  skip: (path: string) => boolean = () => false,
  allFiles = false,
): Promise<FileSet> {
  const files = new Map<string, Buffer>();
  const links = new Map<string, string>();
  const realRoot = await realpath(root).catch(() => root);
  const count = (): void => {
    if (files.size + links.size >= maxEntries) {
      throw new Error(
        `more than ${maxEntries.toLocaleString('en-US')} manifest files and links under ${root}, the most a directory source reads: ` +
          'watch the manifests\' folder only (--dir), split the manifests into fewer files, or follow a Git repository (--repo)',
      );
    }
  };
  const rel = (full: string): string => relative(root, full).split(sep).join('/');
  async function walk(dir: string, top: boolean): Promise<void> {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (!top && entries.some((e) => e.name === '.git')) {
      count();
      files.set(rel(join(dir, '.git')), Buffer.alloc(0)); // a nested repository: reported by the loader
      return;
    }
    for (const e of entries) {
      if (isHidden(e.name)) continue;
      const full = join(dir, e.name);
      if (skip(full)) continue;
      if (e.isSymbolicLink()) {
        const text = await readlink(full).catch(() => undefined);
        if (text === undefined) continue; // vanished
        count();
        // A link to a place inside the folder stays a (relative) link inside the copy; any other is
        // copied as written, so the loader refuses it by name. Its target is never read here.
        const target = await realpath(full).catch(() => undefined);
        links.set(rel(full), target !== undefined && isInside(realRoot, target) ? relative(dirname(resolve(realRoot, rel(full))), target) || '.' : text);
        continue;
      }
      if (e.isDirectory()) await walk(full, false);
      else if (e.isFile() && (allFiles || KEPT.test(e.name) || KEPT_HIDDEN.has(e.name))) {
        count();
        // Never held whole: past the manifest limit, one byte more than it, enough for the loader to refuse it by name.
        // A file that vanished since the folder was listed is left out (its removal is a change: the scan is read again);
        // one that cannot be read fails the scan: left out, its resources would be deleted (--prune) as if removed.
        // Read only while it is still the regular file listed, inside the folder: a writer who swaps it (or a folder
        // above it) for a link out of the folder in between fails this scan, and the next one sees the link.
        const content = await readFileUpToAt(full, resolve(realRoot, rel(full)), MAX_FILE_BYTES).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return undefined;
          if (err.code === FILE_CHANGED || err.code === 'ELOOP') throw new Error(`cannot read ${rel(full)}: it changed while the folder was read (replaced by a symbolic link, or a folder on its path was); read again at the next scan`);
          throw new Error(`cannot read ${rel(full)}: ${err.message}`);
        });
        if (content && content.length > MAX_FILE_BYTES && !KEPT.test(e.name) && !KEPT_HIDDEN.has(e.name)) {
          throw new Error(`${rel(full)} is larger than ${MAX_FILE_BYTES} bytes, the most a directory source copies for the render command: render from a Git source (--repo) instead`);
        }
        if (content) files.set(rel(full), content);
      }
    }
  }
  await walk(root, true);
  return { files, links };
}

/** sha256 over each sorted path and content (and link target), length-prefixed so no two sets collide. */
export function digestFiles(set: FileSet): string {
  const h = createHash('sha256');
  for (const path of [...set.files.keys()].sort()) {
    const content = set.files.get(path)!;
    h.update(`${Buffer.byteLength(path)}:${path}\0${content.length}:`);
    h.update(content);
  }
  for (const path of [...set.links.keys()].sort()) {
    const target = set.links.get(path)!;
    h.update(`link:${Buffer.byteLength(path)}:${path}\0${Buffer.byteLength(target)}:${target}`);
  }
  return h.digest('hex');
}

/** Write the set to `<dir>` atomically (temp folder + rename); a no-op when it already exists. */
export async function writeSnapshot(dir: string, set: FileSet): Promise<void> {
  if (await realpath(dir).then(() => true, () => false)) return;
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  for (const [path, content] of set.files) {
    const target = join(tmp, ...path.split('/'));
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await writeFile(target, content, { mode: 0o600 });
  }
  for (const [path, link] of set.links) {
    const target = join(tmp, ...path.split('/'));
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await symlink(link, target);
  }
  await rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
    await rm(tmp, { recursive: true, force: true });
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
  });
}

/** git-sync checks each commit out into a folder named by its SHA (`.worktrees/<sha>` or `rev-<sha>`). */
export function gitSyncCommit(realPath: string): string | undefined {
  for (const part of realPath.split(sep).reverse()) {
    const m = /^(?:rev-)?([0-9a-f]{40}|[0-9a-f]{64})$/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}
