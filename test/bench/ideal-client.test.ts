/**
 * The reference of bench/converge.bench.mjs is the ideal client issue #26 describes: C slots for the dry run and
 * the create, each slot freed as soon as the create is accepted (not held through the transition), then it
 * waits the known transition time and polls that integration's status until it is settled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { idealClient } from '../../bench/ideal-client.mjs';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const creates = (s: SandboxHandle) => s.requests().filter((r) => r.method === 'POST' && r.path === '/integrations' && r.query.dryRun !== 'true');

describe("the converge bench's ideal client", () => {
  it('frees a slot when its create is accepted, waits the transition, then polls until settled', async () => {
    const T = 50;
    sb = await startSandbox({ port: 0, transitionMs: T, stuckTransitions: true });
    const s = sb;
    const run = idealClient({ url: s.url, token: s.adminToken, n: 12, transitionMs: T, concurrency: 2 });
    // no transition can end yet: a client holding its slot until the integration settles would stop at 2 creates
    for (let i = 0; i < 400 && creates(s).length < 12; i++) await new Promise((r) => setTimeout(r, 25)); // a bound, not a speed check
    expect(creates(s)).toHaveLength(12);
    s.setStuckTransitions(false);
    const { seen } = await run;
    expect(new Set(seen.map((x) => x.id)).size).toBe(12);
    const log = s.requests();
    const firstCreate = Math.min(...creates(s).map((r) => Date.parse(r.time)));
    const polls = log.filter((r) => r.method === 'GET' && r.path.endsWith('/status'));
    expect(polls.length).toBeGreaterThanOrEqual(12);
    // no status request before the known transition time has passed since a create was answered (ms clock: -1)
    expect(Math.min(...polls.map((r) => Date.parse(r.time))) - firstCreate).toBeGreaterThanOrEqual(T - 1);
    // no list: the ideal polls each integration's own status
    expect(log.filter((r) => r.method === 'GET' && r.path === '/integrations')).toHaveLength(0);
  });
});
