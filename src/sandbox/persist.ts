/** Atomic JSON persistence: write a temp file, fsync it, rename over the target, fsync the folder. */
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';

export async function writeJsonAtomic(file: string, data: unknown): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.tmp`);
  const fh = await open(tmp, 'w', 0o600);
  try {
    try {
      await fh.writeFile(JSON.stringify(data));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    // Nothing half-written stays beside the target (a full disk would otherwise gain a temp file at every save).
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  try {
    const dir = await open(dirname(file), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}

/** Read a state file; undefined when it does not exist. */
export async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // (EISDIR, for one, names no path)
    throw new Error(`sandbox data file ${file} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`sandbox data file ${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}
