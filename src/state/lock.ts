/**
 * A lock file next to the state (`state.json.lock`) so two govops writers never run at once.
 * Created with O_EXCL; holds pid, hostname and time. While held, its mtime is refreshed (heartbeat).
 * A lock is stale when its pid is dead on this host, or it has not been refreshed within the TTL.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs, constants as fsc, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, UserError } from '../errors.js';
import { ensureDir } from '../util/fs.js';
import { STATE_DIR, resolveStatePath } from './store.js';
import { isPgLocation } from './location.js';
import { pgState } from './pg/lazy.js';
import { leftBySamePid, ownLockTokens, pidAlive } from '../util/pid.js';
import type { Clock } from '../util/clock.js';

export interface LockInfo {
  pid: number;
  hostname: string;
  /** ISO time the lock was taken. */
  createdAt: string;
  /** Random token, so a holder only ever releases its own lock. */
  token: string;
}

/** When a lock's holder must be done (an apply's --timeout): on `clock`'s monotonic reading. */
export interface StateDeadline {
  clock: Clock;
  /** `clock.monotonic()` at the deadline. */
  at: number;
  /** The --timeout it comes from (for messages). */
  timeoutMs: number;
}

export interface LockOptions {
  /**
   * A PostgreSQL state: taking the lock, and every query of the state while it is held (its release included), ends by
   * then, typed and transient (GOVOPS_STATE_UNAVAILABLE unanswered, GOVOPS_SETTLE_TIMEOUT not started). A file state's
   * operations are local and short: not bound.
   */
  deadline?: StateDeadline;
  /** A lock not refreshed for this long is stale (default 10 minutes). */
  ttlMs?: number;
  /** Keep trying this long while another live writer holds the lock (default 0: fail at once). */
  waitMs?: number;
  /** Poll interval while waiting (default 100ms). */
  pollMs?: number;
}

export interface StateLock {
  readonly path: string;
  readonly info: LockInfo;
  release(): Promise<void>;
  /**
   * A PostgreSQL state's lock: throws GOVOPS_STATE_FENCED once its session has ended (killed, the server restarted),
   * naming `what` was not sent. A file lock has none (its writes check `assertLockStillHeld`).
   */
  assertHeld?(what?: string): void;
}

export const DEFAULT_LOCK_TTL_MS = 10 * 60_000;

export function lockPathFor(statePath: string): string {
  return `${statePath}.lock`;
}

