/** `govops_ready` is documented as "1 when /readyz answers 200": it must say so at every scrape, not only after a reconcile. */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { ReconcileRequest } from '../../src/daemon/loop.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { Cleanup, OneRevisionSource, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const inSync = (): ReconcileResult => {
  const at = new Date().toISOString();
  return { stage: 'done', ok: true, changed: false, diagnostics: [], outcomes: [], startedAt: at, finishedAt: at };
};

const readyGauge = async (url: string): Promise<string | undefined> => /^govops_ready (\S+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1];

describe('govops_ready', () => {
  it('follows /readyz: 0 while another reason keeps it 503 (the PostgreSQL state), and while shutting down', async () => {
    const source = new OneRevisionSource();
    let notReady: { reason: string } | undefined;
    let hang: (() => void) | undefined;
    const daemon = new Daemon({
      source,
      reconcile: (req: ReconcileRequest) =>
        req.revision.id === 'rev1' ? Promise.resolve(inSync()) : new Promise((resolve) => (hang = () => resolve(inSync()))),
      logger: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 },
      resyncMs: 600_000,
      selfHeal: false,
      notReady: () => notReady,
    });
    await daemon.start();
    cleanup.add(() => daemon.stop(0));
    await until(async () => (await fetch(`${daemon.url}/readyz`)).status === 200, 10_000, 'ready');
    expect(await readyGauge(daemon.url)).toBe('1');

    notReady = { reason: 'the state is unreachable' };
    expect((await fetch(`${daemon.url}/readyz`)).status).toBe(503);
    expect(await readyGauge(daemon.url)).toBe('0');
    notReady = undefined;
    expect(await readyGauge(daemon.url)).toBe('1');

    // A reconcile in flight when SIGTERM comes: /readyz answers 503 "shutting down" until the endpoints close.
    source.push('rev2');
    await until(() => hang !== undefined, 10_000, 'rev2 running');
    const stopped = daemon.stop(60_000);
    expect((await fetch(`${daemon.url}/readyz`)).status).toBe(503);
    expect(await readyGauge(daemon.url)).toBe('0');
    hang!();
    await stopped;
  });
});
