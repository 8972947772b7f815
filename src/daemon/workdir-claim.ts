/**
 * One work folder, one daemon. A daemon keeps only its own revision folders in its work folder (`retain`) and clears
 * them at start; two daemons given one folder (two environments' daemons on one host with their state files in one
 * folder: the default work folder is `work/` beside the state file) removed each other's, and each one's resyncs then
 * failed on a folder the other had removed. At start the daemon records itself in the folder (`.govops-daemon`: pid,
 * host, state); a live daemon of another state recorded there, on this host, refuses the start. A record whose process
 * is gone (a crash, a restart) is taken over; the record is removed at shutdown. An exclusive claim (claimWorkdir): of
 * two daemons started in the same instant, one records itself and the other finds its record.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { ensureDir } from '../util/fs.js';
import { isPgLocation } from '../state/location.js';
import { redactUrl } from '../sources/redact.js';
import { WORK_DIR } from '../sources/types.js';
import { leftBySamePid, ownLockTokens, pidAlive } from '../util/pid.js';
import { sleep, systemClock, type Clock } from '../util/clock.js';

export const WORKDIR_CLAIM = '.govops-daemon';

interface Claim {
  pid: number;
  hostname: string;
  /** The state the daemon works for: the state file's absolute path, or the PostgreSQL location without credentials. */
  state: string;
}

function parseClaim(text: string): Claim | undefined {
  try {
    const v = JSON.parse(text) as Partial<Claim>;
    return typeof v.pid === 'number' && typeof v.hostname === 'string' && typeof v.state === 'string' ? (v as Claim) : undefined;
  } catch {
    return undefined;
  }
}

/** How a state is named in the claim (and in the refusal): never a password. */
export function stateIdentity(statePath: string): string {
  return isPgLocation(statePath) ? redactUrl(statePath) : resolve(statePath);
}

/** Injected in tests: this process as the claim records it, and how a pid is known to be alive. */
export interface ClaimOptions {
  pid?: number;
  alive?: (pid: number) => boolean;
  /** The waits for the claim's lock (default the system's). */
  clock?: Clock;
}

/** A `.lock` held longer than this is taken over: it is held for a few file operations, never across a wait. */
const LOCK_WAIT_MS = 5_000;

/** Codes of a file system without hard links (some SMB mounts): the claim is then an O_EXCL copy. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Make `to` a hard link of `from`; false when `to` exists (the exclusive create: atomic, `to` whole at once). Where
 * hard links are not supported, an exclusive copy (O_EXCL: just as exclusive, though a reader may see it empty for
 * the instant of the copy).
 */
