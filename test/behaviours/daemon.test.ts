/**
 * The daemon with --self-heal under every server behaviour: once the folder is applied, three resyncs make
 * no write (counted from the sandbox request log). A false difference would PUT on every resync.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
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
    resyncMs: 100,
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
  // the folder applied (the resyncs every 100 ms leave the last reconcile `applied` only for a moment: wait for
  // lastApplied, which stays, so a busy machine cannot make the wait miss it)
  await until(async () => {
    const s = (await getJson(`${url}/status`)).body;
    return s.revision?.lastApplied && s.lastSuccess ? s : undefined;
  }, 20_000, 'first apply');
  return { sandbox, url };
}

/** Wait for `n` more complete reconciles (each lists the integrations once), then for the loop to be idle. */
async function resyncs(sandbox: SandboxHandle, url: string, n: number): Promise<void> {
  const start = listings(sandbox);
  await until(() => listings(sandbox) >= start + n, 20_000, `${n} resyncs`);
  await until(async () => !(await getJson(`${url}/status`)).body.running, 20_000, 'idle');
}

describe.each(BEHAVIOUR_SETS.map((set) => ({ set, name: label(set) })))('daemon --self-heal under behaviour $name', ({ set }) => {
  it('makes no write over three resyncs', async () => {
    const { sandbox, url } = await daemonOn(set);
    sandbox.clearRequests();
    await resyncs(sandbox, url, 3);
    expect(writesOf(sandbox)).toEqual([]);
    const status = (await getJson(`${url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync' });
  });
});

describe('daemon --self-heal: the write counter can see writes', () => {
  it('out-of-band drift is repaired by the next resync (one PUT), then nothing', async () => {
    const { sandbox, url } = await daemonOn([]);
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
    await until(() => writesOf(sandbox).length > 0, 20_000, 'repair');
    await resyncs(sandbox, url, 3);
    expect(writesOf(sandbox)).toEqual([`PUT /integrations/${lake.id}`]);
  });
});
