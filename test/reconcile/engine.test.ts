import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import type { Plan } from '../../src/plan/types.js';
import { acquireStateLock } from '../../src/state/lock.js';
import { lakeManifest, rig, type Rig } from '../apply/inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig();
  r.env.GOVOPS_SECRET_LAKE_TOKEN = 'tok-EEEE-5555';
  await r.write('lake.yaml', lakeManifest('lake', 'lake.example.com'));
});
afterEach(async () => {
  await r.close();
});

/**
 * A service that takes requests and never answers, and a reconcile of a manifest stream against it that has given
 * nothing yet: `give` its text. Were the lists asked for early not cancelled, their sockets stayed `open`.
 */
async function hungService(apply: boolean) {
  const open = new Set<string>();
  const arrived: string[] = [];
  const hung = createServer((req) => {
    arrived.push(req.url!);
    open.add(req.url!);
    req.socket.on('close', () => open.delete(req.url!));
  });
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  const api = new ServiceClient({ baseUrl: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`, token: 't', logger: silentLogger(), retries: 0, timeoutMs: 120_000 });
  let give!: (text: string) => void;
  const text = new Promise<string>((resolve) => (give = resolve));
  const run = reconcile(api, engineOptions({ root: r.dir, paths: ['-'], stream: { label: 'stdin', read: () => text }, apply, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env }));
  const close = async (): Promise<void> => {
    await api.close(0);
    hung.closeAllConnections();
    await new Promise((resolve) => hung.close(resolve));
  };
  return { open, arrived, give, run, close };
}

describe('reconcile engine', () => {
  it('plan only: stage done, changed, onPlan called, exactly the two list requests, no state written', async () => {
    const seen: Plan[] = [];
    const res = await r.run({ apply: false, onPlan: (p) => seen.push(p) });
    expect(res).toMatchObject({ stage: 'done', ok: true, changed: true, outcomes: [] });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.summary.create).toBe(1);
    expect(r.lines().sort()).toEqual(['GET /integrations 200', 'GET /webhooks 200']);
    expect(existsSync(r.statePath)).toBe(false);
  });

  it('plan only: the live lists are asked for while the manifests are read, not after', async () => {
    let give!: (text: string) => void;
    const text = new Promise<string>((resolve) => (give = resolve));
    const run = r.run({ apply: false, paths: ['-'], stream: { label: 'stdin', read: () => text } });
    // the manifests are not read yet (their stream has given nothing): the lists are answered already
    await vi.waitFor(() => expect(r.lines().sort()).toEqual(['GET /integrations 200', 'GET /webhooks 200']), { timeout: 20_000 });
    give(lakeManifest('lake', 'lake.example.com'));
    const res = await run;
    expect(res).toMatchObject({ stage: 'done', ok: true, changed: true });
    expect(res.plan!.summary.create).toBe(1);
    expect(r.lines()).toHaveLength(2);
  });

  it('plan only: a load that fails cancels the lists asked for early, and does not report them', async () => {
    const h = await hungService(false);
    try {
      await vi.waitFor(() => expect(h.arrived.sort()).toEqual(['/integrations', '/webhooks']), { timeout: 20_000 });
      h.give('apiVersion: govops/v1\nkind: Integration\nmetadata: {}\n');
      const res = await h.run;
      expect(res).toMatchObject({ stage: 'load', ok: false });
      expect(res.error).not.toMatch(/integrations|webhooks|cancel/i);
      await vi.waitFor(() => expect([...h.open]).toEqual([]), { timeout: 20_000 });
    } finally {
      await h.close();
    }
  });

  it('apply: the state lock is taken and the live lists are asked for while the manifests are read, not after', async () => {
    let give!: (text: string) => void;
    const text = new Promise<string>((resolve) => (give = resolve));
    const run = r.run({ paths: ['-'], stream: { label: 'stdin', read: () => text } });
    // the manifests are not read yet (their stream has given nothing): the lists are answered already, under the lock
    await vi.waitFor(() => expect(r.lines().sort()).toEqual(['GET /integrations 200', 'GET /webhooks 200']), { timeout: 20_000 });
    await expect(acquireStateLock(r.statePath)).rejects.toMatchObject({ code: 'GOVOPS_STATE_LOCKED' });
    give(lakeManifest('lake', 'lake.example.com'));
    const res = await run;
    expect(res).toMatchObject({ stage: 'done', ok: true, changed: true });
    expect(res.outcomes.map((o) => `${o.name}:${o.result}`)).toEqual(['lake:ok']);
    // the lists were not asked for again after the load
    expect(r.lines().filter((l) => l.startsWith('GET /integrations 2') || l.startsWith('GET /webhooks 2'))).toHaveLength(2);
    // and the lock is given back
    await (await acquireStateLock(r.statePath)).release();
  });

  it('apply: a load that fails gives back what it took early (the lists cancelled, the lock released), and reports only itself', async () => {
    const h = await hungService(true);
    try {
      await vi.waitFor(() => expect(h.arrived.sort()).toEqual(['/integrations', '/webhooks']), { timeout: 20_000 });
      await expect(acquireStateLock(r.statePath)).rejects.toMatchObject({ code: 'GOVOPS_STATE_LOCKED' });
      h.give('apiVersion: govops/v1\nkind: Integration\nmetadata: {}\n');
      const res = await h.run;
      expect(res).toMatchObject({ stage: 'load', ok: false });
      expect(res.error).not.toMatch(/integrations|webhooks|cancel|lock/i);
      // free as soon as the failure is returned
      await (await acquireStateLock(r.statePath)).release();
      await vi.waitFor(() => expect([...h.open]).toEqual([]), { timeout: 20_000 });
      expect(existsSync(r.statePath)).toBe(false);
    } finally {
      await h.close();
    }
  });

  it('apply: manifests that fail to load while another writer holds the lock: the load failure is what is reported', async () => {
    await r.write('bad.yaml', 'apiVersion: govops/v1\nkind: Integration\nmetadata: {}\n');
    const lock = await acquireStateLock(r.statePath);
    try {
      const res = await r.run();
      expect(res).toMatchObject({ stage: 'load', ok: false });
      expect(res.error ?? '').not.toMatch(/lock/i);
      expect(res.diagnostics.some((d) => d.file.endsWith('bad.yaml'))).toBe(true);
    } finally {
      await lock.release();
    }
  });

  it('apply: outcomes reported through onOutcome; revision recorded in state', async () => {
    const seen: string[] = [];
    const res = await r.run({ revision: 'abc123', onOutcome: (o, done, total) => seen.push(`${o.name}:${o.result}:${done}/${total}`) });
    expect(res).toMatchObject({ stage: 'done', ok: true, changed: true, revision: 'abc123' });
    expect(seen).toEqual(['lake:ok:1/1']);
    expect((await r.state()).resources[0]).toMatchObject({ name: 'lake', revision: 'abc123', origin: 'created' });
    expect((await r.run()).changed).toBe(false);
  });

  it('another writer holding the state lock: apply refuses, nothing written', async () => {
    await mkdir(path.dirname(r.statePath), { recursive: true });
    const lock = await acquireStateLock(r.statePath);
    try {
      const res = await r.run();
      expect(res.ok).toBe(false);
      expect(res.error).toMatch(/lock/i);
      expect(r.lines().filter((l) => !l.startsWith('GET'))).toEqual([]);
    } finally {
      await lock.release();
    }
  });

  it('service unreachable: stage plan with a "cannot reach the service" error', async () => {
    const dead = new ServiceClient({ baseUrl: 'http://127.0.0.1:1', token: 't', logger: silentLogger(), retries: 0, timeoutMs: 2000 });
    try {
      const res = await reconcile(dead, engineOptions({
        root: r.dir,
        paths: ['m'],
        apply: true,
        prune: false,
        allowReplace: false,
        logger: silentLogger(),
        statePath: r.statePath,
        env: r.env,
      }));
      expect(res).toMatchObject({ stage: 'plan', ok: false });
      expect(res.error).toMatch(/^cannot reach the service: GET \/(integrations|webhooks)/);
    } finally {
      await dead.close();
    }
  });
});
