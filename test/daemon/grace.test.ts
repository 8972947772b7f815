/** SIGTERM's `--grace` is the whole shutdown's budget: what the loop used of it is not given again to the notifier. */
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { ServiceClient } from '../../src/api/client.js';
import { CancelledError } from '../../src/errors.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { Notifier } from '../../src/daemon/notify.js';
import { startRunning } from '../../src/daemon/run.js';
import { Cleanup, GOVOPS_SECRET_LAKE_TOKEN, OneRevisionSource, lakehouse, runSettings, until } from './helpers.js';

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

/** `govops run` (in process) watching one manifest, against a service that takes connections and never answers. */
/** A service on 127.0.0.1 that takes connections and never answers; the sockets it holds (closed at cleanup). */
async function silentService(): Promise<{ port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const service = createServer((s) => {
    sockets.add(s);
    s.on('data', () => undefined);
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  cleanup.add(() => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => service.close(r));
  });
  return { port: (service.address() as AddressInfo).port, sockets };
}

async function againstSilentService(): Promise<{ running: Awaited<ReturnType<typeof startRunning>>; sockets: Set<Socket> }> {
  const { port, sockets } = await silentService();
  const home = await cleanup.tmp('govops-grace-');
  await mkdir(join(home, 'm'));
  await writeFile(join(home, 'm', 'lake.yaml'), lakehouse('lake', '/sql/1'));
  const settings = runSettings(home, { dir: join(home, 'm'), env: { GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN } });
  const running = await startRunning(settings, silentLogger(), (onRequest) => new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', onRequest, timeoutMs: 20_000, retries: 0 }));
  cleanup.add(() => running.shutdown(0));
  // the reconcile waits in its first GET (the live listing, before any apply)
  await until(() => running.daemon.status().running && sockets.size > 0, 10_000, 'a request to the service in flight');
  return { running, sockets };
}

describe('govops run shutdown(grace)', () => {
  it('ends within the grace while a request of the reconcile hangs (the live listing, before any apply)', async () => {
    const { running, sockets } = await againstSilentService();
    const graceMs = 300;
    const t0 = Date.now();
    await running.shutdown(graceMs);
    // The request's own timeout (20 s) is not waited for: the pod is not killed past its grace period.
    expect(Date.now() - t0).toBeLessThan(graceMs + 5_000);
    // Nothing is left open: the process can exit at once.
    await until(() => [...sockets].every((s) => s.destroyed || s.readyState === 'closed'), 5_000, 'the connection to the service closed');
  });

  it('aborts the live listing at 80% of the grace, as an apply\'s requests: the reconcile ends, the stop finishes', async () => {
    const { running } = await againstSilentService();
    // Aborted at 4 s, the reconcile has a second to end. Finished: nothing was cut short (with a PostgreSQL state the
    // lease is handed over at once, not left to expire).
    expect(await running.shutdown(5_000)).toBe(true);
  });

  it("the service client's close(withinMs) aborts a request still in flight then (CancelledError)", async () => {
    const { port, sockets } = await silentService();
    const client = new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', timeoutMs: 20_000, retries: 0 });
    const call = client.listIntegrations().then(() => undefined, (err: unknown) => err);
    await until(() => sockets.size > 0, 10_000, 'the request sent');
    const t0 = Date.now();
    await client.close(200);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await call).toBeInstanceOf(CancelledError);
  });
});
