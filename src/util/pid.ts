/** Whether a process of this id lives on this host (one we may not signal, EPERM, lives too). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Tokens of the locks this process is publishing or holds (added before its lock file is written: no window). A lock
 * file carrying this process's pid and host with a token not among them was left by an earlier process with the same
 * pid, as after a container restart (a fresh PID namespace gives the new process the old one's pid, the pod keeps its
 * host name): the state lock (state/lock.ts) and the work folder's claim lock (daemon/workdir-claim.ts).
 */
export const ownLockTokens = new Set<string>();

/** A lock holder with our pid on our host whose token this process never used: an earlier process's (see ownLockTokens). */
export function leftBySamePid(holder: { pid: number; hostname: string; token?: string }, me: { pid: number; hostname: string }): boolean {
  return holder.hostname === me.hostname && holder.pid === me.pid && !ownLockTokens.has(holder.token ?? '');
}
