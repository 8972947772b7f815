import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPlan } from '../../src/apply/applier.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_POLL_LIST_THRESHOLD,
  DEFAULT_POLL_MAX_MS,
  DEFAULT_POLL_MIN_MS,
  DEFAULT_POLL_RATE,
  DEFAULT_TIMEOUT_MS,
  resolveTuning,
} from '../../src/apply/tuning.js';
import { DEFAULT_BATCH_LIMITS } from '../../src/apply/webhook-batch.js';
import { silentLogger } from '../../src/log.js';
import { ServiceClient } from '../../src/api/client.js';
import { ErrorCode } from '../../src/errors.js';
import { configShapes } from '../../src/manifests/shapes.js';
import { planChanges } from '../../src/plan/planner.js';
import { newState } from '../../src/state/store.js';
import type { GovopsState } from '../../src/state/types.js';
import { integration, KEY, sqlConfig, webhook } from '../plan/fixtures.js';
import type { ServiceApi } from '../../src/api/client-types.js';
import { ManualClock } from '../helpers/clock.js';
import { trackApi } from '../helpers/tracked-api.js';
import { rig, type Rig } from './inproc.js';

const SHAPES = configShapes();

let r: Rig;
let clock: ManualClock;
let api: ServiceApi;
beforeEach(async () => {
  // govops and the sandbox on one clock moved by the test: transitions end at its times, never the machine's
  clock = new ManualClock();
  r = await rig({ clock });
  api = trackApi(r.api, clock).api;
});
const turn = (): Promise<void> => new Promise((ok) => setImmediate(ok));
afterEach(async () => {
  await r.close();
});

describe('applyPlan', () => {
  it('state is saved after each resource: every finished resource is in the state persisted before it is reported', async () => {
    const desired = [
      ...Array.from({ length: 6 }, (_, i) => integration(`sql-${i}`, 'sql_analytics', sqlConfig(`db-${i}.example.com`))),
      webhook('hook-a'),
      webhook('hook-b'),
    ];
    const state: GovopsState = { ...newState(), fingerprintKey: KEY };
    const plan = planChanges({ shapes: SHAPES, desired, live: { integrations: [], webhooks: [] }, state, options: { prune: false, allowReplace: false } });
    const persisted: GovopsState[] = [];
    let concurrentSaves = 0;
    let maxConcurrentSaves = 0;
    const violations: string[] = [];
    const res = await clock.runUntil(applyPlan({
      api,
      plan,
      desired,
      state,
      logger: silentLogger(),
      tuning: { concurrency: 3, pollIntervalMs: 10 },
      clock,
      persist: async (s) => {
        maxConcurrentSaves = Math.max(maxConcurrentSaves, ++concurrentSaves);
        await turn(); // a save that takes a while: another one started meanwhile would overlap it
        persisted.push(s);
        concurrentSaves--;
      },
      onOutcome: (o) => {
        const last = persisted[persisted.length - 1];
        if (!last?.resources.some((x) => x.kind === o.resourceKind && x.name === o.name)) violations.push(o.name);
      },
    }));
    expect(res.ok).toBe(true);
    expect(res.outcomes).toHaveLength(8);
    expect(violations).toEqual([]);
    expect(maxConcurrentSaves).toBe(1);
    expect(res.state.resources.map((x) => x.name).sort()).toEqual([...desired.map((d) => d.name)].sort());
    expect(JSON.stringify(persisted)).not.toContain('pw-one');
  });

  it('refuses a plan with errors', async () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const plan = { formatVersion: 2 as const, changes: [], summary: { create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: 0 }, errors: ['boom'], warnings: [] };
    await expect(applyPlan({ api: r.api, plan, desired: [d], state: newState(), logger: silentLogger(), tuning: {}, persist: async () => {} })).rejects.toThrow(/boom/);
    expect(r.lines()).toEqual([]);
  });

  it('makes no logger per resource: each outcome is one line with its resource as a field, none built below the level', async () => {
    for (const level of ['info', 'warn'] as const) {
      const lines: Array<Record<string, unknown>> = [];
      const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
      let children = 0;
      const child = logger.child.bind(logger);
      logger.child = ((...args: Parameters<typeof child>) => (children++, child(...args))) as typeof logger.child;
      const desired = [...Array.from({ length: 30 }, (_, i) => webhook(`hook-${level}-${i}`)), integration(`sql-${level}`, 'sql_analytics', sqlConfig(`db-${level}.example.com`))];
      const state: GovopsState = { ...newState(), fingerprintKey: KEY };
      const plan = planChanges({ shapes: SHAPES, desired, live: { integrations: [], webhooks: [] }, state, options: { prune: false, allowReplace: false } });
      const res = await clock.runUntil(applyPlan({ api, plan, desired, state, logger, tuning: { pollIntervalMs: 10 }, clock, persist: async () => {} }));
      expect(res.ok).toBe(true);
      expect(children).toBe(0);
      const applied = lines.filter((l) => l.msg === 'applied');
      if (level === 'warn') expect(applied).toEqual([]);
      else expect(applied.map((l) => l.resource).sort()).toEqual(desired.map((d) => `${d.kind}/${d.name}`).sort());
    }
  });
});

