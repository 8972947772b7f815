/**
 * The apply of a reconcile runs on the clock it is given (ReconcileOptions.clock): deadlines, the poller and the
 * durations of outcomes are in that clock's milliseconds. govops and the sandbox share a clock the test moves, so a
 * 10-second transition takes no real time, and what is measured is exact however busy the machine.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/api/client.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { silentLogger } from '../../src/log.js';
import { ManualClock } from '../helpers/clock.js';
import { engineOptions } from '../helpers/engine-options.js';
import { trackApi, type TrackedApi } from '../helpers/tracked-api.js';
import { lakeManifest, rig, type Rig } from '../apply/inproc.js';

let r: Rig;
let clock: ManualClock;
let tracked: TrackedApi<ServiceClient>;
beforeEach(async () => {
  clock = new ManualClock();
  r = await rig({ transitionMs: 10_000, clock });
  tracked = trackApi(r.api, clock);
});
afterEach(async () => {
  await r.close();
});

describe('reconcile on an injected clock', () => {
  it('the apply waits out the transition on the clock: the outcome lasts the transition in clock time, polled on it', async () => {
    await r.write('lake.yaml', lakeManifest('lake', 'lake.example.com'));
    r.env.GOVOPS_SECRET_LAKE_TOKEN = 'lake-token-value-1';
    const started = clock.now();
    const res = await clock.runUntil(
      reconcile(
        tracked.api,
        engineOptions({
          root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath,
          env: r.env, clock, timeoutMs: 60_000, pollIntervalMs: 20, pollMaxIntervalMs: 5_000, pollListThreshold: Infinity,
        }),
      ),
    );
    expect(res.ok, res.error).toBe(true);
    expect(res.outcomes?.map((o) => `${o.action} ${o.result}`)).toEqual(['create ok']);
    // measured on the clock: the 10 s transition, and not much more (the poll intervals grow by half the time waited)
    expect(res.outcomes![0]!.durationMs).toBeGreaterThanOrEqual(10_000);
    expect(res.outcomes![0]!.durationMs).toBeLessThanOrEqual(15_000);
    const polls = tracked.calls.filter((c) => c.method === 'getIntegrationStatus').map((c) => c.at - started);
    expect(polls.at(-1)).toBeGreaterThanOrEqual(10_000);
  });
});
