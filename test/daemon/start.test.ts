/** `npm start` (dist/cli/start.js) as a real process: sandbox + daemon on examples/, then Ctrl-C. */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stat } from 'node:fs/promises';
import { exampleEnv, exampleEnvNames, persistentExampleEnv, portOrFree } from '../../src/daemon/dev.js';
import { Cleanup, getJson, until } from './helpers.js';

const START = fileURLToPath(new URL('../../dist/cli/start.js', import.meta.url));
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('npm start helpers', () => {
  it('finds the example secret names and fills only the unset ones', async () => {
    const names = await exampleEnvNames('examples');
    expect(names).toContain('GOVOPS_SECRET_EXAMPLE_LAKEHOUSE_TOKEN');
    expect(names.every((n) => n.startsWith('GOVOPS_SECRET_EXAMPLE_'))).toBe(true);
    const env = exampleEnv(names, { GOVOPS_SECRET_EXAMPLE_LAKEHOUSE_TOKEN: 'mine' });
    expect(env.GOVOPS_SECRET_EXAMPLE_LAKEHOUSE_TOKEN).toBeUndefined();
    expect(Object.keys(env)).toHaveLength(names.length - 1);
    const cred = Object.entries(env).find(([k]) => k.includes('CREDENTIAL'));
    if (cred) expect(() => JSON.parse(cred[1])).not.toThrow();
  });

  it('keeps the dummy values across restarts (mode 0600) and never stores the ones from the environment', async () => {
    const dir = await cleanup.tmp('govops-exenv-');
    const file = join(dir, 'example-env.json');
    const names = ['GOVOPS_SECRET_EXAMPLE_A_TOKEN', 'GOVOPS_SECRET_EXAMPLE_B_CREDENTIALS', 'GOVOPS_SECRET_EXAMPLE_MINE'];
    const env = { GOVOPS_SECRET_EXAMPLE_MINE: 'from-env' };
    const first = await persistentExampleEnv(names, env, file);
    expect(Object.keys(first).sort()).toEqual(['GOVOPS_SECRET_EXAMPLE_A_TOKEN', 'GOVOPS_SECRET_EXAMPLE_B_CREDENTIALS']);
    expect(await persistentExampleEnv(names, env, file)).toEqual(first);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).not.toContain('from-env');
    // A new name gets a value; the old ones stay.
    const more = await persistentExampleEnv([...names, 'GOVOPS_SECRET_EXAMPLE_C_PASSWORD'], env, file);
    expect(more).toMatchObject(first);
    expect(more.GOVOPS_SECRET_EXAMPLE_C_PASSWORD).toMatch(/^example-/);
  });

  it('falls back to a free port when the preferred one is busy', async () => {
    const { createServer } = await import('node:net');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    cleanup.add(() => new Promise((r) => busy.close(r)));
    const port = (busy.address() as { port: number }).port;
    expect(await portOrFree(port, '127.0.0.1')).toBe(0);
  });
});

function launch(cwd: string) {
  const child = spawn(process.execPath, [START], { cwd, env: { ...process.env, NO_COLOR: '1', GOVOPS_START_PORT: '0', GOVOPS_START_SANDBOX_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  cleanup.add(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
  });
  return { child, exit, out: () => out };
}

async function firstReconcile(url: string) {
  return until(async () => {
    const s = (await getJson(`${url}/status`)).body;
    return s.lastReconcile && !s.running ? s : undefined;
  }, 30_000, 'first reconcile');
}

describe('npm start', () => {
  it('starts the sandbox and the daemon on examples/, applies them all, prints where to look, stops on SIGINT; a restart is in sync', async () => {
    const cwd = await cleanup.tmp('govops-start-');
    const run = launch(cwd);
    const url = await until(() => /daemon\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(run.out())?.[1], 20_000, 'banner');
    const out = run.out();
    expect(out).toMatch(/status\s+curl -s http:\/\/127\.0\.0\.1:\d+\/status/);
    expect(out).toMatch(/metrics\s+curl -s http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(out).toMatch(/sandbox\s+http:\/\/127\.0\.0\.1:\d+ +\(admin token: govops-dev-admin-token\)/);
    expect(out).toMatch(/edit .*lakehouse\.yaml/);
    const status = await firstReconcile(url!);
    expect(status.lastReconcile.result).toBe('applied');
    expect(status.resources.length).toBeGreaterThanOrEqual(10);
    expect(status.resources.every((r: { syncState: string }) => r.syncState === 'synced')).toBe(true);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    // After the first reconcile it says how it went and where to look again.
    await until(() => /first reconcile applied \(\d+ resources, [\d.]+s\); status: curl -s http:\S+\/status/.test(run.out()), 5000, 'summary line');
    // Non-TTY: the logs are JSON lines.
    const logLines = run.out().split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(5);
    for (const l of logLines) expect(() => JSON.parse(l)).not.toThrow();
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);
    expect(run.out()).toContain('govops and the sandbox stopped');
    const state = JSON.parse(await readFile(join(cwd, '.govops', 'state.json'), 'utf8'));
    expect(state.resources.length).toBe(status.resources.length);
    // The generated example secrets never reach the output.
    const values = Object.values(JSON.parse(await readFile(join(cwd, '.govops', 'example-env.json'), 'utf8')) as Record<string, string>);
    expect(values.length).toBeGreaterThan(5);
    for (const v of values) expect(run.out()).not.toContain(v);

    // Restart in the same folder: same dummy secrets, same sandbox data → nothing to change.
    const again = launch(cwd);
    const url2 = await until(() => /daemon\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(again.out())?.[1], 20_000, 'banner 2');
    const status2 = await firstReconcile(url2!);
    expect(status2.lastReconcile.result).toBe('in-sync');
    expect(status2.resources).toHaveLength(status.resources.length);
    again.child.kill('SIGTERM');
    expect(await again.exit).toBe(0);
  }, 60_000);
});