async function linked(from: string, to: string): Promise<boolean> {
  try {
    try {
      await link(from, to);
    } catch (err) {
      if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      await copyFile(from, to, constants.COPYFILE_EXCL);
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** A file's text, or undefined when it is gone. */
async function textOf(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Record this daemon in `workdir`, or refuse when a live daemon of another state has; returns the release.
 *
 * An exclusive claim: the record is written whole to a file of this process's own and hard-linked as `.govops-daemon`
 * (link fails when the name exists, on every local file system and NFS), so of two daemons started at once one
 * creates it and the other finds it. Replacing or removing a record (one whose process is gone, one of the same state,
 * another host's, the release at shutdown) happens only under `.govops-daemon.lock`, taken the same way: a record
 * read under it cannot change before it is replaced. A lock whose process is gone, or held for 5 s, is taken over, by
 * one process only (`removeIf`).
 */
export async function claimWorkdir(workdir: string, statePath: string, options: ClaimOptions = {}): Promise<() => Promise<void>> {
  await ensureDir(workdir, WORK_DIR);
  const pid = options.pid ?? process.pid;
  const alive = options.alive ?? pidAlive;
  const clock = options.clock ?? systemClock;
  const file = join(workdir, WORKDIR_CLAIM);
  const state = stateIdentity(statePath);
  const mine: Claim = { pid, hostname: hostname(), state };
  const text = `${JSON.stringify(mine)}\n`;
  const refuses = (held: Claim | undefined): held is Claim =>
    held !== undefined && held.state !== state && held.hostname === mine.hostname && held.pid !== pid && alive(held.pid);
  const refusal = (held: Claim): UserError =>
    new UserError(
      `the work folder ${resolve(workdir)} is in use by another govops run (process ${held.pid}, state ${held.state})`,
      `give each daemon its own --workdir (by default it is work/ beside the state file: two daemons sharing one remove each other's revision folders); if process ${held.pid} is no govops, delete ${file}`,
    );
  const lock = (): Promise<() => Promise<void>> => lockClaims(workdir, mine, alive, clock);

  const own = join(workdir, `${WORKDIR_CLAIM}.${pid}.${randomUUID()}`);
  await writeFile(own, text, { mode: 0o600, flag: 'wx' });
  try {
    if (!(await linked(own, file))) {
      const unlock = await lock();
      try {
        for (;;) {
          const there = await textOf(file);
          const held = there === undefined ? undefined : parseClaim(there);
          if (refuses(held)) throw refusal(held);
          if (there !== undefined) {
            // a crashed daemon's record, this state's, another host's, or unreadable: replaced (under the lock)
            await rename(own, file);
            break;
          }
          // gone meanwhile (released): created as at first, unless someone else just did
          if (await linked(own, file)) break;
        }
      } finally {
        await unlock();
      }
    }
  } finally {
    await rm(own, { force: true });
  }
  return async () => {
    const unlock = await lock();
    try {
      const now = parseClaim((await textOf(file)) ?? '');
      if (now?.pid === pid && now.hostname === mine.hostname && now.state === state) await rm(file, { force: true });
    } finally {
      await unlock();
    }
  };
}

/** The lock's holder as its file records it: the claim's fields and the token of this one taking. */
interface Holder extends Claim {
  token?: string;
}

/** Take `.govops-daemon.lock` (waiting while another process holds it); returns its release. */
async function lockClaims(workdir: string, mine: Claim, alive: (pid: number) => boolean, clock: Clock): Promise<() => Promise<void>> {
  const path = join(workdir, `${WORKDIR_CLAIM}.lock`);
  const text = await take(path, mine, alive, clock);
  return async () => {
    await removeIf(path, digest(text), mine, alive, clock);
    ownLockTokens.delete((parseClaim(text) as Holder).token!);
  };
}

/** What tells one lock file from another (its token is in it): a digest of its text. */
const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * Create `path` whole with this process's record (waiting while a live process holds it); returns the text written.
 * A holder whose process is gone (its pid dead on this host, or our own pid with a token this process never used: a
 * predecessor's, as after a container restart) is taken over at once, any holder after 5 s; through `removeIf`.
 */
async function take(path: string, mine: Claim, alive: (pid: number) => boolean, clock: Clock): Promise<string> {
  const token = randomUUID();
  ownLockTokens.add(token);
  const text = `${JSON.stringify({ ...mine, token })}\n`;
  const own = `${path}.${mine.pid}.${token}`;
  const since = clock.monotonic();
  try {
    await writeFile(own, text, { mode: 0o600, flag: 'wx' });
    while (!(await linked(own, path))) {
      const there = await textOf(path);
      if (there === undefined) continue; // released meanwhile
      const holder = parseClaim(there) as Holder | undefined;
      const gone =
        holder !== undefined &&
        holder.hostname === mine.hostname &&
        (holder.pid === mine.pid ? leftBySamePid(holder, mine) : !alive(holder.pid));
      if (gone || clock.monotonic() - since >= LOCK_WAIT_MS) await removeIf(path, digest(there), mine, alive, clock);
      else await sleep(clock, 5);
    }
  } catch (err) {
    ownLockTokens.delete(token);
    throw err;
  } finally {
    await rm(own, { force: true });
  }
  return text;
}

/**
 * Remove `path` if it still is the file whose text has digest `id`. Read-then-remove alone is not exclusive: of two
 * processes taking over one stale lock, the second removed the lock the first had just created, and both held it.
 * So `path` is removed only by the holder of its guard, `.govops-daemon.unlock.<id>` (taken like the lock, a stale
 * guard taken over the same way): while it is held, the file at `path` cannot change from `id` to another.
 */
async function removeIf(path: string, id: string, mine: Claim, alive: (pid: number) => boolean, clock: Clock): Promise<void> {
  const guard = join(dirname(path), `${WORKDIR_CLAIM}.unlock.${id}`);
  const held = await take(guard, mine, alive, clock);
  try {
    const there = await textOf(path);
    if (there !== undefined && digest(there) === id) await rm(path, { force: true });
  } finally {
    await rm(guard, { force: true });
    ownLockTokens.delete((parseClaim(held) as Holder).token!);
  }
}
