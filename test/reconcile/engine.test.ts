import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
