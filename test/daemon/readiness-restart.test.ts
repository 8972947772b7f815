/**
 * /readyz depends on what the daemon can do now, not on whether this process saw a clean reconcile: a resource the
 * service refuses (a 422) leaves a running daemon ready, and must leave a restarted one ready too (Kubernetes keeps an
 * unready pod out of its Service, so push hooks stop, and a rollout never completes).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon/daemon.js';
import type { ReconcileRequest } from '../../src/daemon/loop.js';
import { ErrorCode, failure, TransportError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { PlanChange } from '../../src/plan/types.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import type { Revision, Source } from '../../src/sources/types.js';
import { ManualClock } from '../helpers/clock.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning } from '../../src/daemon/run.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { Cleanup, closedPort, getJson, runSettings, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A source with one revision, handed to the daemon when it starts. */
class OneRevision implements Source {
  private cb?: (r: Revision) => void;
  readonly revision: Revision = { id: 'r1', root: '/nonexistent', paths: ['.'], display: '', observedAt: new Date(0).toISOString(), order: 1 };
  describe() {
    return { type: 'git' as const, location: 'https://example.com/repo.git', branch: 'main', path: '.' };
  }
  async start(): Promise<void> {
    this.cb?.(this.revision);
  }
  async stop(): Promise<void> {}
  onRevision(cb: (r: Revision) => void): void {
    this.cb = cb;
  }
  current(): Revision | undefined {
    return this.revision;
  }
  async refresh(): Promise<void> {}
  async retain(): Promise<void> {}
  health() {
    return { consecutiveFailures: 0, ok: true };
  }
}

const plan = (changes: number) => ({
  formatVersion: 2 as const,
  changes: Array.from({ length: changes }, (_, i) => ({ resourceKind: 'Integration', name: `x${i}`, action: 'update', liveId: `i-${i}`, reasons: [], changes: [] })) as unknown as PlanChange[],
  summary: { create: 0, update: changes, replace: 0, delete: 0, adopt: 0, noop: 0 },
  errors: [],
  warnings: [],
});

/** The service answered one resource's PUT with 422 (the rest of the revision applied). */
function refused(req: ReconcileRequest): ReconcileResult {
  const at = new Date(0).toISOString();
  const f = failure(ErrorCode.apiValidation);
  return {
    revision: req.revision.id, stage: 'apply', ok: false, changed: true, diagnostics: [], plan: plan(1), startedAt: at, finishedAt: at,
    error: 'Integration/x0: 422 invalid httpPath', failure: f,
    outcomes: [{ resourceKind: 'Integration', name: 'x0', action: 'update', result: 'failed', durationMs: 1, error: '422 invalid httpPath', ...f }],
  };
}

function inSync(req: ReconcileRequest): ReconcileResult {
  const at = new Date(0).toISOString();
  return { revision: req.revision.id, stage: 'done', ok: true, changed: false, diagnostics: [], plan: plan(0), startedAt: at, finishedAt: at, outcomes: [] };
}

async function daemonWith(reconcile: (req: ReconcileRequest) => ReconcileResult): Promise<{ daemon: Daemon }> {
  const clock = new ManualClock();
  const daemon = new Daemon({
    source: new OneRevision(),
    reconcile: async (req) => reconcile(req),
    logger: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    resyncMs: 600_000,
    selfHeal: false,
    clock,
  });
  cleanup.add(() => daemon.stop(0));
  await daemon.start();
  await daemon.loop.idle();
  return { daemon };
}

describe('/readyz and a resource the service refuses (422)', () => {
  it('a running daemon that meets it stays ready', async () => {
    let fail = false;
    const { daemon } = await daemonWith((req) => (fail ? refused(req) : inSync(req)));
    expect((await getJson(`${daemon.url}/readyz`)).status).toBe(200);
    fail = true;
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    expect(daemon.loop.snapshot().lastAttempt?.verdict).toBe('failed');
    expect((await getJson(`${daemon.url}/readyz`)).status).toBe(200);
  });

  it('a daemon (re)started while it persists is ready too: the service is reached, the revision valid, the rest applied', async () => {
    const { daemon } = await daemonWith(refused);
    expect(daemon.loop.snapshot().lastAttempt?.verdict).toBe('failed');
    const readyz = await getJson(`${daemon.url}/readyz`);
    expect(readyz.body).toEqual({ ready: true });
    expect(readyz.status).toBe(200);
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/^govops_ready 1$/m);
    expect((await getJson(`${daemon.url}/status`)).body.ready).toBe(true);
  });

  it('a first reconcile that stops all work (the state file) or never reaches the service is still not ready', async () => {
    const at = new Date(0).toISOString();
    for (const [code, stage] of [[ErrorCode.stateCorrupt, 'plan'], [ErrorCode.stateWriteFailed, 'apply'], [ErrorCode.connectFailed, 'apply']] as const) {
      const { daemon } = await daemonWith((req) => ({
        revision: req.revision.id, stage, ok: false, changed: false, diagnostics: [], startedAt: at, finishedAt: at, outcomes: [],
        error: 'broken', failure: failure(code), ...(stage === 'apply' ? { plan: plan(1) } : {}),
      }));
      expect((await getJson(`${daemon.url}/readyz`)).status, code).toBe(503);
    }
  });
});

