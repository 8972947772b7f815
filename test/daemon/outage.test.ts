/**
 * Drill: the service goes down (the sandbox process stops) while a new revision arrives. The daemon retries
 * that revision with backoff, resyncs never plan the older revision in its place, /status and the metrics show
 * it waiting (attempts, last error, next try); once the service is back the revision is applied without any
 * further change to the source, and the next plan is a no-op.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceClient } from '../../src/api/client.js';
import { ErrorCode } from '../../src/errors.js';
import { startRunning } from '../../src/daemon/run.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, runSettings, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

describe('drill: the service is down while a revision arrives', () => {
  it('the new revision is retried until applied, never replaced by a resync of the previous one', async () => {
    const home = await cleanup.tmp('govops-outage-');
    const dataFile = join(home, 'sandbox.json');
    const adminToken = 'outage-admin-token';
    const boot = (port = 0): Promise<SandboxHandle> => startSandbox({ port, transitionMs: 50, dataFile, adminToken });
    let sandbox = await boot();
    cleanup.add(() => sandbox.close());
    const port = sandbox.port;
    const dir = await cleanup.tmp('govops-outage-m-');
    await writeFile(join(dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    // resyncs (300 ms) come more often than the retries once their backoff has grown (up to 2 s): the case that stalled
    const settings = runSettings(home, {
      dir,
      resyncMs: 300,
      selfHeal: true,
      retryBaseMs: 100,
      retryMaxMs: 2000,
      env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN },
    });
    const running = await startRunning(settings, silentLogger(), (onRequest) =>
      new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, token: adminToken, onRequest, retries: 0, timeoutMs: 2000 }),
    );
    cleanup.add(() => running.shutdown(2000));
    const url = running.daemon.url;
    const status = async () => (await getJson(`${url}/status`)).body;
    const metrics = async () => (await fetch(`${url}/metrics`)).text();
    const r1 = (await until(async () => {
      const s = await status();
      return s.revision.lastApplied && s.revision.lastApplied === s.revision.latest ? s : undefined;
    }, 20_000, 'first revision applied')).revision.lastApplied as string;

    // the outage: the service stops; a new revision arrives meanwhile
    await sandbox.close();
    await writeFile(join(dir, 'lake.yaml'), lakehouse('lake', '/sql/2'));
    const down = await until(async () => {
      const s = await status();
      return s.revision.latest !== r1 && s.revision.waiting?.revision === s.revision.latest && s.revision.waiting.attempts >= 4 ? s : undefined;
    }, 20_000, 'the new revision waiting, tried several times');
    const r2 = down.revision.latest as string;
    expect(down.revision.lastApplied).toBe(r1);
    expect(down.revision.waiting).toMatchObject({
      revision: r2,
      lastError: { code: ErrorCode.connectFailed, failureClass: 'transient' },
      nextTryAt: expect.any(String),
    });
    expect(Date.parse(down.revision.waiting.since)).toBeLessThanOrEqual(Date.now());
    expect(down.lastError).toMatchObject({ revision: r2, result: 'unreachable', code: ErrorCode.connectFailed, retry: 'backoff' });
    expect(down.ready).toBe(false);
    const during = await metrics();
    expect(metric(during, 'govops_revision_waiting')).toBe(1);
    expect(metric(during, 'govops_revision_waiting_seconds')).toBeGreaterThan(0);
    expect(metric(during, 'govops_revision_waiting_attempts')).toBeGreaterThanOrEqual(4);
    // resyncs came due meanwhile: every attempt since r2 arrived was at r2
    await until(async () => (await status()).revision.waiting?.attempts >= 5, 20_000, 'a fifth attempt');
    expect((await status()).lastReconcile).toMatchObject({ revision: r2, reason: 'retry' });

    // the service is back (same address, same data): r2 is applied with nothing new from the source
    sandbox = await boot(port);
    const after = await until(async () => {
      const s = await status();
      return s.revision.lastApplied === r2 && !s.running ? s : undefined;
    }, 20_000, 'the waiting revision applied after recovery');
    expect(after.revision.latest).toBe(r2);
    expect(after.revision.waiting).toBeUndefined();
    expect(after.lastError).toBeUndefined();
    expect(after.ready).toBe(true);
    const api = new ServiceClient({ baseUrl: sandbox.url, token: adminToken });
    cleanup.add(() => api.close());
    expect((await api.listIntegrations()).map((i) => i.config.httpPath)).toEqual(['/sql/2']);
    const recovered = await metrics();
    expect(metric(recovered, 'govops_revision_waiting')).toBe(0);
    expect(metric(recovered, 'govops_revision_waiting_seconds')).toBe(0);
    // the resync that follows finds nothing to do
    const resync = await until(async () => {
      const s = await status();
      return s.lastReconcile?.reason === 'resync' ? s : undefined;
    }, 20_000, 'a resync');
    expect(resync.lastReconcile).toMatchObject({ revision: r2, result: 'in-sync' });
  });
});
