/**
 * Reading a file written by someone else without holding more of it than a limit: the loader's manifests, the
 * directory source's snapshot, the tree's control files (`.gitmodules`, `.govopsignore`).
 */
import { close, open, read } from 'node:fs';
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

/**
 * The file's bytes, at most `limit` + 1 of them: enough to know it is over the limit (longer than `limit`) without
 * reading it all. Throws what opening or reading throws.
 */
export async function readFileUpTo(path: string, limit: number): Promise<Buffer> {
  const fd = await openFd(path, 'r');
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
