/**
 * Under --no-adopt a create meeting the service's 400 "previously failed to create" does not fix someone else's
 * integration (failed-creation-owner.test.ts). One govops' own earlier create made is still its own: a create whose
 * answer was lost and that ended in createError, while the next run's list lags (the intent is held,
 * plan/held-create.ts) and plans the create again. That one is fixed with PUT, as without the flag.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { rig, sqlManifest, type Rig } from './inproc.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('--no-adopt and the failed creation of govops\' own lost create', () => {
  it('is fixed with PUT and recorded as govops\', not refused as someone else\'s', async () => {
    const w = (r = await rig({ behaviours: ['503-after-success', 'list-lag'] }));
    Object.assign(w.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-AAAA-1111', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-BBBB-2222' });
    const run = () => {
      const flat = engineOptions({ root: w.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: w.statePath, env: w.env, pollIntervalMs: 10, timeoutMs: 20_000 });
      return reconcile(w.api, { ...flat, plan: { ...flat.plan, noAdopt: true } });
    };
    await w.write('a.yaml', sqlManifest('ours', 'db.late-fail.example'));
    // the create lands, its answer is lost (503) and the look-up's list lags: the intent stays pending
    const lost = await run();
    expect(lost.ok).toBe(false);
    expect((await w.state()).resources).toEqual([expect.objectContaining({ name: 'ours', id: '', pending: 'create' })]);
    const made = w.sandbox.integrations.get(1)!;
    w.sandbox.finishTransitions(); // it failed to create (createError)
    w.sandbox.integrations.written(made.id); // and the next list still lags behind it
    w.sandbox.clearRequests();
    const next = await run();
    expect(next.ok, next.error).toBe(true);
    expect(w.lines().filter((l) => l.startsWith('PUT /integrations/1 '))).toEqual(['PUT /integrations/1 200']);
    expect((await w.state()).resources).toEqual([expect.objectContaining({ name: 'ours', id: '1', origin: 'created' })]);
    expect((await w.api.getIntegrationStatus('1')).status).toBe('enabled');
  });
});
