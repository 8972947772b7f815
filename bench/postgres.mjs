// A throw-away PostgreSQL server for benchmarks (the same recipe as test/helpers/postgres.ts): Debian's
// binaries, a fresh cluster in a temp folder, a free port on 127.0.0.1, run as `postgres` when root.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

function binDir() {
  const base = '/usr/lib/postgresql';
  const v = existsSync(base) ? readdirSync(base).filter((d) => existsSync(path.join(base, d, 'bin', 'initdb'))).sort((a, b) => b - a)[0] : undefined;
  if (!v) throw new Error('no PostgreSQL server binaries: install the Debian package postgresql');
  return path.join(base, v, 'bin');
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

export async function startPostgres() {
  const bin = binDir();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-pg-bench-'));
  chmodSync(dir, 0o700);
  const run = (cmd, args) => execFileSync(root ? 'runuser' : path.join(bin, cmd), root ? ['-u', 'postgres', '--', path.join(bin, cmd), ...args] : args, { stdio: 'pipe', cwd: dir });
  if (root) execFileSync('chown', ['postgres:', dir]);
  const password = `bench-${Math.random().toString(36).slice(2)}`;
  writeFileSync(path.join(dir, 'pw'), `${password}\n`, { mode: 0o600 });
  if (root) execFileSync('chown', ['postgres:', path.join(dir, 'pw')]);
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'govops', '--auth=scram-sha-256', `--pwfile=${path.join(dir, 'pw')}`, '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // fsync stays on: the comparison with the state file (which fsyncs each change) is fair
  run('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${dir} -h 127.0.0.1`, '-l', path.join(dir, 'log'), '-w', 'start']);
  execFileSync(path.join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'govops', '-d', 'postgres', '-c', 'CREATE DATABASE govops'], {
    env: { ...process.env, PGPASSWORD: password },
    stdio: 'pipe',
  });
  return {
    url: `postgres://govops:${password}@127.0.0.1:${port}/govops`,
    destroy() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
