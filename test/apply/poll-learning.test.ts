/**
 * Status polling learns from the state file (issue #18): what one apply observed about transition times is
 * saved in the state (`transitions`) and aims the first poll of the next apply. Real sandbox over HTTP and a real
 * state file; govops and the sandbox share one clock the test moves (helpers/clock.ts), so the sandbox's 150 ms
 * transitions and govops' polls happen at exact clock times, however busy the machine.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/api/client.js';
import { applyPlan, type ApplyResult } from '../../src/apply/applier.js';
import { silentLogger } from '../../src/log.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredIntegration } from '../../src/plan/types.js';
import { loadState, saveState } from '../../src/state/store.js';
import type { GovopsState } from '../../src/state/types.js';
import type { ManualClock } from '../helpers/clock.js';
import type { TrackedApi } from '../helpers/tracked-api.js';
import { integration, KEY, SHAPES } from '../plan/fixtures.js';
import { clockRig, type Rig } from './inproc.js';

let r: Rig;
let persist: (s: GovopsState) => Promise<void>;
let clock: ManualClock;
let tracked: TrackedApi<ServiceClient>;
beforeEach(async () => {
  ({ r, clock, tracked, persist } = await clockRig({ transitionMs: 150 }));
});
afterEach(async () => {
  await r.close();
});

const lakes = (): DesiredIntegration[] =>
  [1, 2, 3].map((n) => integration(`lake${n}`, 'lakehouse', { workspaceUrl: `https://lake${n}.example.com`, httpPath: '/sql/1', token: `tok-learn-${n}` }));

/** Plan the lakes against the service and the state file, and apply the plan on the clock; the state is saved to the file. */
async function apply(pollMaxIntervalMs?: number): Promise<ApplyResult> {
  const desired = lakes();
  const state: GovopsState = { ...(await loadState(r.statePath)), fingerprintKey: KEY };
  const live = { integrations: await r.api.listIntegrations(), webhooks: await r.api.listWebhooks() };
  const plan = planChanges({ shapes: SHAPES, desired, live, state, options: { prune: false, allowReplace: false } });
  return clock.runUntil(
    applyPlan({
      api: tracked.api,
      plan,
      desired,
      state,
      logger: silentLogger(),
      clock,
      tuning: { pollIntervalMs: 20, pollMaxIntervalMs: pollMaxIntervalMs ?? 200, pollListThreshold: Infinity },
      persist,
    }),
  );
}

const statusPolls = (id: string): number[] => tracked.calls.filter((c) => c.method === 'getIntegrationStatus' && c.arg === id).map((c) => c.at);

describe('poll learning persisted in the state file', () => {
  it('a first apply (nothing learned) records a bracket per created integration in the state', async () => {
    const res = await apply();
    expect(res.ok).toBe(true);
    const brackets = (await loadState(r.statePath)).transitions?.['lakehouse/create'];
    expect(brackets).toHaveLength(3);
    for (const [lo, hi] of brackets!) {
      // the sandbox's transition takes 150 ms of the clock: settled at `hi`, not before
      expect(lo).toBeGreaterThanOrEqual(0);
      expect(lo).toBeLessThan(hi);
      expect(hi).toBeGreaterThanOrEqual(150);
    }
    expect(res.polls.status).toBeGreaterThanOrEqual(3);
  });

  it('the next apply aims its first poll at the learned end: one status request each, none before it', async () => {
    // The state says lakehouse creates take about 1 s (the sandbox takes 150 ms): each integration is polled
    // once, at ~1 s after its create was answered, and is settled by then.
    const learned: Array<[number, number]> = Array.from({ length: 5 }, () => [990, 1000]);
    await saveState(r.statePath, { ...(await loadState(r.statePath)), transitions: { 'lakehouse/create': learned } });
    const res = await apply(5000);
    expect(res.ok).toBe(true);
    const creates = r.sandbox.requests().filter((q) => q.method === 'POST' && q.path === '/integrations' && q.query.dryRun !== 'true');
    expect(creates).toHaveLength(3);
    const ids = res.outcomes.map((o) => o.liveId!);
    expect(ids).toHaveLength(3);
    // sent no earlier than the learned duration (995 ms) after the first create was sent, less the 5 ms within
    // which the poller sends due polls together
    const created = Math.min(...tracked.calls.filter((c) => c.method === 'createIntegration').map((c) => c.at));
    for (const id of ids) {
      const polls = statusPolls(id);
      expect(polls).toHaveLength(1);
      expect(polls[0]! - created).toBeGreaterThanOrEqual(990);
    }
    expect(res.polls).toEqual({ status: 3, lists: 0 });
    // what this apply saw is added to what the state knew: settled at its first look (>= 1 s after the write),
    // taken as ended within the last short interval before it (lo < hi), so a late estimate can move down
    const after = (await loadState(r.statePath)).transitions?.['lakehouse/create'];
    expect(after).toHaveLength(8);
    expect(after!.slice(0, 5)).toEqual(learned);
    for (const [lo, hi] of after!.slice(5)) {
      expect(hi).toBeGreaterThanOrEqual(990);
      expect(lo).toBeLessThan(hi);
    }
  });
});
