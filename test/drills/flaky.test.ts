/**
 * Drill: a flaky service (20% 503, 5% dropped connections, 5% 409s, 400 ms latency spikes, and a webhook
 * batch that lands after the client timed out). 100 integrations and 20 webhooks converge in one apply:
 * exactly one live resource per manifest, a valid state without pending intents, an empty next plan.
 * The scenario is bench/flaky-drill.mjs (also run by `npm run bench`, which records its numbers).
 */
import { describe, expect, it } from 'vitest';
import { flakyDrill } from '../../bench/flaky-drill.mjs';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { actionable } from '../../src/plan/planner.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { parseState } from '../../src/state/store.js';

describe('drill: flaky service', () => {
  it('100 integrations and 20 webhooks converge in one apply, exactly once each', async () => {
    const r = await flakyDrill({ startSandbox, ServiceClient, reconcile, parseState, silentLogger }, { seed: 10 });
    expect(r.applied.ok, r.applied.error).toBe(true);
    // the service really was flaky, and the batch of webhooks landed after the client's 1 s timeout:
    // the client waited for it instead of sending it again
    expect(r.faultedRequests).toBeGreaterThan(50);
    expect(r.stats.retries).toBeGreaterThan(20);
    expect(r.webhookPosts[0]).toMatchObject({ status: 200 });
    expect(r.webhookPosts[0]!.durationMs).toBeGreaterThanOrEqual(2500);
    expect(r.webhookPosts).toHaveLength(1);
    // exactly one live resource per manifest
    const names = r.integrations.map((i) => String(i.config?.name)).sort();
    expect(names).toHaveLength(100);
    expect(new Set(names).size).toBe(100);
    expect(r.integrations.every((i) => i.status === 'enabled')).toBe(true);
    const hooks = r.webhooks.map((w) => w.name).sort();
    expect(hooks).toHaveLength(20);
    expect(new Set(hooks).size).toBe(20);
    // state valid: every resource recorded once with its live id, no intent left pending
    expect(r.state.resources).toHaveLength(120);
    expect(r.state.resources.filter((e) => e.pending !== undefined || e.id === '')).toEqual([]);
    const live = new Set([...r.integrations.map((i) => `Integration/${i.id}`), ...r.webhooks.map((w) => `Webhook/${w.id}`)]);
    expect(r.state.resources.every((e) => live.has(`${e.kind}/${e.id}`))).toBe(true);
    // the next plan is empty
    expect(r.next.ok).toBe(true);
    expect(actionable(r.next.plan!)).toEqual([]);
  }, 180_000);
});
