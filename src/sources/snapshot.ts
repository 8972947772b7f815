/**
 * Read a manifest folder into memory, digest it, and write an immutable copy. Pure apart from
 * the file reads/writes; the digest is a function of (sorted relative paths, contents) only.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

export interface FileSet {
  /** Relative path (with `/`) → content. */
  files: Map<string, Buffer>;
}

/**
 * Hidden entries (`.git`, `.worktrees`, editor temp files like `.foo.swp`) are not manifests;
 * `.govopsignore` is kept (the loader honours it).
 */
export function isHidden(name: string): boolean {
  if (name === '.govopsignore') return false;
  return name.startsWith('.') || name.endsWith('~');
}

export async function readTree(root: string, maxFiles = 10_000): Promise<FileSet> {
  const files = new Map<string, Buffer>();
  async function walk(dir: string): Promise<void> {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      if (isHidden(name)) continue;
      const full = join(dir, name);
      const st = await stat(full).catch(() => undefined); // follows symlinks; vanished → skip
      if (!st) continue;
      if (st.isDirectory()) await walk(full);
      else if (st.isFile()) {
        if (files.size >= maxFiles) throw new Error(`more than ${maxFiles} files under ${root}`);
        const content = await readFile(full).catch(() => undefined);
        if (content) files.set(relative(root, full).split(sep).join('/'), content);
      }
    }
  }
  await walk(root);
  return { files };
}

/** sha256 over each sorted path and content, length-prefixed so no two sets collide by concatenation. */
export function digestFiles(set: FileSet): string {
  const h = createHash('sha256');
  for (const path of [...set.files.keys()].sort()) {
    const content = set.files.get(path)!;
    h.update(`${Buffer.byteLength(path)}:${path}\0${content.length}:`);
    h.update(content);
  }
  return h.digest('hex');
}

/** Write the set to `<dir>` atomically (temp folder + rename); a no-op when it already exists. */
export async function writeSnapshot(dir: string, set: FileSet): Promise<void> {
  if (await stat(dir).then(() => true, () => false)) return;
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  for (const [path, content] of set.files) {
    const target = join(tmp, ...path.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  await mkdir(tmp, { recursive: true });
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
