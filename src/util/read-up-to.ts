/**
 * Reading a file written by someone else without holding more of it than a limit: the loader's manifests, the
 * directory source's snapshot, the tree's control files (`.gitmodules`, `.govopsignore`).
 */
import { close, constants, fstat, open, read, realpath, stat } from 'node:fs';
import { promisify } from 'node:util';

/** First read of a file: most of these files fit, so a file costs open, one read and close. */
const FIRST_READ = 64 * 1024;

/**
 * Files are read through descriptors (fs's callback API, promisified), not FileHandles: a FileHandle's open and close
 * cost twice what the reads do (500 manifest files: 16-39 ms against 8-23, issue #26).
 */
const openFd = promisify(open);
const readFd = promisify(read);
const closeFd = promisify(close);
const fstatFd = promisify(fstat);
const realpathOf = promisify(realpath.native);
const statOf = promisify(stat);

/** The code of the error `readFileUpToAt` throws when the path no longer leads to the file it was listed as. */
export const FILE_CHANGED = 'GOVOPS_FILE_CHANGED';

/**
 * The file's bytes, at most `limit` + 1 of them: enough to know it is over the limit (longer than `limit`) without
 * reading it all. Throws what opening or reading throws.
 */
export async function readFileUpTo(path: string, limit: number): Promise<Buffer> {
  return readOpen(await openFd(path, 'r'), limit);
}

/**
 * As `readFileUpTo`, for a file in a folder someone else writes, listed there as a regular file at the real path
 * `real`: read only if it still is one, reached through no symbolic link (not itself, not a folder on the way: `open`
 * follows links in every component), else an error with code FILE_CHANGED (or ELOOP). A writer racing the scan who
 * swaps the file or a folder above it for a link out of the folder gets nothing read through the link; a FIFO put
 * there does not block the read.
 */
export async function readFileUpToAt(path: string, real: string, limit: number): Promise<Buffer> {
  const fd = await openFd(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let ok = false;
  try {
    const opened = await fstatFd(fd);
    const now = await statOf(path).catch(() => undefined);
    const there = await realpathOf(path).catch(() => undefined);
    ok = opened.isFile() && there === real && now !== undefined && now.dev === opened.dev && now.ino === opened.ino;
  } finally {
    if (!ok) await closeFd(fd);
  }
  if (!ok) throw Object.assign(new Error(`${path}: changed while it was read (no longer the regular file listed, or reached through a symbolic link)`), { code: FILE_CHANGED });
  return readOpen(fd, limit);
}

/** Read an open descriptor (closed afterwards) up to `limit` + 1 bytes. */
async function readOpen(fd: number, limit: number): Promise<Buffer> {
  try {
    let buf = Buffer.allocUnsafe(Math.min(FIRST_READ, limit + 1));
    let length = 0;
    for (;;) {
      const { bytesRead } = await readFd(fd, buf, length, buf.length - length, length);
      length += bytesRead;
      if (bytesRead === 0 || length > limit) return buf.subarray(0, length);
      if (length === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 4, limit + 1));
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
    }
  } finally {
    await closeFd(fd);
  }
}
