/**
 * `govops_revision_waiting_seconds` (the alert `> 900` of docs/deploy.md) counts how long a revision has waited, not
 * how far the time of day moved: a step of the wall clock (NTP, a VM resumed) neither fires it nor hides a stuck one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon/daemon.js';
import { silentLogger } from '../../src/log.js';
import { ManualClock } from '../helpers/clock.js';
import { Cleanup, OneRevisionSource } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function waitingSeconds(daemon: Daemon): Promise<number> {
  const m = await daemon.metrics.registry.getSingleMetric('govops_revision_waiting_seconds')!.get();
  return m.values[0]!.value;
}

describe('govops_revision_waiting_seconds and the wall clock', () => {
  it('counts the time the revision waited, whatever the time of day does meanwhile', async () => {
    const clock = new ManualClock();
    const source = new OneRevisionSource({ observedAt: new Date(clock.now()).toISOString() });
    const daemon = new Daemon({
      source,
      reconcile: () => new Promise(() => undefined), // runs for as long as the test looks: the revision waits
      logger: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 },
      resyncMs: 600_000,
      selfHeal: false,
      clock,
    });
    cleanup.add(async () => void (await daemon.loop.stop(0)));
    await source.start(); // the revision arrives
    clock.advance(30_000);
    expect(await waitingSeconds(daemon)).toBe(30);
    clock.stepWall(3_600_000); // set an hour forward: the old gauge read 3630 s (the alert fired)
    expect(await waitingSeconds(daemon)).toBe(30);
    clock.stepWall(-7_200_000); // an hour back from where it was: the old gauge read 0 (a stuck revision hidden)
    clock.advance(10_000);
    expect(await waitingSeconds(daemon)).toBe(40);
  });
});
