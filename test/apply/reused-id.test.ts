/**
 * A service that gives a deleted integration's id to the next one created (sandbox behaviour `reuse-ids`): a wait on
 * an integration that went away must not take the new integration at its id for the one it waited on. Real sandbox
 * over HTTP; govops and the sandbox share one clock the test moves (helpers/clock.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceApi } from '../../src/api/client-types.js';
import type { ServiceClient } from '../../src/api/client.js';
import type { IntegrationBody } from '../../src/api/types.js';
import { applyPlan, type ApplyResult } from '../../src/apply/applier.js';
import { ApiError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredIntegration } from '../../src/plan/types.js';
import { loadState } from '../../src/state/store.js';
import type { GovopsState } from '../../src/state/types.js';
import type { ManualClock } from '../helpers/clock.js';
import type { TrackedApi } from '../helpers/tracked-api.js';
import { integration, KEY, SHAPES } from '../plan/fixtures.js';
import { clockRig, type Rig } from './inproc.js';

let r: Rig;
let clock: ManualClock;
let tracked: TrackedApi<ServiceClient>;
let persist: (s: GovopsState) => Promise<void>;
beforeEach(async () => {
  ({ r, clock, tracked, persist } = await clockRig({ transitionMs: 300, behaviours: ['reuse-ids'] }));
});
afterEach(async () => {
  await r.close();
});

const lake = (n: number): DesiredIntegration =>
  integration(`lake${n}`, 'lakehouse', { workspaceUrl: `https://lake${n}.example.com`, httpPath: '/sql/1', token: `tok-reuse-${n}` });

/** Someone else's lakehouse (not in any manifest, not in the state). */
const othersLake: IntegrationBody = {
  type: 'lakehouse',
  autoBootstrap: true,
  config: { workspaceUrl: 'https://others.example.com', httpPath: '/sql/9', token: 'tok-others' },
};

async function apply(desired: DesiredIntegration[], api: ServiceApi = tracked.api): Promise<ApplyResult> {
  const state: GovopsState = { ...(await loadState(r.statePath)), fingerprintKey: KEY };
  const live = { integrations: await r.api.listIntegrations(), webhooks: await r.api.listWebhooks() };
  const plan = planChanges({ shapes: SHAPES, desired, live, state, options: { prune: true, allowReplace: false } });
  return clock.runUntil(
    applyPlan({ api, plan, desired, state, logger: silentLogger(), clock, tuning: { pollIntervalMs: 20, pollMaxIntervalMs: 200, pollListThreshold: Infinity }, persist }),
  );
}

/** The api, but the first time `GET /integrations/{id}` answers 404, another client creates an integration first. */
function othersCreateOnFirst404(): { api: ServiceApi; created: () => string | undefined } {
  let created: string | undefined;
  const api = new Proxy(tracked.api, {
    get(t, prop, receiver) {
      if (prop !== 'getIntegration') return Reflect.get(t, prop, receiver) as unknown;
      return async (id: string) => {
        try {
          return await t.getIntegration(id);
        } catch (err) {
          if (created === undefined && err instanceof ApiError && err.statusCode === 404) created = (await t.createIntegration(othersLake)).id;
          throw err;
        }
      };
    },
  });
  return { api, created: () => created };
}

/** The api, but once integration `id` is gone, another client creates an integration before govops' next status poll. */
function othersCreateBeforePollOf(id: string): { api: ServiceApi; created: () => string | undefined } {
  let created: string | undefined;
  const api = new Proxy(tracked.api, {
    get(t, prop, receiver) {
      if (prop !== 'getIntegrationStatus') return Reflect.get(t, prop, receiver) as unknown;
      return async (asked: string) => {
        if (asked === id && created === undefined && !(await r.api.listIntegrations()).some((i) => i.id === id)) {
          created = (await t.createIntegration(othersLake)).id;
        }
        return t.getIntegrationStatus(asked);
      };
    },
  });
  return { api, created: () => created };
}

describe('an id the service gives again', () => {
  it('a prune whose integration went, and whose id names a new integration by its next poll, is done (not "enabled, not gone")', async () => {
    expect((await apply([lake(1), lake(2)])).ok).toBe(true);
    const { api, created } = othersCreateBeforePollOf('1');
    const res = await apply([lake(2)], api);
    expect(created()).toBe('1');
    expect(res.outcomes).toEqual([expect.objectContaining({ name: 'lake1', action: 'delete', result: 'ok' })]);
    expect(res.ok).toBe(true);
    expect((await r.state()).resources.map((x) => x.name)).toEqual(['lake2']);
    expect((await r.api.getIntegration('1')).config.workspaceUrl).toBe('https://others.example.com');
  });

  it('a prune that meets a delete already under way (409) never deletes the integration given its id after it went', async () => {
    expect((await apply([lake(1), lake(2)])).ok).toBe(true);
    // someone else deletes lake1 (id 1) just before govops prunes it: govops' delete finds it `deleting` (409)
    await r.api.deleteIntegration('1', undefined);
    r.sandbox.clearRequests();
    const { api, created } = othersCreateOnFirst404();
    const res = await apply([lake(2)], api);
    // once lake1 was gone, another team created an integration, and the service gave it id 1
    expect(created()).toBe('1');
    const live = await r.api.getIntegration('1');
    expect(live.config.workspaceUrl).toBe('https://others.example.com'); // still there: govops did not delete it
    // lake1 is gone, as the prune wanted: the delete is done and its entry forgotten; what its id names now is left alone
    expect(res.outcomes).toEqual([expect.objectContaining({ name: 'lake1', action: 'delete', result: 'ok' })]);
    expect((await r.state()).resources.map((x) => x.name)).toEqual(['lake2']);
    expect(r.lines().filter((l) => l.startsWith('DELETE /integrations/1 '))).toEqual([]);
    expect(r.lines().filter((l) => l.startsWith('DELETE /integrations/1?dryRun=true 409'))).toHaveLength(1);
  });
});
