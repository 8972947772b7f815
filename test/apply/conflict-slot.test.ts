/**
 * `--concurrency` bounds dry runs and writes in flight, not transitions (docs/decisions.md, "Pipelined"): a write
 * answered 409 (the integration is in someone else's transition) waits for it to settle without holding a slot.
 * Real sandbox over HTTP; govops and the sandbox share one clock the test moves (helpers/clock.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/api/client.js';
import { applyPlan, type ApplyResult } from '../../src/apply/applier.js';
import { silentLogger } from '../../src/log.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredIntegration } from '../../src/plan/types.js';
import { loadState } from '../../src/state/store.js';
import type { GovopsState } from '../../src/state/types.js';
import type { ManualClock } from '../helpers/clock.js';
import type { TrackedApi } from '../helpers/tracked-api.js';
import { integration, KEY, SHAPES } from '../plan/fixtures.js';
import { clockRig, type Rig } from './inproc.js';

let r: Rig;
let clock: ManualClock;
let tracked: TrackedApi<ServiceClient>;
let persist: (s: GovopsState) => Promise<void>;
beforeEach(async () => {
  ({ r, clock, tracked, persist } = await clockRig({ transitionMs: 300 }));
});
afterEach(async () => {
  r.sandbox.setStuckTransitions(false);
  await r.close();
});

const lake = (n: number, httpPath = '/sql/1'): DesiredIntegration =>
  integration(`lake${n}`, 'lakehouse', { workspaceUrl: `https://lake${n}.example.com`, httpPath, token: `tok-slot-${n}` });

async function apply(desired: DesiredIntegration[], concurrency: number, signal?: AbortSignal): Promise<ApplyResult> {
  const state: GovopsState = { ...(await loadState(r.statePath)), fingerprintKey: KEY };
  const live = { integrations: await r.api.listIntegrations(), webhooks: await r.api.listWebhooks() };
  const plan = planChanges({ shapes: SHAPES, desired, live, state, options: { prune: false, allowReplace: false } });
  return clock.runUntil(
    applyPlan({
      api: tracked.api, plan, desired, state, logger: silentLogger(), clock, persist, ...(signal ? { signal } : {}),
      tuning: { concurrency, timeoutMs: 10_000, pollIntervalMs: 20, pollMaxIntervalMs: 200, pollListThreshold: Infinity },
    }),
  );
}

describe('a write answered 409', () => {
  it('--concurrency 1: while one update waits out someone else\'s edit (409), another resource is created meanwhile', async () => {
    expect((await apply([lake(1)], 1)).ok).toBe(true);
    // someone else edits lake1, and that edit takes long (held until the test lets it end)
    r.sandbox.setStuckTransitions(['editing']);
    const other = lake(1, '/sql/other');
    await r.api.updateIntegration('1', other.body);
    r.sandbox.clearRequests();
    const start = clock.now();
    let done = false;
    const applying = apply([lake(1, '/sql/2'), lake(2)], 1).finally(() => (done = true));
    // lake2's create does not wait behind lake1's conflict: it is sent while lake1 is still editing
    await clock.runUntil(() => done || r.lines().some((l) => l.startsWith('POST /integrations 200')));
    expect(done).toBe(false);
    expect(r.lines()).toContain('PUT /integrations/1?dryRun=true 409');
    expect(clock.now() - start).toBeLessThan(1000);
    r.sandbox.setStuckTransitions(false);
    const res = await applying;
    expect(res.outcomes.find((o) => o.name === 'lake2')).toMatchObject({ result: 'ok' });
    expect(res.outcomes.find((o) => o.name === 'lake1')).toMatchObject({ result: 'ok' });
    expect((await r.api.getIntegration('1')).config.httpPath).toBe('/sql/2');
  });

  it('stopped (SIGTERM) while it waits outside its slot: the apply returns at once, the waiting update cancelled', async () => {
    expect((await apply([lake(1)], 1)).ok).toBe(true);
    r.sandbox.setStuckTransitions(['editing']);
    await r.api.updateIntegration('1', lake(1, '/sql/other').body);
    r.sandbox.clearRequests();
    const stop = new AbortController();
    let done = false;
    const applying = apply([lake(1, '/sql/2'), lake(3)], 1, stop.signal).finally(() => (done = true));
    await clock.runUntil(() => done || r.lines().includes('PUT /integrations/1?dryRun=true 409'));
    const at = clock.now();
    stop.abort();
    const res = await applying;
    expect(clock.now() - at).toBeLessThan(1000);
    expect(res.outcomes.find((o) => o.name === 'lake1')).toMatchObject({ result: 'failed', code: 'GOVOPS_CANCELLED' });
    expect(r.lines().filter((l) => l.startsWith('PUT /integrations/1 '))).toEqual([]);
  });
});
