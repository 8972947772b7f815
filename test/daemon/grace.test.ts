/** SIGTERM's `--grace` is the whole shutdown's budget: what the loop used of it is not given again to the notifier. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { Notifier } from '../../src/daemon/notify.js';
import { Cleanup, OneRevisionSource, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(async () => {
  vi.restoreAllMocks();
  await cleanup.run();
});

describe('Daemon.stop(grace)', () => {
  it('a reconcile that outlasts the grace leaves the notifier no extra time: the daemon stops within the grace', async () => {
    const given: number[] = [];
    const notifier = { notify: () => undefined, stop: async (ms: number) => void given.push(ms) } as unknown as Notifier;
    let running = false;
    const daemon = new Daemon({
      source: new OneRevisionSource(),
      reconcile: () => {
        running = true;
        return new Promise(() => undefined); // never finishes, even when aborted
      },
      logger: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 },
      resyncMs: 600_000,
      selfHeal: false,
      notifier,
    });
    await daemon.start();
    await until(() => running, 10_000, 'reconcile running');
    const graceMs = 200;
    const finished = await daemon.stop(graceMs);
    expect(finished).toBe(false);
    expect(given).toHaveLength(1);
    // The loop used the whole grace: what is left for deliveries is (about) nothing, not another `graceMs`.
    expect(given[0]).toBeLessThan(graceMs / 4);
  });

  it('the time of day set forward during the shutdown does not use up the grace: the reconcile in flight still finishes', async () => {
    const source = new OneRevisionSource();
    let running = false;
    const daemon = new Daemon({
      source,
      // stopped gracefully, it finishes what is in flight and saves (here: 20 ms after the stop is asked)
      reconcile: (req) => {
        running = true;
        return new Promise((_ok, fail) => req.signal.addEventListener('abort', () => setTimeout(() => fail(req.signal.reason), 20), { once: true }));
      },
      logger: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 },
      resyncMs: 600_000,
      selfHeal: false,
    });
    await daemon.start();
    await until(() => running, 10_000, 'reconcile running');
    // NTP sets the time of day an hour forward while the source stops (the first step of the shutdown)
    const realNow = Date.now.bind(Date);
    source.stop = async () => void vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000);
    expect(await daemon.stop(5_000)).toBe(true);
  });
});
