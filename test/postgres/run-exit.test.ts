/**
 * `govops run` with a PostgreSQL state exits as soon as its shutdown is done: the state's pool (and the LISTEN
 * connection) were said to be left open, so that the process waited for finish()'s 2 s fallback timer. Not so: the
 * pool is made with allowExitOnIdle and the elector ends the LISTEN connection; this guards that (measured: ~0.2 s).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { Cleanup, getJson, spawnRun, until } from '../daemon/helpers.js';
import { postgresPerFile } from '../helpers/postgres.js';

const pg = postgresPerFile();
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('govops run with a PostgreSQL state, stopped by SIGTERM', () => {
  it('exits once its shutdown is done, not at the 2 s fallback (the pool and the LISTEN connection are closed)', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanup.add(() => sandbox.close());
    const home = await cleanup.tmp('govops-pg-exit-');
    await mkdir(join(home, 'm'));
    const d = spawnRun(
      cleanup,
      ['--dir', 'm', '--listen', '127.0.0.1:0', '--state-key', 'exit', '--identity', 'r1', '--interval', '60s', '--resync', '10m', '--grace', '500ms',
        '--lease-duration', '3s', '--lease-renew-deadline', '2s', '--lease-retry-period', '500ms'],
      { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url }, stopSignal: 'SIGKILL' },
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    await until(async () => (await getJson(`${url}/status`)).body?.leader?.role === 'leader' && (await getJson(`${url}/status`)).body?.revision?.lastApplied, 20_000, 'leading, first revision applied');
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
    const exitedAt = Date.now();
    const stopped = d.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; time?: number }).find((l) => l.msg === 'govops run stopped');
    expect(stopped?.time).toBeTypeOf('number');
    // the fallback timer is 2 s; a process with nothing left open exits within milliseconds of its last log line
    expect(exitedAt - stopped!.time!).toBeLessThan(1500);
  }, 60_000);
});
