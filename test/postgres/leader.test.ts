/**
 * The leader lease in process, against a real PostgreSQL (started here), with an injected monotonic clock:
 * one leader per key; a leader past its renew deadline refuses writes (gate) and aborts its reconcile
 * before the lease can expire; another replica takes an expired lease with the next term (the fence that
 * refuses a deposed leader's state writes is drilled in state.test.ts and ha.test.ts).
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { LeaderElector, leaseSettingsProblem } from '../../src/daemon/leader.js';
import { closePgPools } from '../../src/state/pg/backend.js';
import { withStateKey } from '../../src/state/location.js';
import { psql, startPostgres, type PgServer } from '../helpers/postgres.js';

let pg: PgServer;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(async () => {
  await closePgPools();
  pg?.destroy();
});

const LEASE = { durationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 20_000 };

function elector(key: string, identity: string, clock: { t: number }, elected: string[] = []): LeaderElector {
  return new LeaderElector({
    statePath: withStateKey(pg.url, key),
    identity,
    lease: LEASE,
    logger: silentLogger(),
    registry: new Registry(),
    onElected: () => elected.push(identity),
    onHook: () => undefined,
    now: () => clock.t,
  });
}

describe('leader lease', () => {
  it('settings: retry < renew deadline < duration', () => {
    expect(leaseSettingsProblem({ durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toBeUndefined();
    expect(leaseSettingsProblem({ durationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toMatch(/renew-deadline/);
    expect(leaseSettingsProblem({ durationMs: 15_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toMatch(/retry-period/);
  });

  it('one leader; past its renew deadline it sends nothing and aborts; an expired lease goes to another with the next term', async () => {
    const clock = { t: 1_000 };
    const elected: string[] = [];
    const a = elector('lease', 'a', clock, elected);
    const b = elector('lease', 'b', clock, elected);
    await a.start();
    await b.start();
    try {
      expect(elected).toEqual(['a']);
      expect(a.status()).toMatchObject({ role: 'leader', identity: 'a', term: 1 });
      expect(b.status()).toMatchObject({ role: 'standby', identity: 'b', leader: { identity: 'a', term: 1 } });
      expect(() => a.gate('POST', '/integrations')).not.toThrow();
      expect(() => b.gate('POST', '/integrations')).toThrow(expect.objectContaining({ code: ErrorCode.stateFenced }));
      // a frozen leader: its monotonic clock jumps past the renew deadline (the database lease still runs 20s longer)
      const signal = a.signal;
      clock.t += LEASE.renewDeadlineMs + 1;
      expect(a.isLeading()).toBe(false);
      expect(() => a.gate('PUT', '/integrations/1')).toThrow(expect.objectContaining({ code: ErrorCode.stateFenced }));
      expect(signal.aborted).toBe(true);
      expect(a.status().role).toBe('standby');
      // the lease expires in the database: b takes it with the next term
      psql(pg, `UPDATE govops.leases SET expires_at = now() - interval '1 second' WHERE key = 'lease'`);
      await (b as unknown as { tick(): Promise<void> }).tick();
      expect(b.status()).toMatchObject({ role: 'leader', term: 2 });
      expect(elected).toEqual(['a', 'b']);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
