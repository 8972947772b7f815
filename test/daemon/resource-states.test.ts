/** Per-resource sync state of the daemon (src/daemon/resources.ts: /status resources and pendingChanges, govops_resources). */
import { describe, expect, it } from 'vitest';
import { resourceStates } from '../../src/daemon/resources.js';
import { driftOf } from '../../src/daemon/report.js';
import type { PlanChange } from '../../src/plan/types.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { planOf } from '../helpers/plans.js';

const change = (c: Partial<PlanChange> & Pick<PlanChange, 'name' | 'action'>): PlanChange =>
  ({ resourceKind: 'Integration', adopt: false, changes: [], reasons: [], ...c }) as PlanChange;

const planOnly = (changes: PlanChange[]): ReconcileResult =>
  ({ stage: 'done', ok: true, diagnostics: [], plan: planOf(changes), outcomes: [], changed: false }) as unknown as ReconcileResult;

describe('resource sync states', () => {
  it('an owned integration still creating or editing (settle) that a plan-only run (resync without --self-heal, --observe, a standby) saw is not pending: it differs in nothing, as drift says', () => {
    const settling = change({
      name: 'sql', action: 'settle', liveId: '1', integrationType: 'sql_analytics',
      reasons: [{ code: 'settling', message: 'status editing: waited for until the service settles it (nothing to send)' }],
    });
    const result = planOnly([settling, change({ name: 'gone', action: 'create' })]);
    expect(driftOf(result.plan!).map((d) => d.name)).toEqual(['gone']);
    const states = resourceStates(result);
    const sql = states.find((s) => s.name === 'sql')!;
    // /status pendingChanges and govops_pending_changes count out_of_sync and blocked resources
    expect(sql.syncState).toBe('synced');
    expect(sql.action).toBe('settle');
    expect(sql.reasons).toEqual(['status editing: waited for until the service settles it (nothing to send)']);
    expect(states.find((s) => s.name === 'gone')!.syncState).toBe('out_of_sync');
  });
});
