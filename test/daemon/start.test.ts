/** `npm start` (dist/cli/start.js) as a real process: sandbox + daemon on examples/, then Ctrl-C. */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exampleEnv, exampleEnvNames, portOrFree } from '../../src/daemon/dev.js';
import { Cleanup, getJson, until } from './helpers.js';

const START = fileURLToPath(new URL('../../dist/cli/start.js', import.meta.url));
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('npm start helpers', () => {
  it('finds the example secret names and fills only the unset ones', async () => {
    const names = await exampleEnvNames('examples');
    expect(names).toContain('GOVOPS_EXAMPLE_LAKEHOUSE_TOKEN');
    expect(names.every((n) => n.startsWith('GOVOPS_EXAMPLE_'))).toBe(true);
    const env = exampleEnv(names, { GOVOPS_EXAMPLE_LAKEHOUSE_TOKEN: 'mine' });
    expect(env.GOVOPS_EXAMPLE_LAKEHOUSE_TOKEN).toBeUndefined();
    expect(Object.keys(env)).toHaveLength(names.length - 1);
    const cred = Object.entries(env).find(([k]) => k.includes('CREDENTIAL'));
    if (cred) expect(() => JSON.parse(cred[1])).not.toThrow();
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

describe('npm start', () => {
  it('starts the sandbox and the daemon on examples/, applies them all, prints where to look, stops on SIGINT', async () => {
    const cwd = await cleanup.tmp('govops-start-');
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
    const url = await until(() => /daemon\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], 20_000, 'banner');
    expect(out).toMatch(/status\s+curl -s http:\/\/127\.0\.0\.1:\d+\/status/);
    expect(out).toMatch(/metrics\s+curl -s http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(out).toMatch(/sandbox\s+http:\/\/127\.0\.0\.1:\d+ +\(admin token: govops-dev-admin-token\)/);
    expect(out).toMatch(/edit .*lakehouse\.yaml/);
    const status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.lastReconcile && !s.running ? s : undefined;
    }, 30_000, 'first reconcile');
    expect(status.lastReconcile.result).toBe('applied');
    expect(status.resources.length).toBeGreaterThanOrEqual(10);
    expect(status.resources.every((r: { syncState: string }) => r.syncState === 'synced')).toBe(true);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    child.kill('SIGINT');
    expect(await exit).toBe(0);
    const state = JSON.parse(await readFile(join(cwd, '.govops', 'state.json'), 'utf8'));
    expect(state.resources.length).toBe(status.resources.length);
    // The generated example secrets never reach the output.
    expect(out).not.toMatch(/example-[0-9a-f]{16}/);
  }, 60_000);
});
