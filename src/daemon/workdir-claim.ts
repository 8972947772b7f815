/**
 * One work folder, one daemon. A daemon keeps only its own revision folders in its work folder (`retain`) and clears
 * them at start; two daemons given one folder (two environments' daemons on one host with their state files in one
 * folder: the default work folder is `work/` beside the state file) removed each other's, and each one's resyncs then
 * failed on a folder the other had removed. At start the daemon records itself in the folder (`.govops-daemon`: pid,
 * host, state); a live daemon of another state recorded there, on this host, refuses the start. A record whose process
 * is gone (a crash, a restart) is taken over; the record is removed at shutdown. A check at start, not a lock: two
 * daemons started in the same instant may both pass it.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { ensureDir } from '../util/fs.js';
import { isPgLocation } from '../state/location.js';
import { redactUrl } from '../sources/redact.js';
import { WORK_DIR } from '../sources/types.js';
import { pidAlive } from '../util/pid.js';

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

/** Record this daemon in `workdir`, or refuse when a live daemon of another state has; returns the release. */
export async function claimWorkdir(workdir: string, statePath: string): Promise<() => Promise<void>> {
  await ensureDir(workdir, WORK_DIR);
  const file = join(workdir, WORKDIR_CLAIM);
  const state = stateIdentity(statePath);
  const held = parseClaim(await readFile(file, 'utf8').catch(() => ''));
  if (held && held.state !== state && held.hostname === hostname() && held.pid !== process.pid && pidAlive(held.pid)) {
    throw new UserError(
      `the work folder ${resolve(workdir)} is in use by another govops run (process ${held.pid}, state ${held.state})`,
      `give each daemon its own --workdir (by default it is work/ beside the state file: two daemons sharing one remove each other's revision folders); if process ${held.pid} is no govops, delete ${file}`,
    );
  }
  const mine: Claim = { pid: process.pid, hostname: hostname(), state };
  await writeFile(file, `${JSON.stringify(mine)}\n`, { mode: 0o600 });
  return async () => {
    const now = parseClaim(await readFile(file, 'utf8').catch(() => ''));
    if (now?.pid === process.pid && now.hostname === mine.hostname && now.state === state) await rm(file, { force: true });
  };
}
