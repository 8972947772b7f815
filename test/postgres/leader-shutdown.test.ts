/**
 * SIGTERM's `--grace` bounds the whole shutdown, the leader's last words to the database included: with the
 * database unreachable in a way that answers nothing (a partition: packets dropped, no reset), releasing the lease
 * and ending the LISTEN connection waited for TCP to give up (minutes), past the orchestrator's kill timer.
 * A proxy in front of a real PostgreSQL server freezes to play the partition.
 */
import net from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { LeaderElector } from '../../src/daemon/leader.js';
import { closePgPools } from '../../src/state/pg/backend.js';
import { withStateKey } from '../../src/state/location.js';
import { postgresPerFile } from '../helpers/postgres.js';

const pg = postgresPerFile();

/** A TCP proxy to `port` that, once frozen, forwards nothing and closes nothing (a partition). */
async function freezableProxy(port: number): Promise<{ port: number; freeze(): void; close(): void }> {
  let frozen = false;
  const sockets: net.Socket[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    sockets.push(client, upstream);
    const forward = (from: net.Socket, to: net.Socket): void => {
      from.on('data', (d) => {
        if (!frozen) to.write(d);
      });
      from.on('end', () => {
        if (!frozen) to.end();
      });
      from.on('error', () => undefined);
    };
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => {
      frozen = true;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe('a leader stopping while the database answers nothing', () => {
  it('stops within the time it is given, the lease left to expire', async () => {
    const proxy = await freezableProxy(pg.port);
    const url = pg.url.replace(`127.0.0.1:${pg.port}`, `127.0.0.1:${proxy.port}`);
    const elected: string[] = [];
    const elector = new LeaderElector({
      statePath: withStateKey(url, 'shutdown'),
      identity: 'a',
      lease: { durationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 20_000 },
      logger: silentLogger(),
      registry: new Registry(),
      onElected: () => elected.push('a'),
      onHook: () => undefined,
    });
    try {
      await elector.start();
      expect(elected).toEqual(['a']);
      proxy.freeze();
      const t0 = Date.now();
      const outcome = await Promise.race([
        elector.stop({ release: true, withinMs: 300 }).then(() => 'stopped'),
        new Promise((r) => setTimeout(() => r('still waiting'), 8_000)),
      ]);
      expect(outcome).toBe('stopped');
      expect(Date.now() - t0).toBeLessThan(5_000);
    } finally {
      proxy.close();
      await closePgPools();
    }
  }, 30_000);
});

describe('a leader stopping normally (SIGTERM)', () => {
  const elector = (statePath: string, log: Array<{ level: number; msg: string }>): LeaderElector =>
    new LeaderElector({
      statePath,
      identity: 'a',
      lease: { durationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 20_000 },
      logger: pino({ level: 'debug' }, { write: (s: string) => void log.push(JSON.parse(s) as { level: number; msg: string }) }),
      registry: new Registry(),
      onElected: () => undefined,
      onHook: () => undefined,
    });

  it('logs its stepping down and the lease released at info, not warn: nothing went wrong', async () => {
    const log: Array<{ level: number; msg: string }> = [];
    const a = elector(withStateKey(pg.url, 'graceful'), log);
    try {
      await a.start();
      expect(a.isLeading()).toBe(true);
      await a.stop({ release: true, withinMs: 5_000 });
      const after = log.slice(log.findIndex((l) => /elected leader/.test(l.msg)) + 1);
      expect(after.filter((l) => l.level >= 40)).toEqual([]);
      expect(after.some((l) => l.level === 30 && /lease released/.test(l.msg))).toBe(true);
    } finally {
      await closePgPools();
    }
  }, 30_000);

  it('warns when the release failed (the lease is left to expire: the next leader waits for it)', async () => {
    const proxy = await freezableProxy(pg.port);
    const url = pg.url.replace(`127.0.0.1:${pg.port}`, `127.0.0.1:${proxy.port}`);
    const log: Array<{ level: number; msg: string }> = [];
    const a = elector(withStateKey(url, 'release-fails'), log);
    try {
      await a.start();
      expect(a.isLeading()).toBe(true);
      proxy.close(); // the database connection is gone: the release fails at once
      await a.stop({ release: true, withinMs: 5_000 });
      const warned = log.filter((l) => l.level === 40).map((l) => l.msg);
      expect(warned.some((m) => /could not release the lease/.test(m))).toBe(true);
      expect(log.some((l) => /lease released/.test(l.msg))).toBe(false);
    } finally {
      proxy.close();
      await closePgPools();
    }
  }, 30_000);
});
