/** Notification events (src/daemon/notify-event.ts) of a plan with a `settle` (an owned integration still creating or editing). */
import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../src/daemon/loop.js';
import { eventFor, eventSignature } from '../../src/daemon/notify-event.js';
import type { PlanChange } from '../../src/plan/types.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { planOf } from '../helpers/plans.js';

const at = '2026-01-01T00:00:00.000Z';
const change = (c: Partial<PlanChange> & Pick<PlanChange, 'name' | 'action'>): PlanChange =>
  ({ resourceKind: 'Integration', adopt: false, changes: [], reasons: [], ...c }) as PlanChange;
const drifted = change({
  name: 'sql', action: 'update', liveId: '1',
  changes: [{ path: 'config.port', before: 1444, after: 1433, sensitive: false, forcesReplace: false }],
});
const settling = change({ name: 'lake', action: 'settle', liveId: '2', reasons: [{ code: 'settling', message: 'status editing: waited for' }] });
const resync = (changes: PlanChange[]): Attempt => ({
  revision: 'rev1', reason: 'resync', apply: false, verdict: 'drift', startedAt: at, finishedAt: at, durationSec: 0.1,
  result: { stage: 'done', ok: true, diagnostics: [], plan: planOf(changes), outcomes: [], changed: true } as unknown as ReconcileResult,
});
const ctx = { id: 'e1', time: at, source: '/govops', observe: false };

describe('drift event with an integration still settling', () => {
  it('counts and lists only what differs: the settle is no change, and its coming and going is no new drift to tell', () => {
    const withSettle = eventFor(resync([drifted, settling]), ctx)!;
    const without = eventFor(resync([drifted]), ctx)!;
    expect(withSettle.data.resources.map((r) => r.name)).toEqual(['sql']);
    expect(withSettle.data.message).toBe('revision rev1: drift detected, 1 change not applied (--self-heal is off)');
    // the same drift at the next resync, the integration's edit ended meanwhile: not sent again
    expect(eventSignature(withSettle)).toBe(eventSignature(without));
  });
});
