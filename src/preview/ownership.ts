/**
 * Ownership without a state file (pure). A CI job has no daemon state; planning against an empty state
 * would call every live resource "adopted" and every masked credential "changed". The preview instead
 * takes the base revision as what the daemon applied: every resource the base declares that exists in the
 * service (matched by the planner's own identity rules) is managed by govops, with the base's spec and
 * secret fingerprints as last applied. The head is then planned against that state, so a pull request that
 * changes one field shows exactly one change.
 */
import type { Plan, DesiredResource } from '../plan/types.js';
import type { GovopsState, ManagedResource } from '../state/types.js';

export function stateFromBase(fingerprintKey: string, baseDesired: readonly DesiredResource[], basePlan: Plan): GovopsState {
  const desired = new Map(baseDesired.map((d) => [`${d.kind}/${d.name}`, d]));
  const resources: ManagedResource[] = [];
  for (const c of basePlan.changes) {
    const d = desired.get(`${c.resourceKind}/${c.name}`);
    if (!d || c.liveId === undefined || c.action === 'delete') continue;
    const r: ManagedResource = {
      kind: d.kind,
      name: d.name,
      id: c.liveId,
      origin: 'adopted',
      specHash: d.specHash,
      secretFingerprints: { ...d.fingerprints },
      updatedAt: '1970-01-01T00:00:00.000Z',
    };
    if (d.kind === 'Integration') {
      r.type = d.body.type;
      r.autoBootstrap = d.body.autoBootstrap ?? false;
    }
    resources.push(r);
  }
  return { version: 1, fingerprintKey, resources };
}
