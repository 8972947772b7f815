/**
 * `mkdir -p` that explains itself. Node's recursive mkdir reports a path under a file as a bare
 * `EEXIST`/`ENOTDIR`, a dangling symbolic link as `ENOENT`, and on a virtual file system such as
 * /proc (where mkdir answers ENOENT although the parent exists) it loops forever in the thread pool,
 * ignoring signals. This walks the path one component at a time and fails with a UserError naming the
 * component that is in the way and why.
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, UserError } from '../errors.js';

export interface EnsureDirOptions {
  /** What the folder is for, e.g. `the folder of the state file`. */
  what: string;
  /** How to fix it (e.g. which flag chooses another path). */
  hint: string;
  /** Mode of the folders created (default 0o777 minus the umask). */
  mode?: number;
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

export async function ensureDir(dir: string, opts: EnsureDirOptions): Promise<void> {
  const abs = path.resolve(dir);
  const fail = (why: string): UserError =>
    new UserError(`cannot create ${opts.what} ${abs}: ${why}`, opts.hint, { code: ErrorCode.userError });
  // Fast path: it is there already.
  if ((await stat(abs).catch(() => undefined))?.isDirectory()) return;
  const { root } = path.parse(abs);
  let current = root;
  for (const part of abs.slice(root.length).split(path.sep).filter(Boolean)) {
    const parent = current;
    current = path.join(current, part);
    let st = await lstat(current).catch((err: unknown) => {
      if (errno(err) === 'ENOENT') return undefined;
      throw fail(`${current} cannot be read (${errno(err) ?? (err as Error).message})`);
    });
    if (st?.isSymbolicLink()) {
      const target = await stat(current).catch(() => undefined);
      if (!target) throw fail(`${current} is a symbolic link to something that does not exist`);
      st = target;
    }
    if (st) {
      if (!st.isDirectory()) throw fail(`${current} is a file, not a folder`);
      continue;
    }
    try {
      await mkdir(current, opts.mode !== undefined ? { mode: opts.mode } : {});
    } catch (err) {
      const code = errno(err);
      if (code === 'EEXIST' && (await stat(current).catch(() => undefined))?.isDirectory()) continue; // made meanwhile
      if (code === 'EACCES' || code === 'EPERM') throw fail(`no permission to create folders in ${parent}`);
      if (code === 'EROFS') throw fail(`${parent} is on a read-only file system`);
      if (code === 'ENOSPC') throw fail(`no space left on the device of ${parent}`);
      if (code === 'ENOENT') throw fail(`${parent} does not accept new folders (a virtual file system such as /proc?)`);
      throw fail(`${code ?? ''} ${(err as Error).message}`.trim());
    }
  }
}

const WRITE_ERRORS: Record<string, string> = {
  EISDIR: 'it is a folder',
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'a component of its path is not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'a read-only file system',
  ENOSPC: 'no space left on the device',
};

/**
 * Write `text` to `file` atomically: a temp file of a random name beside it, created exclusively (never through a
 * link someone left at a guessable name), then renamed over `file`. On failure the temp file is removed (no copy
 * of what was written is left behind) and the error is a UserError naming `what` and the file. The file gets `mode`
 * exactly, whatever the umask.
 */
export async function writeFileAtomic(file: string, text: string, opts: { mode: number; what: string }): Promise<void> {
  const tmp = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, text, { mode: opts.mode, flag: 'wx' });
    await chmod(tmp, opts.mode); // the mode asked for, not the mode less the process's umask
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    const code = errno(err);
    const why = WRITE_ERRORS[code ?? ''] ?? code ?? (err as Error).message;
    throw new UserError(`cannot write ${opts.what} to ${file}: ${why}`, undefined, { code: ErrorCode.io });
  }
}