describe('a step of the wall clock during an apply (NTP, a VM resumed)', () => {
  // One integration to create and wait for (the sandbox's transition: 2 s of the clock's time), --timeout 60 s; the
  // time of day is set an hour forward or back once the apply runs (its first state save: the intent of the create).
  const applyWithStep = async (stepMs: number) => {
    const desired = [integration('sql-step', 'sql_analytics', sqlConfig('db-step.example.com'))];
    const state: GovopsState = { ...newState(), fingerprintKey: KEY };
    const plan = planChanges({ shapes: SHAPES, desired, live: { integrations: [], webhooks: [] }, state, options: { prune: false, allowReplace: false } });
    let stepped = false;
    const started = clock.monotonic();
    const res = await clock.runUntil(applyPlan({
      api, plan, desired, state, logger: silentLogger(), clock,
      tuning: { timeoutMs: 60_000, pollIntervalMs: 100, pollMaxIntervalMs: 1_000 },
      persist: async () => {
        if (!stepped) clock.stepWall(stepMs);
        stepped = true;
      },
    }));
    return { res, took: clock.monotonic() - started };
  };

  it('set forward, it does not end the apply --timeout at once: the integration is waited for and applied', async () => {
    await r.close();
    r = await rig({ clock, transitionMs: 2_000 });
    api = trackApi(r.api, clock).api;
    const { res } = await applyWithStep(3_600_000);
    expect(res.outcomes.map((o) => [o.name, o.result, o.code])).toEqual([['sql-step', 'ok', undefined]]);
    expect(res.ok).toBe(true);
  });

  it('set back, it does not stall the status polls for that long: the apply ends when the transition does', async () => {
    await r.close();
    r = await rig({ clock, transitionMs: 2_000 });
    api = trackApi(r.api, clock).api;
    const { res, took } = await applyWithStep(-3_600_000);
    expect(res.ok).toBe(true);
    expect(took).toBeLessThan(10_000);
  });
});

describe('--timeout and the client\'s retries', () => {
  it('a status poll answered 429 with Retry-After: 60 is not retried past the deadline: the apply ends at its --timeout, timed out', async () => {
    await r.close();
    r = await rig({ clock, transitionMs: 2_000 });
    // the client as in production (4 retries, Retry-After honoured up to 60 s), on the test's clock
    const client = new ServiceClient({ baseUrl: r.sandbox.url, token: r.sandbox.adminToken, logger: silentLogger(), clock, retryPolicy: { baseDelayMs: 1, maxDelayMs: 5 } });
    r.sandbox.faults.add({ type: 'error', method: 'GET', path: '/integrations*', status: 429, retryAfter: 60 });
    const desired = [integration('sql-slow', 'sql_analytics', sqlConfig('db-slow.example.com'))];
    const state: GovopsState = { ...newState(), fingerprintKey: KEY };
    const plan = planChanges({ shapes: SHAPES, desired, live: { integrations: [], webhooks: [] }, state, options: { prune: false, allowReplace: false } });
    const started = clock.monotonic();
    try {
      const res = await clock.runUntil(applyPlan({
        api: client, plan, desired, state, logger: silentLogger(), clock, persist: async () => {}, signal: new AbortController().signal,
        tuning: { timeoutMs: 10_000, pollIntervalMs: 100, pollMaxIntervalMs: 1_000 },
      }));
      expect(res.outcomes.map((o) => [o.name, o.result, o.code])).toEqual([['sql-slow', 'failed', ErrorCode.settleTimeout]]);
      expect(clock.monotonic() - started).toBeLessThanOrEqual(10_000);
    } finally {
      await client.close();
    }
  });
});

describe('apply tuning', () => {
  it('is filled with its defaults once; a concurrency below 1 is 1; the batch limits keep what was given', () => {
    expect(resolveTuning({})).toEqual({
      concurrency: DEFAULT_CONCURRENCY,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      pollIntervalMs: DEFAULT_POLL_MIN_MS,
      pollMaxIntervalMs: DEFAULT_POLL_MAX_MS,
      pollRate: DEFAULT_POLL_RATE,
      pollListThreshold: DEFAULT_POLL_LIST_THRESHOLD,
      webhookBatch: DEFAULT_BATCH_LIMITS,
    });
    expect(resolveTuning({ concurrency: 0, pollListThreshold: Infinity, webhookBatch: { maxItems: 7 } })).toMatchObject({
      concurrency: 1,
      pollListThreshold: Infinity,
      webhookBatch: { maxItems: 7, maxBytes: DEFAULT_BATCH_LIMITS.maxBytes },
    });
  });
});