function parseLock(raw: string): LockInfo | undefined {
  try {
    const v = JSON.parse(raw) as LockInfo;
    return typeof v.pid === 'number' && typeof v.hostname === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

async function readLock(file: string): Promise<{ info: LockInfo | undefined; mtimeMs: number; raw: string } | undefined> {
  try {
    const [raw, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    return { info: parseLock(raw), mtimeMs: st.mtimeMs, raw };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Why a lock is stale, or undefined when it is live. Pure apart from the pid probe. */
export function staleReason(info: LockInfo | undefined, mtimeMs: number, now: number, ttlMs: number): string | undefined {
  if (info && info.hostname === os.hostname() && !pidAlive(info.pid)) return `process ${info.pid} is not running`;
  // This very process, with a token it never published: an earlier process with the same pid on this host.
  if (info && leftBySamePid(info, { pid: process.pid, hostname: os.hostname() })) {
    return `process ${info.pid} is this process, which does not hold it (left by an earlier process with the same pid)`;
  }
  if (now - mtimeMs > ttlMs) return `not refreshed for ${Math.round((now - mtimeMs) / 1000)}s`;
  return undefined; // live (an unreadable but fresh lock may be being written right now)
}

function describe(info: LockInfo | undefined): string {
  return info ? `process ${info.pid} on ${info.hostname} since ${info.createdAt}` : 'an unknown process';
}

/** The locks this process holds on state files: the lock file's absolute path → our token (see `assertLockStillHeld`). */
const heldTokens = new Map<string, string>();

/**
 * The fence of a file state's writes: throws GOVOPS_STATE_FENCED when this process took the lock of the state file
 * `statePath` (a symbolic link already followed) and the lock file no longer carries its token: the lock was judged
 * stale and taken by another writer (this process was suspended with Ctrl-Z, or its host slept, past the TTL; or the
 * lock file was deleted by hand). Its writes would otherwise land over the new holder's, whose records are then lost.
 * A state this process holds no lock on is not checked.
 */
export function assertLockStillHeld(statePath: string): void {
  if (heldTokens.size === 0) return;
  const file = path.resolve(lockPathFor(statePath));
  const token = heldTokens.get(file);
  if (token === undefined) return;
  // Read synchronously: a few µs for a file of one line, before every save of an apply (an asynchronous read and stat
  // cost ~15x the CPU), and nothing runs between the check and the write it guards.
  let raw: string | undefined;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    raw = undefined;
  }
  const current = raw === undefined ? undefined : parseLock(raw);
  if (current?.token === token) return;
  throw new UserError(
    `state write refused: the lock of ${statePath} is no longer this process's (${raw !== undefined ? `now held by ${describe(current)}` : 'the lock file is gone'})`,
    'another govops writer took the state over (this one was suspended or unreachable past the lock TTL): nothing more is written or sent; run again once it is done',
    { code: ErrorCode.stateFenced },
  );
}

/** The PostgreSQL state locks this process holds, by the state location they were taken with (`assertStateLockHeld`). */
const heldPgLocks = new Map<string, StateLock>();

/**
 * The write gate of a service client whose writes are made under the lock of the state at `statePath` (`govops apply`):
 * throws GOVOPS_STATE_FENCED, `what` unsent, once the PostgreSQL lock this process took is lost (its session ended:
 * another writer may take the lock meanwhile). Synchronous (asked before every write and again as it leaves). A file
 * state, or no lock held, passes.
 */
export function assertStateLockHeld(statePath: string, what?: string): void {
  heldPgLocks.get(statePath)?.assertHeld?.(what);
}

/** The state's lock: the lock file beside a state file, or the state key's lock in PostgreSQL (src/state/pg/). */
export async function acquireStateLock(statePath: string, options: LockOptions = {}): Promise<StateLock> {
  if (isPgLocation(statePath)) {
    const lock = await (await pgState(statePath)).acquireLock(options);
    heldPgLocks.set(statePath, lock);
    return {
      ...lock,
      release: async () => {
        if (heldPgLocks.get(statePath) === lock) heldPgLocks.delete(statePath);
        await lock.release();
      },
    };
  }
  // Beside the file a symbolic link names: one lock whichever path to the state a writer was given.
  const file = lockPathFor(await resolveStatePath(statePath));
  const ttlMs = options.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  const deadline = performance.now() + (options.waitMs ?? 0); // monotonic: the time of day may be set meanwhile
  await ensureDir(path.dirname(path.resolve(file)), STATE_DIR);
  const info: LockInfo = { pid: process.pid, hostname: os.hostname(), createdAt: new Date().toISOString(), token: randomBytes(8).toString('hex') };
  ownLockTokens.add(info.token);
  try {
    return await acquireLoop(statePath, file, info, ttlMs, deadline, options);
  } catch (err) {
    ownLockTokens.delete(info.token);
    throw lockWriteError(statePath, file, err);
  }
}

/** Why the lock file could not be written, by errno (the folder exists: ensureDir made it or said why not). */
const LOCK_WRITE_ERRORS: Readonly<Record<string, string>> = {
  EACCES: 'no permission to create files in it',
  EPERM: 'no permission to create files in it',
  EROFS: 'it is on a read-only file system',
  ENOSPC: 'no space left on its device',
  EDQUOT: 'the disk quota is exhausted',
};

/**
 * A lock file that cannot be written, as a UserError naming the state and its folder. Node's error named only the
 * lock's temporary file (`EACCES: permission denied, open '.../state.json.lock.1234.0a1b2c3d.tmp'`), without saying it
 * was the lock, for which state, or what to do. Other errors are returned as they are.
 */
function lockWriteError(statePath: string, file: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const why = code === undefined ? undefined : LOCK_WRITE_ERRORS[code];
  if (why === undefined || err instanceof UserError) return err;
  const dir = path.dirname(path.resolve(file));
  return new UserError(
    `cannot take the lock of the govops state ${statePath}: its folder ${dir} cannot be written (${why}; ${code})`,
    'govops locks a state file with a file beside it, even to read it (state list, show): run as a user who can write that folder, or give a --state (GOVOPS_STATE) in one',
    { code: ErrorCode.io },
  );
}

async function acquireLoop(statePath: string, file: string, info: LockInfo, ttlMs: number, deadline: number, options: LockOptions): Promise<StateLock> {
  for (;;) {
    if (await publish(file, info)) return held(file, info, ttlMs);
    const current = await readLock(file);
    if (!current) continue; // released between our open and our read
    const stale = staleReason(current.info, current.mtimeMs, Date.now(), ttlMs);
    if (stale) {
      await breakStale(file, current.raw);
      continue;
    }
    if (performance.now() >= deadline) {
      throw new UserError(
        `the govops state ${statePath} is locked by ${describe(current.info)}`,
        `another govops plan/apply/run is writing it; wait for it to finish. If no such process exists, delete ${file}`,
        { code: ErrorCode.stateLocked },
      );
    }
    await sleep(options.pollMs ?? 100);
  }
}

/**
 * Create the lock file with its content in one step: written and synced under a private name, then hard-linked
 * to the lock's name (which fails if it exists). A contender never reads a lock half written (an empty file
 * would name no process). False when the lock exists.
 */
async function publish(file: string, info: LockInfo): Promise<boolean> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fs.open(tmp, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, 0o600);
  try {
    try {
      await handle.writeFile(`${JSON.stringify(info)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.link(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Move a stale lock aside (atomic rename), then check we moved the one we judged stale. */
async function breakStale(file: string, judgedRaw: string): Promise<void> {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = await fs.readFile(aside, 'utf8').catch(() => judgedRaw);
  if (moved !== judgedRaw) {
    // Someone else broke it and took a fresh lock in between: put theirs back if the slot is free.
    await fs.link(aside, file).catch(() => undefined);
  }
  await fs.rm(aside, { force: true });
}

function held(file: string, info: LockInfo, ttlMs: number): StateLock {
  const key = path.resolve(file);
  heldTokens.set(key, info.token);
  const beat = setInterval(() => {
    const now = new Date();
    fs.utimes(file, now, now).catch(() => undefined);
  }, Math.max(50, Math.floor(ttlMs / 4)));
  beat.unref();
  let released = false;
  return {
    path: file,
    info,
    async release() {
      if (released) return;
      released = true;
      clearInterval(beat);
      if (heldTokens.get(key) === info.token) heldTokens.delete(key);
      const current = await readLock(file);
      if (current?.info?.token === info.token) await fs.rm(file, { force: true });
      ownLockTokens.delete(info.token);
    },
  };
}

/** Run `fn` while holding the state lock; always released afterwards. */
export async function withStateLock<T>(statePath: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lock = await acquireStateLock(statePath, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
