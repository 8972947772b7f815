/**
 * `govops run` as a real process over a watched folder, against the sandbox (request log counting writes):
 * `--observe` plans every revision and resync and writes nothing; `--notify-url` posts CloudEvents 1.0 events
 * (applied, drift, blocked, rejected, failed) to a local receiver, with a secret header read from a file, retries
 * on a 503, no repeat of the same news, and never a secret in a body.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { requestLines } from '../apply/harness.js';
import { CLI } from '../helpers/cli.js';
import { lakehouseManifest, manualLakeManifest } from '../helpers/manifests.js';
import { Cleanup, getJson, spawnRun, until } from '../daemon/helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const TOKEN_VALUE = 'lake-tok-NOTIFY-CANARY-1357';
const HEADER_SECRET = 'Bearer notify-CANARY-2468';
const lake = (httpPath: string, host = 'lake.example.com', name = 'lake') =>
  lakehouseManifest({ name, host, httpPath, tokenEnv: 'GOVOPS_SECRET_LAKE_TOKEN' });

interface Received {
  headers: IncomingHttpHeaders;
  body: any;
  status: number;
}

/** A local receiver: records every POST; answers `failFirst` of them 503. */
async function receiver(failFirst = 0): Promise<{ url: string; got: Received[]; server: Server }> {
  const got: Received[] = [];
  let seen = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const status = ++seen <= failFirst ? 503 : 202;
      got.push({ headers: req.headers, body: JSON.parse(text), status });
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.add(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/govops/events`, got, server };
}

async function daemon(sandbox: SandboxHandle, home: string, args: string[]): Promise<{ url: string; out: () => string; child: ChildProcess }> {
  const d = spawnRun(
    cleanup,
    ['--dir', join(home, 'm'), '--state', join(home, 'state.json'), '--listen', '127.0.0.1:0', '--interval', '10m', '--debounce', '50ms', '--grace', '5s', ...args],
    {
      cwd: home,
      env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_LAKE_TOKEN: TOKEN_VALUE, GOVOPS_LOG_LEVEL: 'debug' },
    },
  );
  return { url: await d.url, out: d.out, child: d.child };
}

const status = async (url: string) => (await getJson(`${url}/status`)).body;
const metric = async (url: string, name: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
};

describe('govops run --observe (Argo CD manual sync, a first rollout next to a hand-managed service)', () => {
  it('plans every revision and resync, reports drift and pending changes, and makes zero writes', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const home = await cleanup.tmp('govops-observe-');
    await mkdir(join(home, 'm'));
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/sql/1'));
    const recv = await receiver();
    const d = await daemon(sandbox, home, ['--observe', '--prune', '--resync', '200ms', '--notify-url', recv.url]);

    const first = await until(async () => {
      const s = await status(d.url);
      return s.lastReconcile?.result === 'drift' && s;
    }, 20_000, 'first observed plan');
    expect(first.observe).toBe(true);
    expect(first.drift).toBe(true);
    expect(first.pendingChanges).toEqual([{ kind: 'Integration', name: 'lake', action: 'create', syncState: 'out_of_sync' }]);
    expect(first.revision.lastApplied).toBeUndefined();
    expect(await metric(d.url, 'govops_observe_mode')).toBe(1);
    expect(await metric(d.url, 'govops_pending_changes')).toBe(1);
    expect(await metric(d.url, 'govops_drift_detected')).toBe(1);

    // A new revision with changes: planned, not applied.
    const rev1 = first.revision.latest;
    await writeFile(join(home, 'm', 'hook.yaml'), 'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: hook\nspec:\n  url: https://hooks.example.com/h\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n');
    const second = await until(async () => {
      const s = await status(d.url);
      return s.revision.latest !== rev1 && s.lastReconcile?.revision === s.revision.latest && s.lastReconcile.result === 'drift' && s;
    }, 20_000, 'the new revision observed');
    expect(second.pendingChanges.map((p: { name: string }) => p.name).sort()).toEqual(['hook', 'lake']);
    // Several resyncs later: still nothing written, the same drift notified once per revision.
    const resyncs = await until(async () => {
      const text = await (await fetch(`${d.url}/metrics`)).text();
      const n = Number(/^govops_reconcile_total\{result="drift"\} (\d+)$/m.exec(text)?.[1] ?? 0);
      return n >= 6 && n;
    }, 20_000, 'resyncs');
    expect(resyncs).toBeGreaterThanOrEqual(6);
    const lines = requestLines(sandbox);
    expect(lines.length).toBeGreaterThan(6);
    expect(lines.filter((l) => !l.startsWith('GET '))).toEqual([]);
    await until(() => recv.got.length >= 2, 10_000, 'notifications');
    const types = recv.got.map((g) => `${g.body.type} ${g.body.subject === rev1 ? 'rev1' : 'rev2'}`);
    expect(types).toEqual(['io.govops.reconcile.drift rev1', 'io.govops.reconcile.drift rev2']);
    expect(recv.got[1]!.body.data).toMatchObject({ observe: true, result: 'drift' });
    expect(recv.got[1]!.body.data.message).toMatch(/2 changes pending, not applied \(--observe\)/);
    expect(d.out()).toMatch(/observe: changes pending, not applied \(--observe\)/);
  });

  it('refuses --observe with --self-heal', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanup.add(() => sandbox.close());
    const home = await cleanup.tmp('govops-observe-');
    await mkdir(join(home, 'm'));
    const child = spawn(process.execPath, [CLI, 'run', '--dir', join(home, 'm'), '--observe', '--self-heal'], {
      env: { ...process.env, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(err).toMatch(/--observe never writes: it cannot be combined with --self-heal/);
  });
});

describe('govops run --self-heal --prune with a suspended resource (Flux suspend)', () => {
  it('drift repair and prune leave it alone; /status and metrics report it suspended', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const home = await cleanup.tmp('govops-suspend-');
    await mkdir(join(home, 'm'));
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/sql/1'));
    await writeFile(join(home, 'm', 'other.yaml'), lake('/sql/1', 'other.example.com', 'other'));
    const d = await daemon(sandbox, home, ['--self-heal', '--prune', '--max-deletes', '5', '--resync', '200ms']);
    const first = await until(async () => {
      const s = await status(d.url);
      return s.lastReconcile?.result === 'in-sync' && s.resources.length === 2 && s;
    }, 20_000, 'both applied');
    const id = first.resources.find((r: { name: string }) => r.name === 'lake').liveId as string;
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/sql/1').replace('  name: lake', '  name: lake\n  annotations:\n    govops/suspend: "true"'));
    await until(async () => (await status(d.url)).resources.some((r: { syncState: string }) => r.syncState === 'suspended'), 20_000, 'suspended');
    expect(await (await fetch(`${d.url}/metrics`)).text()).toMatch(/^govops_resources\{kind="lakehouse",sync_state="suspended"\} 1$/m);
    sandbox.clearRequests();
    const patched = await fetch(`${sandbox.url}/_sandbox/integrations/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: sandbox.adminToken },
      body: JSON.stringify({ config: { httpPath: '/by-hand' } }),
    });
    expect(patched.status).toBe(200);
    // The manifest goes too: the state remembers the suspension, so prune leaves it.
    const before = Number(/^govops_reconcile_total\{result="in-sync"\} (\d+)$/m.exec(await (await fetch(`${d.url}/metrics`)).text())?.[1] ?? 0);
    await rm(join(home, 'm', 'lake.yaml'));
    await until(async () => {
      const n = Number(/^govops_reconcile_total\{result="in-sync"\} (\d+)$/m.exec(await (await fetch(`${d.url}/metrics`)).text())?.[1] ?? 0);
      return n >= before + 4;
    }, 20_000, 'resyncs after the manifest went');
    expect(requestLines(sandbox).filter((l) => !l.startsWith('GET '))).toEqual([]);
    const live = await (await fetch(`${sandbox.url}/integrations`, { headers: { authorization: sandbox.adminToken } })).json() as Array<{ id: unknown; config: { httpPath: string } }>;
    expect(live.find((i) => String(i.id) === id)!.config.httpPath).toBe('/by-hand');
  });
});

