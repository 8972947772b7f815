/**
 * Giving memory back after a reconcile. A reconcile of 10,000 resources allocates a hundred megabytes or
 * so (manifests resolved, live lists, plans) that are garbage once it ends; left to itself V8 grows the
 * heap for them and keeps it, so a daemon that idles between resyncs holds its peak. A full collection
 * after each reconcile (the daemon idles then) keeps its footprint near what it really holds.
 * `gc` is reached without starting node with --expose-gc: the flag is set, and `gc` taken from a new
 * context (it is not added to the main one). That is decided once, when the daemon starts (`garbageCollector`),
 * never after a reconcile; nothing here is module state.
 *
 * Two V8 flags, set here because they take effect after start (issue #26; both measured, docs/decisions.md):
 * - `--semi-space-growth-factor=1`: the young generation stays at its initial size (1 MB semi-spaces). V8
 *   doubles it up to 16 MB semi-spaces (32 MB committed) as a reconcile's objects survive scavenges, and never
 *   shrinks it while the daemon is busy every few seconds: 32 MB of an idle daemon's heap held nothing.
 *   The growth factor is read each time the space would grow, so setting it after start takes effect.
 * - compaction on the collection after a reconcile only (`--compact-on-every-full-gc`, set around that one
 *   call): V8's heuristics leave old-space pages a few objects keep alive, so the committed old space crept up
 *   resync after resync while what it held stayed flat. The daemon is idle then; the collections during a
 *   reconcile keep V8's heuristics.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The full collection to run after each reconcile, chosen once at start (a no-op when the runtime refuses). */
export function garbageCollector(): () => void {
  try {
    setFlagsFromString('--expose-gc');
    setFlagsFromString('--semi-space-growth-factor=1');
    const fn = runInNewContext('gc') as unknown;
    if (typeof fn === 'function') {
      const gc = fn as () => void;
      return () => {
        setFlagsFromString('--compact-on-every-full-gc');
        try {
          gc();
        } finally {
          setFlagsFromString('--no-compact-on-every-full-gc');
        }
      };
    }
  } catch {
    // no gc: nothing to run
  }
  return () => {};
}
