/**
 * The PostgreSQL state under real faults (one server for the file): the lock's session ended by the server
 * (pg_terminate_backend) or the server restarted while a writer holds the lock; a failover to a read-only node;
 * `state migrate` file -> PostgreSQL -> file keeping every field.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pgDriver from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { acquireStateLock } from '../../src/state/lock.js';
import { PgState, pgStateFor } from '../../src/state/pg/backend.js';
import { withStateKey } from '../../src/state/location.js';
import { loadState, newState, saveState } from '../../src/state/store.js';
import type { ManagedResource } from '../../src/state/types.js';
import { runGovops } from '../helpers/cli.js';
import { ManualClock } from '../helpers/clock.js';
import { postgresPerFile, psql } from '../helpers/postgres.js';
import { rewritingProxy } from '../helpers/rewriting-proxy.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { objectStore } from '../../bench/flaky-drill.mjs';
import { Cleanup, getJson, spawnRun, until } from '../daemon/helpers.js';

const pg = postgresPerFile();
const at = (key: string): string => withStateKey(pg.url, key);

function res(name: string, extra: Partial<ManagedResource> = {}): ManagedResource {
  return { kind: 'Integration', name, id: `id-${name}`, origin: 'created', specHash: 'h', secretFingerprints: {}, updatedAt: new Date(0).toISOString(), ...extra };
}

/** End the session holding the advisory lock of `key` (as an operator or a new leader would). */
function killLockSession(key: string): string {
  return psql(pg, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = (hashtext('${key}')::bigint & 4294967295)::oid AND objsubid = 2`);
}

describe('PostgreSQL state under faults', () => {
  it('the lock session ended: the holder\'s writes fail (never land unlocked), another writer takes over, the holder can lock again', async () => {
    const loc = at('killed');
    await saveState(loc, { ...newState(), resources: [res('a')] });
    const lock = await acquireStateLock(loc);
    expect(killLockSession('killed')).toBe('t');
    await new Promise((r) => setTimeout(r, 100));
    // another process (another PgState) takes the lock now
    const other = new PgState(loc);
    const otherLock = await other.acquireLock({ waitMs: 5_000 });
    await other.save({ ...(await other.load()), resources: [res('a'), res('from-other')] });
    const err = await saveState(loc, { ...newState(), resources: [res('stale')] }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe(ErrorCode.stateUnavailable);
    expect((await other.load()).resources.map((r) => r.name)).toEqual(['a', 'from-other']);
    await lock.release();
    await otherLock.release();
    const again = await acquireStateLock(loc);
    await saveState(loc, { ...newState(), resources: [res('b')] });
    await again.release();
    expect((await loadState(loc)).resources.map((r) => r.name)).toEqual(['b']);
  }, 30_000);

  it('the server restarted while a writer holds the lock: its write fails; the next lock and write work', async () => {
    const loc = at('restart');
    await saveState(loc, { ...newState(), resources: [res('a')] });
    const lock = await acquireStateLock(loc);
    pg.stop();
    pg.start();
    const err = await saveState(loc, { ...newState(), resources: [res('x')] }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe(ErrorCode.stateUnavailable);
    await lock.release();
    const again = await acquireStateLock(loc);
    await saveState(loc, { ...newState(), resources: [res('b')] });
    await again.release();
    expect((await loadState(loc)).resources.map((r) => r.name)).toEqual(['b']);
  }, 60_000);

  it('a failover to a read-only server (25006) is GOVOPS_STATE_UNAVAILABLE (transient), and once the primary is back the next write works', async () => {
    // A managed failover leaves the state URL on a node that answers read-only until it moves: the write was
    // GOVOPS_STATE_REFUSED (terminal: "check the state URL (user, password, database)", the daemon waited for the resync),
    // and the read-only session went back to the pool, where the next write met it again.
    const loc = at('ro');
    await saveState(loc, { ...newState(), resources: [res('a')] });
    psql(pg, `ALTER DATABASE govops SET default_transaction_read_only = on`, 'postgres');
    psql(pg, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'govops'`, 'postgres');
    await new Promise((r) => setTimeout(r, 100));
    try {
      const err = await saveState(loc, { ...newState(), resources: [res('b')] }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: ErrorCode.stateUnavailable, failureClass: 'transient' });
    } finally {
      psql(pg, `ALTER DATABASE govops RESET default_transaction_read_only`, 'postgres');
    }
    await saveState(loc, { ...newState(), resources: [res('b')] });
    expect((await loadState(loc)).resources.map((r) => r.name)).toEqual(['b']);
  }, 30_000);
});


