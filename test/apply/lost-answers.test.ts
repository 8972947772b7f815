/**
 * Answers lost after the service acted (a proxy on 127.0.0.1 cuts the connection once the sandbox answered), and the
 * intents they leave in the state: the next run settles them without reporting govops' own write as someone else's.
 * Real sandbox over HTTP; govops and the sandbox share one clock the test moves (helpers/clock.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import type { ManualClock } from '../helpers/clock.js';
import { cuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { engineOptions, type FlatEngineOptions } from '../helpers/engine-options.js';
import { objectStoreManifest } from '../helpers/manifests.js';
import { trackApi, type TrackedApi } from '../helpers/tracked-api.js';
import { clockRig, webhookManifest, type Rig } from './inproc.js';

let r: Rig;
let clock: ManualClock;
let proxy: CuttingProxy;
let client: ServiceClient;
let tracked: TrackedApi<ServiceClient>;
beforeEach(async () => {
  ({ r, clock } = await clockRig({ transitionMs: 300 }));
  proxy = await cuttingProxy(r.sandbox.url);
  // no retries: the run that lost the answer ends there, as one killed right after sending would
  client = new ServiceClient({ baseUrl: proxy.url, token: r.sandbox.adminToken, logger: silentLogger(), retries: 0, clock });
  tracked = trackApi(client, clock);
});
afterEach(async () => {
  await client.close();
  await proxy.close();
  await r.close();
});

function run(opts: Partial<FlatEngineOptions> = {}): Promise<ReconcileResult> {
  return clock.runUntil(
    reconcile(
      tracked.api,
      engineOptions({
        root: r.dir,
        paths: ['m'],
        apply: true,
        prune: false,
        allowReplace: false,
        logger: silentLogger(),
        statePath: r.statePath,
        env: r.env,
        timeoutMs: 60_000,
        pollIntervalMs: 20,
        pollMaxIntervalMs: 200,
        clock,
        ...opts,
      }),
    ),
  );
}

describe('an integration delete whose answer was lost', () => {
  it('the next run, while the integration is still deleting, ends the delete as done: no "deleted meanwhile" failure', async () => {
    await r.write('store.yaml', objectStoreManifest('store', 's3://store/data'));
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false)); // (the manifest set is not empty)
    const created = await run();
    expect(created.ok, created.error).toBe(true);
    const id = (await r.state()).resources.find((e) => e.name === 'store')!.id;
    await r.remove('store.yaml');
    // the service carries the delete out (status deleting) and the answer is lost; deleting lasts into the next run
    r.sandbox.setStuckTransitions(['deleting']);
    proxy.cut = (line) => line === `DELETE /integrations/${id}`;
    const lost = await run({ prune: true });
    expect(lost.ok).toBe(false);
    expect(proxy.requests).toContain(`DELETE /integrations/${id} cut`);
    expect((await r.state()).resources).toContainEqual(expect.objectContaining({ name: 'store', id, pending: 'delete' }));
    expect((await r.api.getIntegration(id)).status).toBe('deleting');
    // the next run's dry run finds it still deleting (409); the delete then finishes while govops waits
    proxy.cut = (line) => {
      if (line.startsWith(`DELETE /integrations/${id}`)) r.sandbox.setStuckTransitions(false);
      return false;
    };
    const next = await run({ prune: true });
    expect(next.ok, next.error).toBe(true);
    expect(next.outcomes).toEqual([expect.objectContaining({ name: 'store', action: 'delete', result: 'ok' })]);
    expect((await r.state()).resources.map((e) => e.name)).toEqual(['hook']);
    expect(await r.api.listIntegrations()).toEqual([]);
  });
});
