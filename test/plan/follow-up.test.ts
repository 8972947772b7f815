/**
 * Interface 2.5: "Changing the `groupPattern.deny` group requires all policies to be pushed again to the cluster."
 * The service does not do it by itself: a plan that changes it says so, or the old group stays exempt from the
 * data policies (unmasked data) until someone re-pushes them.
 */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../src/plan/planner.js';
import { renderText } from '../../src/plan/render-text.js';
import type { DesiredResource, Plan } from '../../src/plan/types.js';
import type { LiveIntegration } from '../../src/api/types.js';
import type { GovopsState } from '../../src/state/types.js';
import { SHAPES, integration, liveOf, owned, stateWith } from './fixtures.js';

function plan(desired: DesiredResource[], live: LiveIntegration[], state: GovopsState): Plan {
  return planChanges({ shapes: SHAPES, desired, live: { integrations: live, webhooks: [] }, state, options: { prune: false, allowReplace: false } });
}

const lake = { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 't' };

describe('lakehouse groupPattern.deny changed: the plan says the policies must be pushed again', () => {
  it('an update of the deny group (set, changed, or back to the default) warns; another update does not', () => {
    const before = integration('lake', 'lakehouse', { ...lake, groupPattern: { deny: 'admins' } });
    for (const deny of ['auditors', undefined]) {
      const after = integration('lake', 'lakehouse', { ...lake, ...(deny ? { groupPattern: { deny } } : {}) });
      const p = plan([after], [liveOf(before, '4')], stateWith(owned(before, '4')));
      expect(p.changes[0]!.action).toBe('update');
      expect(p.warnings.map((w) => w.code)).toEqual(['follow-up']);
      expect(p.warnings[0]!.resource).toEqual({ kind: 'Integration', name: 'lake' });
      expect(renderText(p)).toMatch(/config\.groupPattern\.deny: all data policies must be pushed again to the cluster/);
    }
    const other = integration('lake', 'lakehouse', { ...lake, httpPath: '/sql/2', groupPattern: { deny: 'admins' } });
    expect(plan([other], [liveOf(before, '4')], stateWith(owned(before, '4'))).warnings).toEqual([]);
  });
});
