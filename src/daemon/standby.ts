/**
 * The reconcile of a replica under leader election: the leader reconciles as usual, bound to its
 * leadership (losing it aborts the reconcile at once); a standby only loads and plans (never writes), so
 * it is ready to take over with the revision validated. A revision a standby planned in place of applying
 * is applied as soon as this replica leads (`resubmit`).
 */
import type { Revision } from '../sources/types.js';
import type { LeaderElector } from './leader.js';
import type { ReconcileFn } from './loop.js';

/**
 * Deferred revisions remembered: the newest ones. Only a revision the loop reconciles again matters (the latest,
 * and a few before it while they are retried); a standby that never leads would otherwise keep one id per revision.
 */
export const DEFERRED_KEPT = 64;

export function leaderReconcileFn(inner: ReconcileFn, elector: Pick<LeaderElector, 'isLeading' | 'signal'>, resubmit: (revision: Revision) => void): ReconcileFn {
  /** Revisions planned by a standby where a leader would have applied them (the newest DEFERRED_KEPT, oldest first). */
  const deferred = new Set<string>();
  return async (req) => {
    const leading = elector.isLeading();
    const wanted = req.apply || (req.reason !== 'resync' && deferred.has(req.revision.id));
    if (!leading) {
      if (req.apply) {
        deferred.delete(req.revision.id);
        deferred.add(req.revision.id);
        if (deferred.size > DEFERRED_KEPT) deferred.delete(deferred.values().next().value!);
      }
      const result = await inner({ ...req, apply: false });
      // Elected while planning: the revision is applied next.
      if (wanted && elector.isLeading()) setImmediate(() => resubmit(req.revision));
      // What a standby plans is the leader's to apply: not drift of this replica's, nor "applied".
      return { ...result, changed: false, ...(req.apply ? { plannedOnly: true as const } : {}) };
    }
    deferred.delete(req.revision.id);
    const lost = elector.signal;
    return inner({ ...req, apply: wanted, signal: AbortSignal.any([req.signal, lost]), forceSignal: AbortSignal.any([req.forceSignal, lost]) });
  };
}
