/**
 * The leader lease in process, against a real PostgreSQL (started here), with an injected monotonic clock:
 * one leader per key; a leader past its renew deadline refuses writes (gate) and aborts its reconcile
 * before the lease can expire; another replica takes an expired lease with the next term (the fence that
 * refuses a deposed leader's state writes is drilled in state.test.ts and ha.test.ts); a leader frozen in the
 * middle of a state write (its fence's share lock on the lease row held) does not block the takeover for longer
 * than the server's idle-in-transaction timeout.
 */
import net from 'node:net';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { LeaderElector, leaseSettingsProblem } from '../../src/daemon/leader.js';
import { IDLE_IN_TRANSACTION_MS, pgStateFor } from '../../src/state/pg/backend.js';
import { HOOK_CHANNEL, tryAcquireLease } from '../../src/state/pg/lease.js';
import { withStateKey } from '../../src/state/location.js';
import { ManualClock } from '../helpers/clock.js';
import { postgresPerFile, psql } from '../helpers/postgres.js';

const pg = postgresPerFile();

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

  it('a renewal answered only after the renew deadline (sent, then the process frozen) steps down at once, not at the next tick', async () => {
    const clock = { t: 1_000 };
    const a = elector('late-renewal', 'a', clock);
    await a.start();
    try {
      expect(a.status().role).toBe('leader');
      const renewal = (a as unknown as { tick(): Promise<void> }).tick(); // its start is read now
      clock.t += LEASE.renewDeadlineMs + 1; // frozen while the renewal was in flight; the database still renews
      await renewal;
      expect(a.isLeading()).toBe(false);
      // its own deadline is counted from the renewal's start: it stands down now (before: a deadline of a whole
      // renew period more, so /status and govops_leader said leader until the next tick's renewal was refused)
      const deadline = Date.now() + 5_000;
      while (a.status().role === 'leader' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(a.status().role).toBe('standby');
    } finally {
      await a.stop();
    }
  });

  it("/status shows the lease as the leader's last renewal left it, not as it was when first taken", async () => {
    const clock = { t: 1_000 };
    const a = elector('renewed', 'a', clock);
    await a.start();
    try {
      const expiry = () => Number(psql(pg, `SELECT floor(extract(epoch FROM expires_at) * 1000)::bigint FROM govops.leases WHERE key = 'renewed'`));
      const taken = expiry();
      const shown = () => Date.parse((a.status().leader as { expiresAt: string }).expiresAt);
      expect(shown()).toBe(taken);
      await (a as unknown as { tick(): Promise<void> }).tick(); // a renewal (the database's clock moved on meanwhile)
      const renewed = expiry();
      expect(renewed).toBeGreaterThan(taken);
      // the lease shown expires when the database says: it was the first expiry for ever, in the past 15 s after start
      expect(shown()).toBe(renewed);
    } finally {
      await a.stop();
    }
  });

  it('a leader that stops cleanly hands the lease over at once; one whose calls were cut short leaves it to expire', async () => {
    const clock = { t: 1_000 };
    const lease = () => psql(pg, `SELECT holder || ' ' || (expires_at > now()) FROM govops.leases WHERE key = 'handover'`).trim();
    const a = elector('handover', 'a', clock);
    await a.start();
    expect(lease()).toBe('a true');
    await a.stop();
    expect(lease()).not.toBe('a true'); // released: another replica may take it at its next tick
    const b = elector('handover', 'b', clock);
    await b.start();
    expect(b.status()).toMatchObject({ role: 'leader', identity: 'b' });
    await b.stop({ release: false });
    expect(b.status().role).toBe('standby');
    expect(lease()).toBe('b true'); // kept until it expires: a POST b's shutdown cut short may still land meanwhile
    const c = elector('handover', 'c', clock);
    await c.start();
    try {
      expect(c.status()).toMatchObject({ role: 'standby', leader: { identity: 'b' } });
    } finally {
      await c.stop();
    }
  });

  it('a replica stopped while its lease request is in flight gives back the lease that request took (it never led)', async () => {
    // Stopped during start-up or a tick (a rolling update's SIGTERM), the request still took the free lease: the
    // replica, stopped, never led and never gave it back, so every other replica waited the whole lease duration.
    const clock = { t: 1_000 };
    const lease = () => psql(pg, `SELECT holder || ' ' || (expires_at > now()) FROM govops.leases WHERE key = 'stopped-early'`).trim();
    const a = elector('stopped-early', 'a', clock);
    const starting = a.start();
    await a.stop();
    await starting;
    expect(a.status().role).toBe('standby');
    expect(lease()).not.toBe('a true');
    const b = elector('stopped-early', 'b', clock);
    await b.start();
    try {
      expect(b.status()).toMatchObject({ role: 'leader', identity: 'b' });
    } finally {
      await b.stop();
    }
  });

  it('a leader frozen in the middle of a state write does not block the takeover: the server ends its idle transaction', async () => {
    const key = withStateKey(pg.url, 'frozen');
    const state = pgStateFor(key);
    await state.ready();
    expect(await tryAcquireLease(state, 'a', 500)).toMatchObject({ holder: 'a', term: 1 });
    // a's write transaction, frozen after its fence check (as tx() does: BEGIN, SELECT ... FOR SHARE), never committed
    const frozen = await state.pool.connect();
    frozen.on('error', () => undefined);
    await frozen.query('BEGIN');
    await frozen.query(`SELECT term FROM govops.leases WHERE key = 'frozen' FOR SHARE`);
    const t0 = Date.now();
    try {
      // b's takeover of the expired lease waits for the row lock, then gets it once the server ends a's session
      const got = await (async () => {
        for (;;) {
          const l = await tryAcquireLease(state, 'b', 500);
          if (l) return l;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      expect(got).toMatchObject({ holder: 'b', term: 2 });
      expect(Date.now() - t0).toBeLessThan(IDLE_IN_TRANSACTION_MS + 5_000);
      await expect(frozen.query('SELECT 1')).rejects.toThrow();
    } finally {
      frozen.release(true);
    }
  }, 30_000);

  it('a push listener whose connection is dropped silently (no error, no end) connects anew and fetches once', async () => {
    // A NAT or firewall that forgets an idle flow sends nothing: the listener heard no push again until a restart.
    const proxy = await silentDropProxy(pg.port);
    const url = pg.url.replace(`:${pg.port}/`, `:${proxy.port}/`);
    const hooks: string[] = [];
    const a = new LeaderElector({
      statePath: withStateKey(url, 'silent-drop'),
      identity: 'a',
      lease: { durationMs: 60_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 },
      logger: silentLogger(),
      registry: new Registry(),
      onElected: () => undefined,
      onHook: () => hooks.push('hook'),
      now: () => 1_000, // leads throughout (its renew deadline never passes)
    });
    const listening = () => (a as unknown as { listening: boolean }).listening;
    const notify = () => psql(pg, `SELECT pg_notify('${HOOK_CHANNEL}', 'silent-drop')`);
    await a.start();
    try {
      await until(() => listening() && proxy.listeners() === 1);
      notify();
      await until(() => hooks.length === 1);
      proxy.dropListeners(); // from now on nothing passes either way on the listener's connection, and nothing closes it
      await until(() => proxy.listeners() === 2 && listening());
      await until(() => hooks.length === 2); // the catch-up fetch: a push announced meanwhile would be lost
      notify();
      await until(() => hooks.length === 3);
    } finally {
      await a.stop();
      proxy.close();
    }
  }, 40_000);

  it('a database that stops answering (a partition, a frozen server) is reported within the renew deadline: readiness, /status, the metric', async () => {
    // The lease's queries waited for the pool's 60 s query timeout: for a minute the replica (stepped down at its renew
    // deadline) still said the database was up, /readyz 200, govops_state_database_up 1, no tick ran meanwhile.
    const proxy = await silentDropProxy(pg.port);
    const url = pg.url.replace(`:${pg.port}/`, `:${proxy.port}/`);
    const registry = new Registry();
    const a = new LeaderElector({
      statePath: withStateKey(url, 'hangs'),
      identity: 'a',
      lease: { durationMs: 4_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 },
      logger: silentLogger(),
      registry,
      onElected: () => undefined,
      onHook: () => undefined,
    });
    await a.start();
    try {
      expect(a.status().role).toBe('leader');
      proxy.dropAll();
      const t0 = Date.now();
      // the database reported down and the replica stepped down: two timers of their own (the query's watchdog, the
      // renew deadline), which a busy machine may fire a moment apart, so both are waited for
      await until(() => !a.databaseUp && a.status().role === 'standby', 20_000);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(a.readinessProblem()?.reason).toMatch(/unreachable/);
      expect(a.status()).toMatchObject({ role: 'standby', database: { up: false } });
      expect(await registry.getSingleMetricAsString('govops_state_database_up')).toMatch(/govops_state_database_up 0/);
    } finally {
      await a.stop({ withinMs: 500 });
      proxy.close();
    }
  }, 40_000);

  it('a standby whose database stops answering reports it within the renew deadline (on the injected clock), as the leader does', async () => {
    // A standby's lease request (the takeover) waited for the pool's 60 s query timeout: for a minute its /readyz and
    // /status said the database was up, govops_state_database_up 1, while every one of its queries hung.
    const key = 'standby-hangs';
    const direct = pgStateFor(withStateKey(pg.url, key));
    await direct.ready();
    expect(await tryAcquireLease(direct, 'leader', 600_000)).toMatchObject({ holder: 'leader' });
    const proxy = await silentDropProxy(pg.port);
    const clock = new ManualClock();
    const registry = new Registry();
    const lease = { durationMs: 60_000, renewDeadlineMs: 10_000, retryPeriodMs: 5_000 };
    const b = new LeaderElector({
      statePath: withStateKey(pg.url.replace(`:${pg.port}/`, `:${proxy.port}/`), key),
      identity: 'b',
      lease,
      logger: silentLogger(),
      registry,
      onElected: () => undefined,
      onHook: () => undefined,
      clock,
    });
    const tick = () => (b as unknown as { tick(): Promise<void> }).tick();
    await b.start();
    try {
      expect(b.status()).toMatchObject({ role: 'standby', leader: { identity: 'leader' }, database: { up: true } });
      proxy.dropAll();
      void tick(); // its takeover request gets no answer
      clock.advance(lease.renewDeadlineMs - 1);
      expect(b.databaseUp).toBe(true);
      clock.advance(1);
      expect(b.databaseUp).toBe(false);
      const since = new Date(clock.now()).toISOString();
      expect(b.status()).toMatchObject({ role: 'standby', database: { up: false, since, error: expect.stringMatching(/no answer within 10s/) } });
      expect(b.readinessProblem()?.reason).toBe(`the PostgreSQL state is unreachable since ${since}`);
      expect(await registry.getSingleMetricAsString('govops_state_database_up')).toMatch(/govops_state_database_up 0/);
    } finally {
      await b.stop({ withinMs: 500 });
      proxy.close();
    }
  }, 40_000);
});

async function until(ok: () => boolean, withinMs = 25_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TCP proxy to PostgreSQL that can drop the push listener's connections silently (as a NAT that forgets them). */
async function silentDropProxy(port: number): Promise<{ port: number; listeners(): number; dropListeners(): void; dropAll(): void; close(): void }> {
  const sockets = new Set<net.Socket>();
  const listeners: { dropped: boolean }[] = [];
  const all: { dropped: boolean }[] = [];
  let blackhole = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    const conn = { dropped: blackhole, listener: false };
    all.push(conn);
    client.on('data', (chunk) => {
      if (!conn.listener && chunk.includes('govops-listen')) {
        conn.listener = true;
        listeners.push(conn);
      }
      if (!conn.dropped) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!conn.dropped) client.write(chunk);
    });
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      a.on('error', () => undefined);
      a.on('close', () => {
        if (!conn.dropped) b.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    listeners: () => listeners.length,
    dropListeners: () => listeners.forEach((c) => (c.dropped = true)),
    /** Nothing passes any more, on any connection, old or new (a partition, a frozen server): none is closed. */
    dropAll: () => {
      blackhole = true;
      all.forEach((c) => (c.dropped = true));
    },
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}