describe('govops run --notify-url (Flux notification-controller)', () => {
  it('posts CloudEvents for applied, drift, blocked, rejected and failed reconciles; retries; no repeats; no secrets', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const home = await cleanup.tmp('govops-notify-');
    await mkdir(join(home, 'm'));
    await writeFile(join(home, 'notify-token'), `${HEADER_SECRET}\n`);
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/sql/1'));
    const recv = await receiver(1);
    const d = await daemon(sandbox, home, ['--resync', '300ms', '--notify-url', recv.url, '--notify-header-file', `Authorization=${join(home, 'notify-token')}`]);
    const delivered = () => recv.got.filter((g) => g.status === 202).map((g) => g.body);

    // applied (the first POST got a 503: retried with the same event id)
    await until(() => delivered().length >= 1, 20_000, 'applied event');
    expect(recv.got[0]!.status).toBe(503);
    expect(recv.got[1]!.body.id).toBe(recv.got[0]!.body.id);
    const applied = delivered()[0];
    expect(recv.got[1]!.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(recv.got[1]!.headers.authorization).toBe(HEADER_SECRET);
    expect(applied).toMatchObject({
      specversion: '1.0',
      type: 'io.govops.reconcile.applied',
      source: expect.stringMatching(/^govops:\/\//),
      datacontenttype: 'application/json',
      data: {
        reason: 'revision',
        result: 'applied',
        observe: false,
        summary: { create: 1 },
        resources: [{ kind: 'Integration', name: 'lake', action: 'create', result: 'applied', liveId: expect.any(String) }],
      },
    });
    expect(applied.subject).toBe(applied.data.revision);
    expect(applied.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(applied.time)).not.toBeNaN();
    const id = applied.data.resources[0].liveId as string;

    // drift: an out-of-band change found by the resync (no --self-heal), told once however many resyncs see it
    const patched = await fetch(`${sandbox.url}/_sandbox/integrations/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: sandbox.adminToken },
      body: JSON.stringify({ config: { httpPath: '/by-hand' } }),
    });
    expect(patched.status).toBe(200);
    await until(() => delivered().length >= 2, 20_000, 'drift event');
    const drift = delivered()[1];
    expect(drift).toMatchObject({ type: 'io.govops.reconcile.drift', data: { reason: 'resync', result: 'drift', resources: [{ name: 'lake', action: 'update', result: 'pending' }] } });
    await until(async () => Number(/^govops_reconcile_total\{result="drift"\} (\d+)$/m.exec(await (await fetch(`${d.url}/metrics`)).text())?.[1] ?? 0) >= 3, 20_000, 'more resyncs');
    expect(delivered().filter((e) => e.type === 'io.govops.reconcile.drift')).toHaveLength(1);

    // blocked: a non-editable attribute changed, and no --allow-replace
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/sql/1', 'other-lake.example.com'));
    await until(() => delivered().some((e) => e.type === 'io.govops.reconcile.blocked'), 20_000, 'blocked event');
    const blocked = delivered().find((e) => e.type === 'io.govops.reconcile.blocked');
    expect(blocked.data.resources).toEqual([
      expect.objectContaining({ name: 'lake', action: 'replace', result: 'blocked', code: 'GOVOPS_BLOCKED', message: expect.stringMatching(/--allow-replace/) }),
    ]);

    // rejected: an invalid manifest, with file:line:col
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/sql/1').replace('httpPath', 'httpPth'));
    await until(() => delivered().some((e) => e.type === 'io.govops.reconcile.rejected'), 20_000, 'rejected event');
    const rejected = delivered().find((e) => e.type === 'io.govops.reconcile.rejected');
    expect(rejected.data.code).toBe('GOVOPS_INVALID_REVISION');
    expect(rejected.data.problems.join('\n')).toMatch(/lake\.yaml:\d+:\d+: Integration\/lake: .*httpPa?th/);

    // failed: the service refuses a new integration (its connection test fails)
    await writeFile(join(home, 'm', 'lake.yaml'), lake('/by-hand'));
    await writeFile(join(home, 'm', 'bad.yaml'), lake('/sql/1', 'bad.invalid', 'bad'));
    await until(() => delivered().some((e) => e.type === 'io.govops.reconcile.failed'), 20_000, 'failed event');
    const failed = delivered().find((e) => e.type === 'io.govops.reconcile.failed');
    expect(failed.data.resources).toEqual([expect.objectContaining({ name: 'bad', action: 'create', result: 'failed', code: 'GOVOPS_VALIDATION_FAILED' })]);

    // blocked: a manual-flow integration awaiting the acknowledgment of its platform script (nothing written)
    await rm(join(home, 'm', 'bad.yaml'));
    await writeFile(join(home, 'm', 'manual.yaml'), manualLakeManifest('/sql/1').replace('name: lake', 'name: manual').replace('lake.example.com', 'manual.example.com'));
    await until(() => delivered().some((e) => e.type === 'io.govops.reconcile.blocked' && e.data.resources.some((r: { name: string }) => r.name === 'manual')), 20_000, 'manual-step event');
    const manual = delivered().find((e) => e.type === 'io.govops.reconcile.blocked' && e.data.resources.some((r: { name: string }) => r.name === 'manual'));
    expect(manual.data.resources).toEqual([expect.objectContaining({ name: 'manual', action: 'create', result: 'blocked', code: 'GOVOPS_AWAITING_MANUAL_STEP' })]);

    for (const g of recv.got) {
      const text = JSON.stringify(g.body);
      expect(text).not.toContain(TOKEN_VALUE);
      expect(text).not.toContain(HEADER_SECRET);
      expect(text).not.toContain('notify-CANARY');
    }
    expect(d.out()).not.toContain(HEADER_SECRET);
    expect(d.out()).not.toContain(TOKEN_VALUE);
    expect(d.out()).not.toContain('/govops/events'); // the URL's path may be a secret (chat webhooks)
  });
});
