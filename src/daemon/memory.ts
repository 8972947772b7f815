/**
 * Giving memory back after a reconcile. A reconcile of 10,000 resources allocates a hundred megabytes or
 * so (manifests resolved, live lists, plans) that are garbage once it ends; left to itself V8 grows the
 * heap for them and keeps it, so a daemon that idles between resyncs holds its peak. A full collection
 * after each reconcile (the daemon idles then) keeps its footprint near what it really holds.
 * `gc` is reached without starting node with --expose-gc: the flag is set, and `gc` taken from a new
 * context (it is not added to the main one).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

/** Run a full garbage collection (when the runtime allows it; otherwise nothing). */
export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const fn = runInNewContext('gc') as unknown;
      gc = typeof fn === 'function' ? (fn as () => void) : null;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
