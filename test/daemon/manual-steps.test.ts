/**
 * The daemon and a manual-flow integration: an edit without the acknowledgment is not sent (request log),
 * /status shows the resource `blocked` with the reason and the command, govops_resources counts it, and
 * the wait is logged once per revision, not on every resync. With the acknowledgment it is applied.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning, type RunSettings } from '../../src/daemon/run.js';
import { manualStepToken } from '../../src/reconcile/manual-step-token.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { manualLakeConfig, manualLakeManifest } from '../helpers/manifests.js';
import { Cleanup, getJson, until, runSettings, jsonLogSink } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const manualLake = (httpPath: string, ack: string): string => manualLakeManifest(httpPath, ack);
const token = (phase: 'create' | 'edit', httpPath: string) =>
  `${phase}:${manualStepToken(phase, 'lakehouse', manualLakeConfig(httpPath))}`;

async function start(overrides: Partial<RunSettings> = {}) {
  const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
  cleanup.add(() => sandbox.close());
  const dir = await cleanup.tmp('govops-manual-');
  const home = await cleanup.tmp('govops-home-');
  const { logs, sink } = jsonLogSink();
  await writeFile(join(dir, 'lake.yaml'), manualLake('/sql/1', token('create', '/sql/1')));
  const settings = runSettings(home, {
    dir,
    resyncMs: 150, // resyncs keep coming: the wait must not be logged again
    selfHeal: true,
    env: { ...process.env, GOVOPS_SECRET_LAKE_TOKEN: 'tok-daemon-4444' },
    ...overrides,
  });
  const running = await startRunning(settings, pino({ level: 'info' }, sink), (onRequest) =>
    new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
  );
  cleanup.add(() => running.shutdown(2000));
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
  cleanup.add(() => api.close());
  return { sandbox, dir, logs, url: running.daemon.url, api };
}

const reconciles = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^govops_reconcile_total\{result="[^"]+"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
};

describe('daemon: a manual-flow edit waits for its acknowledgment', () => {
  it('blocked in /status and the metrics, no PUT, logged once per revision; applied once acknowledged', async () => {
    const t = await start();
    const [live] = (await until(async () => {
      const l = await t.api.listIntegrations();
      return l.length === 1 && l[0]!.status === 'enabled' ? l : undefined;
    }, 20_000, 'created'))!;

    await writeFile(join(t.dir, 'lake.yaml'), manualLake('/sql/2', token('create', '/sql/1')));
    const blocked = (await until(async () => {
      const s = (await getJson(`${t.url}/status`)).body;
      const r = s.resources?.find((x: { name: string }) => x.name === 'lake');
      return r?.syncState === 'blocked' ? { status: s, resource: r } : undefined;
    }, 20_000, 'blocked in /status'))!;
    expect(blocked.resource).toMatchObject({
      action: 'update',
      syncState: 'blocked',
      manualStep: {
        status: 'awaiting',
        commands: [`govops scripts lake --phase edit ${join(t.dir, 'lake.yaml')}`],
        annotation: `govops/manual-step: "${token('edit', '/sql/2')}"`,
      },
    });
    expect(blocked.resource.error).toMatch(/^awaiting manual step \(the annotation acknowledges create:[0-9a-f]{8}, but this change needs edit:/);
    expect(blocked.status.ready).toBe(true); // waiting for a person is not unreadiness
    // the last reconcile says `blocked` (not in-sync) and names what it held back
    expect(blocked.status.lastReconcile).toMatchObject({ result: 'blocked', revision: blocked.status.revision.latest });
    expect(blocked.status.lastReconcile.blocked).toEqual([expect.objectContaining({ kind: 'Integration', name: 'lake', action: 'update' })]);
    expect(blocked.status.lastError).toBeUndefined(); // not a failure
    expect(blocked.status.revision.waiting).toBeUndefined(); // applied as far as it can be: nothing to retry
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toContain('govops_resources{kind="lakehouse",sync_state="blocked"} 1');
    expect(Number(/^govops_reconcile_total\{result="blocked"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    expect(t.logs.some((l) => l.msg === 'reconcile finished: changes blocked, waiting for a person (see /status)')).toBe(true);

    // resyncs (with self-heal) come and go: still no PUT, each says blocked, and the wait was logged once
    const seen = await reconciles(t.url);
    await until(async () => (await reconciles(t.url)) >= seen + 4, 20_000, 'four more reconciles');
    expect((await getJson(`${t.url}/status`)).body.lastReconcile).toMatchObject({ reason: 'resync', result: 'blocked' });
    expect(t.sandbox.requests().filter((q) => q.method === 'PUT')).toEqual([]);
    const waits = t.logs.filter((l) => String(l.msg).startsWith('awaiting manual step'));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({
      resource: 'Integration/lake',
      commands: [`govops scripts lake --phase edit ${join(t.dir, 'lake.yaml')}`],
      annotation: `govops/manual-step: "${token('edit', '/sql/2')}"`,
    });
    expect(t.logs.filter((l) => l.msg === 'reconcile failed; will retry')).toEqual([]);

    // the admin ran the script and committed the acknowledgment
    await writeFile(join(t.dir, 'lake.yaml'), manualLake('/sql/2', token('edit', '/sql/2')));
    await until(async () => (await t.api.getIntegration(live!.id)).config.httpPath === '/sql/2', 20_000, 'applied');
    expect(t.sandbox.requests().filter((q) => q.method === 'PUT' && !q.query.dryRun)).toHaveLength(1);
    const synced = await until(async () => {
      const s = (await getJson(`${t.url}/status`)).body;
      const r = s.resources?.find((x: { name: string }) => x.name === 'lake');
      return r?.syncState === 'synced' ? r : undefined;
    }, 20_000, 'synced');
    expect(synced.manualStep).toBeUndefined();
    expect(await (await fetch(`${t.url}/metrics`)).text()).not.toContain('sync_state="blocked"');
  });

  it('--manual-steps trust: the edit is applied at once', async () => {
    const t = await start({ plan: { prune: false, allowReplace: false, manualSteps: 'trust' }, resyncMs: 60_000 });
    const [live] = (await until(async () => {
      const l = await t.api.listIntegrations();
      return l.length === 1 && l[0]!.status === 'enabled' ? l : undefined;
    }, 20_000, 'created'))!;
    await writeFile(join(t.dir, 'lake.yaml'), manualLake('/sql/2', token('create', '/sql/1')));
    await until(async () => (await t.api.getIntegration(live!.id)).config.httpPath === '/sql/2', 20_000, 'applied');
  });
});