/** Every revision since the start rejected (an invalid commit at HEAD when the daemon restarts): nothing in force. */
function rejected(req: ReconcileRequest): ReconcileResult {
  const at = new Date(0).toISOString();
  return {
    revision: req.revision.id, stage: 'load', ok: false, changed: false, startedAt: at, finishedAt: at, outcomes: [],
    diagnostics: [{ file: 'a.yaml', line: 3, column: 5, severity: 'error', message: 'missing required field host' }],
    error: 'a.yaml:3:5: missing required field host', failure: failure(ErrorCode.invalidRevision),
  };
}

describe('/readyz when the newest revision is invalid and nothing is in force (a restart at a broken commit)', () => {
  async function start(probe: (signal: AbortSignal) => Promise<void>) {
    const clock = new ManualClock();
    const daemon = new Daemon({
      source: new OneRevision(), reconcile: async (req) => rejected(req), probe, logger: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 }, resyncMs: 600_000, selfHeal: false, retryBaseMs: 1000, retryMaxMs: 60_000, clock,
    });
    cleanup.add(() => daemon.stop(0));
    await daemon.start();
    await daemon.loop.idle();
    return { daemon, clock };
  }

  it('is ready once the state and the service were read, as the same daemon before the restart was', async () => {
    let probes = 0;
    const { daemon } = await start(async () => void probes++);
    expect(daemon.loop.snapshot().lastAttempt?.verdict).toBe('invalid');
    expect(probes).toBe(1);
    expect(await getJson(`${daemon.url}/readyz`)).toEqual({ status: 200, body: { ready: true } });
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/^govops_ready 1$/m);
    const status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.revision).toMatchObject({ rejected: 'r1' });
    expect(status.revision.lastGood).toBeUndefined();
    // each resync looks again (the service may go away meanwhile)
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    expect(probes).toBe(2);
  });

  it('is not ready while the service cannot be reached, and is once it can (looked at again with backoff)', async () => {
    let down = true;
    const { daemon, clock } = await start(async () => {
      if (down) throw new TransportError('connect ECONNREFUSED 127.0.0.1:1', 'GET', '/integrations', undefined, ErrorCode.connectFailed);
    });
    const readyz = await getJson(`${daemon.url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(readyz.body.reason).toMatch(/^service unreachable \(GOVOPS_CONNECT_FAILED\); no revision in force/);
    down = false;
    clock.advance(1000);
    await daemon.loop.idle();
    expect((await getJson(`${daemon.url}/readyz`)).status).toBe(200);
  });
});

describe('a daemon started at an invalid revision, with every real part', () => {
  async function run(sandbox: { url: string; adminToken: string } | undefined) {
    const home = await cleanup.tmp('govops-home-');
    const dir = await cleanup.tmp('govops-manifests-');
    await writeFile(join(dir, 'a.yaml'), 'apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: a\nspec:\n  type: nope\n');
    const settings = runSettings(home, { dir });
    const running = await startRunning(settings, silentLogger(), (onRequest) =>
      new ServiceClient({ baseUrl: sandbox?.url ?? `http://127.0.0.1:${closedPortNumber}`, token: sandbox?.adminToken ?? 'x', onRequest, retries: 0 }),
    );
    cleanup.add(() => running.shutdown(2000));
    return running;
  }
  let closedPortNumber = 1;

  it('is ready when the service answers, not ready when it does not (the probe lists it; nothing is written)', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanup.add(() => sandbox.close());
    const up = await run(sandbox);
    await until(async () => (await getJson(`${up.daemon.url}/status`)).body.revision.rejected !== undefined, 15_000, 'the revision rejected');
    await until(async () => (await getJson(`${up.daemon.url}/readyz`)).status === 200, 15_000, 'ready');
    expect(sandbox.requests().filter((r) => r.method !== 'GET')).toEqual([]);

    closedPortNumber = await closedPort();
    const down = await run(undefined);
    await until(async () => (await getJson(`${down.daemon.url}/status`)).body.revision.rejected !== undefined, 15_000, 'the revision rejected');
    const readyz = await until(async () => { const r = await getJson(`${down.daemon.url}/readyz`); return /no revision in force/.test(r.body.reason ?? '') ? r : undefined; }, 15_000, 'the probe\'s reason');
    expect(readyz!.status).toBe(503);
    expect(readyz!.body.reason).toMatch(/service unreachable .*no revision in force/);
  });
});
