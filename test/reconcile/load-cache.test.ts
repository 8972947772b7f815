/**
 * The daemon's load cache: a resync of an unchanged revision reuses the manifests loaded and validated
 * before (a revision's folder never changes), while secrets are resolved again every time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoadCache } from '../../src/reconcile/engine.js';
import { lakeManifest, rig, type Rig } from '../apply/inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig({ transitionMs: 20 });
  r.env.GOVOPS_SECRET_LAKE_TOKEN = 'token-one-value';
});
afterEach(async () => {
  await r.close();
});

describe('load cache', () => {
  it('the same revision is not read again; another revision is; secrets are resolved each time', async () => {
    const loadCache = new LoadCache();
    await r.write('a.yaml', lakeManifest('lake', 'lake.example.com'));
    expect((await r.run({ loadCache, revision: 'rev-1' })).ok).toBe(true);
    // The folder of revision rev-1 is never changed in the daemon; changing it here shows it is not read again.
    await r.write('b.yaml', lakeManifest('lake2', 'lake2.example.com'));
    const again = await r.run({ loadCache, revision: 'rev-1', apply: false });
    expect(again.ok, again.error).toBe(true);
    expect(again.plan!.changes.map((c) => c.name)).toEqual(['lake']);
    // ...but its secrets are read again: a rotated token is an update
    r.env.GOVOPS_SECRET_LAKE_TOKEN = 'token-two-value';
    const rotated = await r.run({ loadCache, revision: 'rev-1', apply: false });
    expect(rotated.plan!.changes.find((c) => c.name === 'lake')!.action).toBe('update');
    // a new revision is loaded
    const next = await r.run({ loadCache, revision: 'rev-2', apply: false });
    expect(next.plan!.changes.map((c) => c.name).sort()).toEqual(['lake', 'lake2']);
  });

  it('a revision with files that could not be read is not kept', async () => {
    const loadCache = new LoadCache();
    await r.write('a.yaml', lakeManifest('lake', 'lake.example.com'));
    const missing = await r.run({ loadCache, revision: 'rev-x', paths: ['m', 'nope.yaml'], apply: false });
    expect(missing.ok).toBe(false);
    const ok = await r.run({ loadCache, revision: 'rev-x', apply: false });
    expect(ok.ok, ok.error).toBe(true);
  });
});
