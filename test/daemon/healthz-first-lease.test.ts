/**
 * /healthz answers from the start of `govops run`, also while the first lease request of a PostgreSQL state waits
 * for an answer: a database that accepts the session and then answers nothing (a pooler waiting for a server that is
 * down, a lock on the lease row) holds that request up to the driver's query timeout (60 s), which is the whole
 * budget of the Kubernetes examples' startup probe (30 × 2 s): the pod was restarted before it ever served /healthz,
 * again at every start while the database stayed so (docs/deploy.md: "/healthz is 200 on every replica").
 * And a SIGTERM meanwhile (a rollout, a scale-down) ends the process with 0 within --grace, not after that minute (past
 * the pod's terminationGracePeriodSeconds: killed).
 */
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceApi } from '../../src/api/client-types.js';
import { silentLogger } from '../../src/log.js';
import { startRunning, type RunningDaemon } from '../../src/daemon/run.js';
import { closePgPools } from '../../src/state/pg/backend.js';
import { Cleanup, closedPort, runSettings, spawnRun, until } from './helpers.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/**
 * A PostgreSQL server that completes the start-up of every session (AuthenticationOk, ReadyForQuery) and then never
 * answers a query, until `release()` ends its sessions.
 */
async function silentDatabase(): Promise<{ port: number; queries: () => number; release: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let queries = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    let started = false;
    socket.on('data', (chunk) => {
      if (started) {
        queries++;
        return;
      }
      started = true; // the startup message (no TLS asked: the URL has no sslmode)
      socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0])); // 'R' AuthenticationOk
      socket.write(Buffer.from([0x5a, 0, 0, 0, 5, 0x49])); // 'Z' ReadyForQuery, idle
      void chunk;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    port,
    queries: () => queries,
    release: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('govops run with a PostgreSQL state that does not answer the first lease request', () => {
  it('serves /healthz 200 (and /readyz 503) while that request waits', async () => {
    const home = await cleanup.tmp('govops-healthz-lease-');
    await mkdir(join(home, 'm'), { recursive: true });
    await writeFile(join(home, 'm', 'empty.yaml'), '');
    const db = await silentDatabase();
    cleanup.add(() => db.release());
    cleanup.add(() => closePgPools());
    const port = await closedPort();
    const api = { close: async () => undefined } as unknown as ServiceApi;
    const settings = runSettings(home, {
      dir: join(home, 'm'),
      intervalMs: 600_000,
      resyncMs: 600_000,
      listen: { host: '127.0.0.1', port },
      statePath: `postgres://govops@127.0.0.1:${db.port}/govops`,
    });
    const starting = startRunning(settings, silentLogger(), () => api, () => Promise.reject(new Error('not used')));
    let running: RunningDaemon | undefined;
    cleanup.add(async () => {
      await db.release();
      running ??= await starting.catch(() => undefined);
      await running?.shutdown(0);
    });
    // the first lease request (or the schema check before it) is on its way, and gets no answer
    await until(() => db.queries() > 0, 10_000, 'a query sent to the database');
    const health = await until(
      () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status),
      10_000,
      '/healthz answers while the first lease request waits',
    );
    expect(health).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
  });
});

describe('SIGTERM while the first lease request gets no answer', () => {
  it('exits 0 within --grace, not when the request times out (60 s)', async () => {
    const home = await cleanup.tmp('govops-term-lease-');
    await mkdir(join(home, 'm'), { recursive: true });
    await writeFile(join(home, 'm', 'empty.yaml'), '');
    const db = await silentDatabase();
    cleanup.add(() => db.release());
    const d = spawnRun(cleanup, ['--dir', join(home, 'm'), '--listen', '127.0.0.1:0', '--grace', '5s'], {
      cwd: home,
      env: { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 't', GOVOPS_STATE_URL: `postgres://govops@127.0.0.1:${db.port}/govops` },
      stopSignal: 'SIGKILL',
    });
    await until(() => db.queries() > 0, 20_000, 'a query sent to the database');
    d.child.kill('SIGTERM');
    // 5 s of grace, 2 s for the logs at most; the request's own timeout is 60 s
    const code = await Promise.race([d.exit, new Promise<string>((r) => setTimeout(() => r('still running'), 25_000).unref())]);
    expect(code, d.out()).toBe(0);
    expect(d.out()).toMatch(/govops run stopped during start-up/);
  }, 40_000);
});
