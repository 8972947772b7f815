/**
 * A PostgreSQL connection cut while a query runs (the database restarted, a proxy, a reset) fails that query with a
 * state error; it does not crash the process. pg emits `error` on the client then, and the pool stops listening to a
 * client it has handed out: with no listener of govops' own, that event was an uncaught exception (the daemon's
 * resyncs, plans, delivery-health polls and migrations all check clients out). A minimal server speaking the start of
 * PostgreSQL's protocol: it lets the client in, then closes the connection at its first query.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { closePgPools, pgStateFor, QUERY_TIMEOUT_MS } from '../../src/state/pg/backend.js';

let server: net.Server | undefined;
afterEach(async () => {
  await closePgPools();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** AuthenticationOk then ReadyForQuery after the startup message; the connection closed at the first query. */
async function cutAtFirstQuery(): Promise<{ port: number; queries: () => number }> {
  let queries = 0;
  server = net.createServer((socket) => {
    let started = false;
    socket.on('error', () => undefined);
    socket.on('data', (data) => {
      if (!started) {
        started = true;
        const auth = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]); // 'R', length 8, AuthenticationOk
        const ready = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]); // 'Z', length 5, idle
        socket.write(Buffer.concat([auth, ready]));
        return;
      }
      if (data.length > 0 && (data[0] === 0x51 || data[0] === 0x50)) {
        queries++;
        socket.destroy(); // a simple query (Q) or a parse (P): cut
      }
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { port: (server!.address() as net.AddressInfo).port, queries: () => queries };
}

describe('PostgreSQL state: a connection cut during a query', () => {
  it('fails the query with a state error instead of crashing the process', async () => {
    const { port, queries } = await cutAtFirstQuery();
    const state = pgStateFor(`postgres://govops:pw@127.0.0.1:${port}/govops#cut`);
    const err = await state.load().catch((e: unknown) => e);
    expect(queries()).toBeGreaterThan(0);
    expect(err).toMatchObject({ code: ErrorCode.stateUnavailable });
  });

  it('a query that gets no answer fails after QUERY_TIMEOUT_MS, and connections are kept alive (a half-open one is found)', () => {
    const pool = pgStateFor('postgres://govops:pw@127.0.0.1:1/govops#opts').pool as unknown as { options: Record<string, unknown> };
    expect(pool.options).toMatchObject({ query_timeout: QUERY_TIMEOUT_MS, keepAlive: true });
    expect(QUERY_TIMEOUT_MS).toBeLessThanOrEqual(60_000);
  });
});
