/**
 * Suspension (`govops/suspend: "true"`, after Flux `suspend`), pure: a suspended resource is left alone. Its
 * change becomes a `noop` marked `suspended`, with a reason saying what would otherwise be done; extra copies of
 * a suspended webhook are not deleted. A state entry recorded as suspended whose manifest is gone is never
 * pruned while the mark is there.
 */
import type { GovopsState, ManagedResource } from '../state/types.js';
import { reason } from './notes.js';
import type { ResourceChange } from './types.js';

export const SUSPENDED_REASON = 'suspended (govops/suspend: "true"): govops leaves it alone';

function wouldDo(c: ResourceChange): string {
  const fields = c.changes.length ? ` (${c.changes.map((f) => f.path).join(', ')})` : '';
  if (c.action === 'noop') {
    if (c.renamedFrom) return `; otherwise its state entry would be renamed from ${c.renamedFrom}`;
    return c.adopt ? '; otherwise it would be adopted' : '';
  }
  const verb = c.goneFromService
    ? 'forgotten (gone from the service)'
    : c.action === 'settle'
      ? 'waited for until the service settles it'
      : `${c.action === 'adopt' ? 'adopted' : `${c.action}d`}${fields}`;
  return `; otherwise it would be ${c.adopt && c.action !== 'adopt' ? 'adopted and ' : ''}${verb}`;
}

/** The noop a suspended resource's change becomes. */
function suspend(c: ResourceChange, why: string): ResourceChange {
  const out: ResourceChange = {
    resourceKind: c.resourceKind,
    name: c.name,
    action: 'noop',
    adopt: false,
    changes: [],
    reasons: [...c.reasons.filter((r) => r.code !== 'delete-requested'), reason('suspended', `${why}${wouldDo(c)}`)],
    suspended: true,
  };
  if (c.liveId !== undefined && !c.goneFromService) out.liveId = c.liveId;
  if (c.integrationType) out.integrationType = c.integrationType;
  if (c.source) out.source = c.source;
  if (c.ignoredFields) out.ignoredFields = c.ignoredFields;
  return out;
}

/**
 * Mark the changes of suspended resources: `suspended` holds `Kind/name` of suspended manifests. Prune
 * candidates (no manifest) are suspended when their state entry says so.
 */
export function applySuspension(
  changes: readonly ResourceChange[],
  suspended: ReadonlySet<string>,
  state: readonly ManagedResource[],
): ResourceChange[] {
  const recorded = new Set(state.filter((s) => s.suspended).map((s) => `${s.kind}/${s.name}`));
  const out: ResourceChange[] = [];
  for (const c of changes) {
    const key = `${c.resourceKind}/${c.name}`;
    if (suspended.has(key)) {
      if (c.duplicateOf !== undefined) continue; // an extra copy of a suspended webhook: left alone too
      out.push(suspend(c, SUSPENDED_REASON));
    } else if (!c.source && c.action === 'delete' && c.duplicateOf === undefined && recorded.has(key)) {
      out.push(
        suspend(
          c,
          'suspended when last applied (govops/suspend), and its manifest is gone: never pruned while suspended. ' +
            'To delete it, restore the manifest without the annotation and apply, then remove it; or stop managing it with govops state forget',
        ),
      );
    } else out.push(c);
  }
  return out;
}

/**
 * The state with every planned resource's suspension recorded (`suspended` on its entry) or cleared, so a
 * suspended resource whose manifest goes away is still never pruned. Only entries of resources in the plan are
 * touched (a targeted plan leaves the others as they are). Returns the same object when nothing changes.
 */
export function recordSuspension(state: GovopsState, changes: readonly ResourceChange[]): GovopsState {
  const marks = new Map<string, boolean>();
  for (const c of changes) {
    if (!c.source) continue; // a prune candidate keeps what its entry says
    marks.set(`${c.resourceKind}/${c.renamedFrom ?? c.name}`, c.suspended === true);
  }
  let changed = false;
  const resources = state.resources.map((r) => {
    const mark = marks.get(`${r.kind}/${r.name}`);
    if (mark === undefined || (r.suspended === true) === mark) return r;
    changed = true;
    const { suspended: _old, ...rest } = r;
    return mark ? { ...rest, suspended: true } : rest;
  });
  return changed ? { ...state, resources } : state;
}
