/**
 * A real PostgreSQL server for the tests: Debian's binaries (/usr/lib/postgresql/<n>/bin, or on PATH),
 * a fresh cluster in a temporary folder, on a free port of 127.0.0.1, with a password (scram). As root the
 * server runs as the `postgres` user (PostgreSQL refuses root), in a folder that user owns. Nothing is
 * skipped: when no server can be started, `startPostgres` throws with the reason (CI installs the
 * `postgresql` package when the binaries are missing: .ci/run).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { closePgPools } from '../../src/state/pg/backend.js';

export interface PgServer {
  /** postgres://govops:PASSWORD@127.0.0.1:PORT/govops */
  url: string;
  password: string;
  port: number;
  dir: string;
  stop(): void;
  start(): void;
  /** Stop for good and remove the folder. */
  destroy(): void;
}

function binDir(): string {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions.length) return path.join(base, versions[0]!, 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return path.dirname(which.stdout.trim());
  throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) found: install the Debian package `postgresql` (.ci/run does it in CI)');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<PgServer> {
  const bin = binDir();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-pg-'));
  chmodSync(dir, 0o700);
  const asPg = (cmd: string, args: string[]): void => {
    const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    execFileSync(file, argv as string[], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  };
  if (root) execFileSync('chown', ['postgres:', dir]);
  const password = `pw-${Math.random().toString(36).slice(2)}-secret`;
  const pwfile = path.join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (root) execFileSync('chown', ['postgres:', pwfile]);
  const data = path.join(dir, 'data');
  try {
    asPg('initdb', ['-D', data, '-U', 'govops', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--no-sync']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(err as { stderr?: Buffer }).stderr?.toString() ?? String(err)}`, { cause: err });
  }
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off -c max_connections=60`;
  const start = (): void => asPg('pg_ctl', ['-D', data, '-o', opts, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
  const stop = (): void => {
    try {
      asPg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
  };
  try {
    start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${(err as { stderr?: Buffer }).stderr?.toString() ?? String(err)}`, { cause: err });
  }
  execFileSync(path.join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'govops', '-d', 'postgres', '-c', 'CREATE DATABASE govops'], {
    env: { ...process.env, PGPASSWORD: password },
    stdio: 'pipe',
  });
  return {
    url: `postgres://govops:${encodeURIComponent(password)}@127.0.0.1:${port}/govops`,
    password,
    port,
    dir,
    stop,
    start,
    destroy() {
      stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Run SQL with psql (for assertions that read the database directly), in `database` (default govops). */
export function psql(server: PgServer, sql: string, database = 'govops'): string {
  const bin = binDir();
  return execFileSync(path.join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(server.port), '-U', 'govops', '-d', database, '-At', '-c', sql], {
    env: { ...process.env, PGPASSWORD: server.password },
    encoding: 'utf8',
  }).trim();
}

/**
 * One server for the test file: started before its tests, the state's pools closed and the server destroyed after
 * them. The returned value reads the running server (use it inside tests and hooks, not at the file's top level).
 */
export function postgresPerFile(): PgServer {
  let server: PgServer | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await closePgPools();
    server?.destroy();
  });
  const running = (): PgServer => {
    if (!server) throw new Error('the PostgreSQL server of this file is not started (used outside a test?)');
    return server;
  };
  return {
    get url() { return running().url; },
    get password() { return running().password; },
    get port() { return running().port; },
    get dir() { return running().dir; },
    stop: () => running().stop(),
    start: () => running().start(),
    destroy: () => running().destroy(),
  };
}