describe('an apply whose lock session is ended', () => {
  it('sends no write to the service once its lock is gone: the next PUT is refused unsent, with a typed error saying how to recover', async () => {
    // The apply went on sending PUTs (while the first one's integration settled, the next ones' dry runs and PUTs went
    // out) until its next state write failed: meanwhile another writer could hold the lock and write too.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-lostlock-'));
    const sandbox = await startSandbox({ port: 0, transitionMs: 3_000 });
    let killed = false;
    const proxy = await rewritingProxy(sandbox.url, (req, res) => {
      if (!killed && req.method === 'PUT' && !req.url.includes('dryRun=true')) {
        killed = true;
        expect(killLockSession('lostlock')).toBe('t');
        // the session is gone (the server sent the client its FATAL) before this PUT is answered
        const deadline = Date.now() + 10_000;
        while (psql(pg, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = (hashtext('lostlock')::bigint & 4294967295)::oid AND objsubid = 2`) !== '0') {
          if (Date.now() > deadline) throw new Error('the lock session did not end');
        }
      }
      return res;
    });
    try {
      mkdirSync(path.join(dir, 'm'));
      const write = (suffix: string): void => {
        for (const n of ['lake-a', 'lake-b', 'lake-c']) writeFileSync(path.join(dir, 'm', `${n}.yaml`), objectStore(n).replace(`role/${n}`, `role/${n}-${suffix}`));
      };
      write('v1');
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url };
      const first = await runGovops(['apply', 'm', '--state-key', 'lostlock'], { cwd: dir, env, timeoutMs: 60_000 });
      expect(first.code, first.stderr).toBe(0);
      write('v2'); // three updates (PUT)
      const r = await runGovops(['apply', 'm', '--state-key', 'lostlock', '--concurrency', '1', '-o', 'json'], { cwd: dir, env: { ...env, GOVOPS_URL: proxy.url }, timeoutMs: 60_000 });
      const puts = proxy.requests.filter((x) => x.startsWith('PUT ') && !x.includes('dryRun=true'));
      expect(killed, `${JSON.stringify(proxy.requests)}\n${r.stdout}\n${r.stderr}`).toBe(true);
      expect(puts).toHaveLength(1);
      expect(r.code).toBe(1);
      const outcomes = (JSON.parse(r.stdout) as { outcomes: { name: string; code?: string; error?: string }[] }).outcomes;
      const refused = outcomes.filter((o) => o.code === ErrorCode.stateFenced);
      expect(refused.length, r.stdout).toBeGreaterThan(0);
      for (const o of refused) {
        expect(o.error).toMatch(/^PUT \/integrations\/\d+ not sent: the lock of the PostgreSQL state \(postgres 127\.0\.0\.1:\d+\/govops key lostlock\) was lost \(its session ended: terminating connection due to administrator command\)/);
        expect(o.error).toContain('run the apply again');
      }
    } finally {
      await proxy.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('apply --timeout and a database that hangs', () => {
  it('the whole apply, its state queries included, ends by --timeout: typed and transient, exit 1, nothing sent or half-written', async () => {
    // The state's queries were bound only by the driver's 60 s query timeout: an apply with --timeout 4s whose intent
    // save waited on a lock in the database ran a minute (up to 60 s per query), the --timeout notwithstanding.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-pgtimeout-'));
    const sandbox = await startSandbox({ port: 0 });
    const blocker = new pgDriver.Client({ connectionString: pg.url });
    try {
      mkdirSync(path.join(dir, 'm'));
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url };
      writeFileSync(path.join(dir, 'm', 'lake-a.yaml'), objectStore('lake-a'));
      const first = await runGovops(['apply', 'm', '--state-key', 'hung'], { cwd: dir, env });
      expect(first.code, first.stderr).toBe(0);
      const rows = () => psql(pg, `SELECT string_agg(name || ':' || (body->>'id') || ':' || coalesce(body->>'pending', ''), ',' ORDER BY name) FROM govops.resources WHERE key = 'hung'`);
      const before = rows();
      writeFileSync(path.join(dir, 'm', 'lake-b.yaml'), objectStore('lake-b')); // a create: its intent is saved first
      // the database hangs for govops' writes: a session holds a lock every write of the resources waits for
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE govops.resources IN SHARE MODE');
      const t0 = performance.now();
      const r = await runGovops(['apply', 'm', '--state-key', 'hung', '--timeout', '4s', '-o', 'json'], { cwd: dir, env, timeoutMs: 120_000 });
      const took = performance.now() - t0;
      expect(r.code, r.stderr).toBe(1);
      expect(took).toBeLessThan(25_000); // the process started, planned, waited 4 s and ended (it was 60 s and more)
      const out = JSON.parse(r.stdout) as { failure?: { code: string; failureClass: string }; outcomes: { code?: string; error?: string }[] };
      expect(out.failure).toMatchObject({ failureClass: 'transient' });
      expect([ErrorCode.stateUnavailable, ErrorCode.settleTimeout]).toContain(out.failure!.code);
      expect(out.outcomes.map((o) => o.error).join('\n')).toMatch(/--timeout/);
      // nothing was sent (the intent was not saved), and once the database answers again nothing was half-written
      const creates = () => sandbox.requests().filter((q) => q.method === 'POST' && q.path === '/integrations' && q.query.dryRun !== 'true');
      expect(creates()).toHaveLength(1); // lake-a's, by the first apply
      await blocker.query('COMMIT');
      const deadline = Date.now() + 20_000;
      while (psql(pg, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = (hashtext('hung')::bigint & 4294967295)::oid AND objsubid = 2`) !== '0') {
        if (Date.now() > deadline) throw new Error('the lock of the apply that timed out is still held');
        await new Promise((ok) => setTimeout(ok, 50));
      }
      expect(rows()).toBe(before);
      const again = await runGovops(['apply', 'm', '--state-key', 'hung'], { cwd: dir, env });
      expect(again.code, again.stderr).toBe(0);
    } finally {
      await blocker.end().catch(() => undefined);
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('apply --timeout and a connection that does not open', () => {
  it("a connection still being opened at the deadline is ended then, not at the pool's connect timeout", async () => {
    // At the deadline the apply failed, but the connection the pool was opening (a server that accepts and never
    // answers) was let go only at the pool's connect timeout (5 s): the process lingered that long past --timeout.
    const accepted: net.Socket[] = [];
    const closed: Promise<void>[] = [];
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.resume(); // reads what the client sends (its end too), answers nothing
      closed.push(new Promise((ok) => socket.on('close', () => ok())));
      accepted.push(socket);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const state = new PgState(withStateKey(`postgres://govops:pw-connect-hangs-q9z@127.0.0.1:${port}/govops`, 'connect-hangs'));
      // stands for the pool's 5 s: nothing in this test waits for it
      (state.pool.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis = 600_000;
      const clock = new ManualClock();
      const taking = state.acquireLock({ deadline: { clock, at: clock.monotonic() + 4_000, timeoutMs: 4_000 } }).catch((e: unknown) => e);
      await until(() => accepted.length === 1, 15_000, 'the connection reached the server');
      clock.advance(4_000);
      const err = await taking;
      expect(err).toMatchObject({ code: ErrorCode.stateUnavailable });
      // a connect cut is told as one: no query ran, so none was "given up" nor "rolled back"
      expect((err as Error).message).toMatch(/no connection to the PostgreSQL state .* was open within the apply's --timeout \(4/);
      expect((err as Error).message).not.toMatch(/rolled back/);
      const ended = await Promise.race([closed[0]!.then(() => 'ended'), new Promise((ok) => setTimeout(() => ok('still open'), 10_000))]);
      expect(ended).toBe('ended');
    } finally {
      for (const s of accepted) s.destroy();
      server.close();
    }
  }, 30_000);

  it('the same for a connection opened for the lock once the schema is ready (the pool has none idle)', async () => {
    // The first connection goes to the server (the schema, then the first lock); every later one hangs unanswered.
    const hung: net.Socket[] = [];
    const closed: Promise<void>[] = [];
    const piped: net.Socket[] = [];
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      if (piped.length === 0) {
        const upstream = net.connect(pg.port, '127.0.0.1');
        upstream.on('error', () => undefined);
        piped.push(socket, upstream);
        socket.pipe(upstream).pipe(socket);
        return;
      }
      socket.resume();
      closed.push(new Promise((ok) => socket.on('close', () => ok())));
      hung.push(socket);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const url = pg.url.replace(`:${pg.port}/`, `:${port}/`);
      const first = new PgState(withStateKey(url, 'connect-hangs-1'));
      (first.pool.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis = 600_000;
      const held = await first.acquireLock(); // the pool's one connection, held
      const clock = new ManualClock();
      const second = new PgState(withStateKey(url, 'connect-hangs-2'));
      const taking = second.acquireLock({ deadline: { clock, at: clock.monotonic() + 4_000, timeoutMs: 4_000 } }).catch((e: unknown) => e);
      await until(() => hung.length === 1, 15_000, 'the second connection reached the server');
      clock.advance(4_000);
      const err = await taking;
      expect(err).toMatchObject({ code: ErrorCode.stateUnavailable });
      expect((err as Error).message).toMatch(/no connection to the PostgreSQL state .* was open within/);
      const ended = await Promise.race([closed[0]!.then(() => 'ended'), new Promise((ok) => setTimeout(() => ok('still open'), 10_000))]);
      expect(ended).toBe('ended');
      await held.release();
    } finally {
      for (const s of [...hung, ...piped]) s.destroy();
      server.close();
    }
  }, 30_000);
});

describe('a database that stops answering', () => {
  it('while a writer holds the lock: its write fails after one query timeout, and the lock is let go at once', async () => {
    // The lock's release after a write that got no answer was queued behind it on the lock's connection: it waited a
    // query timeout (60 s) of its own, so a writer whose database froze held on twice as long.
    const proxy = await blackholeProxy(pg.port);
    try {
      const loc = withStateKey(pg.url.replace(`:${pg.port}/`, `:${proxy.port}/`), 'hang');
      const timeoutMs = 1_500; // stands for QUERY_TIMEOUT_MS (60 s)
      (pgStateFor(loc).pool.options as { query_timeout?: number }).query_timeout = timeoutMs;
      await saveState(loc, { ...newState(), resources: [res('a')] });
      const lock = await acquireStateLock(loc);
      proxy.dropAll();
      const t0 = performance.now();
      const err = await saveState(loc, { ...newState(), resources: [res('b')] }).catch((e: unknown) => e);
      const failedAfter = performance.now() - t0;
      expect(err).toMatchObject({ code: ErrorCode.stateUnavailable });
      expect(failedAfter).toBeLessThan(2 * timeoutMs);
      const t1 = performance.now();
      await lock.release();
      expect(performance.now() - t1).toBeLessThan(timeoutMs);
    } finally {
      proxy.close();
    }
    expect((await loadState(at('hang'))).resources.map((r) => r.name)).toEqual(['a']);
  }, 30_000);
});

/** A TCP proxy to PostgreSQL that can stop passing anything, on every connection, without closing one (a partition). */
async function blackholeProxy(port: number): Promise<{ port: number; dropAll(): void; close(): void }> {
  const sockets = new Set<net.Socket>();
  let dropped = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => void (dropped || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (dropped || client.write(chunk)));
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      a.on('error', () => undefined);
      a.on('close', () => {
        if (!dropped) b.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    dropAll: () => {
      dropped = true;
    },
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

describe('state migrate keeps every field', () => {
  it('file -> PostgreSQL -> file: keyed webhook identities, pending intents, copies, preexisting, suspended, unknown fields', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-migf-'));
    try {
      const file = path.join(dir, 'state.json');
      const s = newState();
      const mac = 'a'.repeat(64);
      const state = {
        ...s,
        transitions: { 't/create': [[1, 2]] },
        futureField: { nested: [1, 'x'] },
        resources: [
          res('i1', { identity: '["sql_analytics","host:5432/db"]', revision: 'abc', suspended: true, type: 'sql_analytics', autoBootstrap: true }),
          res('i2', { pending: 'create', id: '', key: 'nk' }),
          { ...res('w1'), kind: 'Webhook' as const, identity: JSON.stringify(['w1', { urlHmac: mac }]), copies: ['7', '8'] },
          { ...res('w2'), kind: 'Webhook' as const, id: '', pending: 'create' as const, key: 'w2', identity: JSON.stringify(['w2', { urlHmac: 'b'.repeat(64) }]), preexisting: ['3'] },
          { ...res('d1'), kind: 'DataSource' as const, pending: 'delete' as const, explicitAdopt: true },
        ],
      };
      writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
      const up = await runGovops(['state', 'migrate', '--state', file, '--to', pg.url, '--to-key', 'migf', '-o', 'json']);
      expect(up.stderr).toBe('');
      const down = path.join(dir, 'down.json');
      const back = await runGovops(['state', 'migrate', '--state', at('migf'), '--to', down]);
      expect(back.stderr).toBe('');
      const sort = (x: { resources: { name: string }[] }) => ({ ...x, resources: [...x.resources].sort((a, b) => (a.name < b.name ? -1 : 1)) });
      expect(sort(JSON.parse(readFileSync(down, 'utf8')))).toEqual(sort(JSON.parse(readFileSync(file, 'utf8'))));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a daemon whose lock session is ended during a reconcile', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  it('sends no write once the lock is gone (the lease alone did not stop it), then recovers by itself', async () => {
    // The daemon's writes were gated by its lease only: with the lock's session ended (an operator's
    // pg_terminate_backend, a failover), another writer (a CI apply) could take the lock while the leader, still
    // holding the lease, went on sending PUTs until its next state write failed.
    const home = await cleanup.tmp('govops-daemon-lostlock-');
    const sandbox = await startSandbox({ port: 0, transitionMs: 1_000 });
    cleanup.add(() => sandbox.close());
    let killedAt: number | undefined;
    let armed = false;
    const proxy = await rewritingProxy(sandbox.url, (req, res) => {
      if (armed && killedAt === undefined && req.method === 'PUT' && !req.url.includes('dryRun=true')) {
        killedAt = proxy.requests.length;
        expect(killLockSession('daemonlock')).toBe('t');
        const deadline = Date.now() + 10_000;
        while (psql(pg, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = (hashtext('daemonlock')::bigint & 4294967295)::oid AND objsubid = 2`) !== '0') {
          if (Date.now() > deadline) throw new Error('the lock session did not end');
        }
      }
      return res;
    });
    cleanup.add(() => proxy.close());
    mkdirSync(path.join(home, 'm'));
    const write = (suffix: string): void => {
      for (const n of ['lake-a', 'lake-b', 'lake-c']) writeFileSync(path.join(home, 'm', `${n}.yaml`), objectStore(n).replace(`role/${n}`, `role/${n}-${suffix}`));
    };
    write('v1');
    const d = spawnRun(
      cleanup,
      ['--dir', 'm', '--workdir', path.join(home, 'work'), '--listen', '127.0.0.1:0', '--state-key', 'daemonlock', '--resync', '10m', '--concurrency', '1', '--grace', '2s'],
      { cwd: home, env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url } },
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    const lastResult = async (): Promise<string | undefined> => ((await getJson(`${url}/status`)).body as { lastReconcile?: { result?: string } }).lastReconcile?.result;
    await until(async () => (await lastResult()) === 'applied', 60_000, 'the first apply');
    armed = true;
    write('v2'); // three updates (PUT)
    await until(() => killedAt !== undefined, 60_000, 'the first PUT of the update');
    // refused unsent, with the typed error, while the lease still holds
    await until(() => /PUT \/integrations\/\d+ not sent: the lock of the PostgreSQL state \([^)]*key daemonlock\) was lost/.test(d.out()), 30_000, 'a write refused for the lost lock');
    // and the daemon finishes the revision by itself (a new lock, a new session)
    await until(async () => {
      const live = (await (await fetch(`${sandbox.url}/integrations`, { headers: { authorization: sandbox.adminToken } })).json()) as { config: { cloudLocationRole?: string } }[];
      return live.filter((i) => /-v2$/.test(i.config.cloudLocationRole ?? '')).length === 3;
    }, 60_000, 'the three updates applied after the retry');
  }, 180_000);
});
