/**
 * Status polling learns from the state file (issue #18): what one apply observed about transition times is
 * saved in the state (`transitions`) and aims the first poll of the next apply. Real sandbox over HTTP;
 * every assertion is on requests and the state, never on how fast anything ran (only lower bounds on time).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadState, saveState } from '../../src/state/store.js';
import { lakeManifest, rig, type Rig } from './inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig({ transitionMs: 150 });
  r.env.GOVOPS_SECRET_LAKE_TOKEN = 'tok-learn-1';
});
afterEach(async () => {
  await r.close();
});

const statusPolls = (id: string) => r.sandbox.requests().filter((q) => q.method === 'GET' && q.path === `/integrations/${id}/status`);

describe('poll learning persisted in the state file', () => {
  it('a first apply (nothing learned) records a bracket per created integration in the state', async () => {
    for (const n of [1, 2, 3]) await r.write(`l${n}.yaml`, lakeManifest(`lake${n}`, `lake${n}.example.com`));
    const res = await r.run({ pollListThreshold: Infinity });
    expect(res.ok, res.error).toBe(true);
    const brackets = (await r.state()).transitions?.['lakehouse/create'];
    expect(brackets).toHaveLength(3);
    for (const [lo, hi] of brackets!) {
      expect(lo).toBeGreaterThanOrEqual(0);
      expect(hi).toBeGreaterThanOrEqual(lo);
    }
    expect(res.polls!.status).toBeGreaterThanOrEqual(3);
  });

  it('the next apply aims its first poll at the learned end: one status request each, none before it', async () => {
    // The state says lakehouse creates take about 1 s (the sandbox takes 150 ms): each integration is polled
    // once, at ~1 s after its create was answered, and is settled by then.
    const learned: Array<[number, number]> = Array.from({ length: 5 }, () => [990, 1000]);
    await saveState(r.statePath, { ...(await loadState(r.statePath)), transitions: { 'lakehouse/create': learned } });
    for (const n of [1, 2, 3]) await r.write(`l${n}.yaml`, lakeManifest(`lake${n}`, `lake${n}.example.com`));
    const res = await r.run({ pollListThreshold: Infinity, pollMaxIntervalMs: 5000 });
    expect(res.ok, res.error).toBe(true);
    const creates = r.sandbox.requests().filter((q) => q.method === 'POST' && q.path === '/integrations' && q.query.dryRun !== 'true');
    expect(creates).toHaveLength(3);
    const ids = res.outcomes.map((o) => o.liveId!);
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      const polls = statusPolls(id);
      expect(polls).toHaveLength(1);
      // the answer to its create came before this integration's poll by at least the learned duration
      const created = Math.min(...creates.map((c) => Date.parse(c.time)));
      expect(Date.parse(polls[0]!.time) - created).toBeGreaterThanOrEqual(950);
    }
    expect(res.polls).toEqual({ status: 3, lists: 0 });
    // what this apply saw is added to what the state knew: settled at its first look (>= 1 s after the write),
    // taken as ended within the last short interval before it (lo < hi), so a late estimate can move down
    const after = (await r.state()).transitions?.['lakehouse/create'];
    expect(after).toHaveLength(8);
    expect(after!.slice(0, 5)).toEqual(learned);
    for (const [lo, hi] of after!.slice(5)) {
      expect(hi).toBeGreaterThanOrEqual(950);
      expect(lo).toBeLessThan(hi);
    }
  });
});
