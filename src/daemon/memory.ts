/**
 * Giving memory back after a reconcile. A reconcile of 10,000 resources allocates a hundred megabytes or
 * so (manifests resolved, live lists, plans) that are garbage once it ends; left to itself V8 grows the
 * heap for them and keeps it, so a daemon that idles between resyncs holds its peak. A full collection
 * after each reconcile (the daemon idles then) keeps its footprint near what it really holds.
 * `gc` is reached without starting node with --expose-gc: the flag is set, and `gc` taken from a new
 * context (it is not added to the main one). That is decided once, when the daemon starts (`garbageCollector`),
 * never after a reconcile; nothing here is module state.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The full collection to run after each reconcile, chosen once at start (a no-op when the runtime refuses). */
export function garbageCollector(): () => void {
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    if (typeof fn === 'function') return fn as () => void;
  } catch {
    // no gc: nothing to run
  }
  return () => {};
}
