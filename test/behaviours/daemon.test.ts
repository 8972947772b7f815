/**
 * The daemon with --self-heal under every server behaviour: once the folder is applied, three resyncs make
 * no write (counted from the sandbox request log). A false difference would PUT on every resync.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import type { ReconcileLoop } from '../../src/daemon/loop.js';
import { startRunning, type RunSettings } from '../../src/daemon/run.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { Cleanup, getJson, until } from '../daemon/helpers.js';
import { BEHAVIOUR_SETS, MANIFESTS, SECRETS, label, writesOf } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const listings = (sb: SandboxHandle): number => sb.requests().filter((r) => r.method === 'GET' && r.path === '/integrations').length;

async function daemonOn(set: readonly string[]) {
  const sandbox = await startSandbox({ port: 0, transitionMs: 10, behaviours: set });
  cleanup.add(() => sandbox.close());
  const dir = await cleanup.tmp('govops-heal-');
  const home = await cleanup.tmp('govops-heal-home-');
  for (const [file, text] of Object.entries(MANIFESTS)) await writeFile(join(dir, file), text);
  const settings: RunSettings = {
    branch: 'main',
    path: '.',
    dir,
    intervalMs: 60_000,
    // no resync by the timer: the test asks for each one (loop.resyncNow) and waits for it to end (loop.idle), so it
    // never needs the loop idle at the moment it looks (a busy machine made 100 ms resyncs overlap every poll)
    resyncMs: 3_600_000,
    selfHeal: true,
    plan: { prune: false, allowReplace: false, manualSteps: 'trust' }, // the manual-step gate has its own tests (test/daemon/manual-steps.test.ts)
    listen: { host: '127.0.0.1', port: 0 },
    statePath: join(home, 'state.json'),
    workdir: join(home, 'work'),
    hookSecret: 'hook-secret',
    debounceMs: 50,
    retryBaseMs: 100,
    retryMaxMs: 500,
    tuning: { timeoutMs: 20_000 },
    env: { ...process.env, ...SECRETS },
  };
  const running = await startRunning(settings, silentLogger(), (onRequest) =>
    new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
  );
  cleanup.add(() => running.shutdown(2000));
  const url = running.daemon.url;
  const loop = running.daemon.loop;
  // the folder applied (lastApplied stays once set), then the loop idle: nothing runs until the test asks
  await until(() => loop.snapshot().lastApplied && loop.snapshot().lastSuccess, 50_000, 'first apply');
  await loop.idle();
  return { sandbox, url, loop };
}

/** Run `n` resyncs one after the other, each to its end (each lists the integrations once). */
async function resyncs(sandbox: SandboxHandle, loop: ReconcileLoop, n: number): Promise<void> {
  const start = listings(sandbox);
  for (let i = 0; i < n; i++) {
    loop.resyncNow();
    await loop.idle();
    expect(loop.snapshot().lastAttempt?.reason).toBe('resync');
  }
  expect(listings(sandbox)).toBe(start + n);
}

describe.each(BEHAVIOUR_SETS.map((set) => ({ set, name: label(set) })))('daemon --self-heal under behaviour $name', ({ set }) => {
  it('makes no write over three resyncs', async () => {
    const { sandbox, url, loop } = await daemonOn(set);
    sandbox.clearRequests();
    await resyncs(sandbox, loop, 3);
    expect(writesOf(sandbox)).toEqual([]);
    const status = (await getJson(`${url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync' });
  });
});

describe('daemon --self-heal: the write counter can see writes', () => {
  it('out-of-band drift is repaired by the next resync (one PUT), then nothing', async () => {
    const { sandbox, loop } = await daemonOn([]);
    sandbox.clearRequests();
    const lake = (await new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger() }).listIntegrations()).find(
      (i) => i.type === 'lakehouse',
    )!;
    const patched = await fetch(`${sandbox.url}/_sandbox/integrations/${lake.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: sandbox.adminToken },
      body: JSON.stringify({ config: { httpPath: '/changed' } }),
    });
    expect(patched.status).toBe(200);
    await resyncs(sandbox, loop, 1); // the resync that finds the drift and repairs it
    expect(writesOf(sandbox)).toEqual([`PUT /integrations/${lake.id}`]);
    await resyncs(sandbox, loop, 3);
    expect(writesOf(sandbox)).toEqual([`PUT /integrations/${lake.id}`]);
  });
});
