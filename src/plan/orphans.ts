/** The warning for a managed resource whose manifest is gone and that is not pruned in this plan (pure). */
import type { ManagedResource } from '../state/types.js';
import { warning, type PlanWarning } from './notes.js';
import type { ResourceKind } from './types.js';

export function orphanWarning(kind: ResourceKind, st: ManagedResource, exists: boolean): PlanWarning {
  return warning('orphan', orphanText(kind, st, exists), { kind, name: st.name });
}

function orphanText(kind: ResourceKind, st: ManagedResource, exists: boolean): string {
  const name = st.name;
  if (st.explicitAdopt) return `${kind}/${name} was recorded by govops state adopt but has no manifest: never pruned (govops state forget ${kind}/${name} to drop it)`;
  if (st.suspended && exists) return `${kind}/${name} is managed by govops but has no manifest; it was suspended, so it is never pruned while suspended`;
  return exists
    ? `${kind}/${name} is managed by govops but has no manifest: run with --prune to delete it`
    : `${kind}/${name} is in govops state but gone from the service: run with --prune to forget it`;
}
