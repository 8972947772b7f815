/** `npm start` (dist/cli/start.js) as a real process: sandbox + daemon on examples/, then Ctrl-C. */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stat } from 'node:fs/promises';
import { exampleEnv, exampleEnvNames, persistentExampleEnv, shellQuote, startOnPort } from '../../src/daemon/dev.js';
import { Cleanup, getJson, until } from './helpers.js';
import { runGovops } from '../helpers/cli.js';
import { rawRequest } from '../helpers/raw-http.js';

const HAS_CURL = spawnSync('curl', ['--version']).status === 0;
const examples = (): string => fileURLToPath(new URL('../../examples', import.meta.url));

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

  it('starts on a free port when the preferred one is taken (and says so); other errors are not hidden', async () => {
    const port = await occupy();
    const listen = (p: number) =>
      new Promise<Server>((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(p, '127.0.0.1', () => resolve(s));
      });
    const moved = await startOnPort(port, listen);
    cleanup.add(() => new Promise((r) => moved.value.close(r)));
    expect(moved.busy).toBe(true);
    expect((moved.value.address() as { port: number }).port).not.toBe(port);
    const free = await startOnPort(0, listen);
    cleanup.add(() => new Promise((r) => free.value.close(r)));
    expect(free.busy).toBe(false);
    await expect(startOnPort(port, () => Promise.reject(Object.assign(new Error('denied'), { code: 'EACCES' })))).rejects.toThrow('denied');
  });

  it('quotes values for the shell only when needed', () => {
    expect(shellQuote('http://127.0.0.1:8088')).toBe('http://127.0.0.1:8088');
    expect(shellQuote(`{"a": "it's"}`)).toBe(`'{"a": "it'\\''s"}'`);
    expect(execFileSync('bash', ['-c', `printf %s ${shellQuote(`{"a": "it's"} $HOME`)}`], { encoding: 'utf8' })).toBe(`{"a": "it's"} $HOME`);
  });
});

function launch(cwd: string, ports: { daemon?: number; sandbox?: number } = {}) {
  const env = { ...process.env, NO_COLOR: '1', GOVOPS_START_PORT: String(ports.daemon ?? 0), GOVOPS_START_SANDBOX_PORT: String(ports.sandbox ?? 0) };
  const child = spawn(process.execPath, [START], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const out = await until(() => (/npx govops plan \S+/.test(run.out()) ? run.out() : undefined), 5000, 'banner end');
    expect(out).toContain(`  curl -s ${url}/status | grep -E '"(latest|result|name|syncState)":'`);
    expect(out).toContain(`  curl -s ${url}/metrics | grep ^govops_`);
    expect(out).toMatch(/sandbox\s+http:\/\/127\.0\.0\.1:\d+ +\(admin token: govops-dev-admin-token\)/);
    expect(out).toMatch(/^ {2}export GOVOPS_URL=http:\/\/127\.0\.0\.1:\d+ GOVOPS_TOKEN=govops-dev-admin-token GOVOPS_DAEMON_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out).not.toMatch(/was busy/);
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
    // The lines of this run are gone with it.
    expect(existsSync(join(cwd, '.govops', 'env.sh'))).toBe(false);
    expect(existsSync(join(cwd, '.govops', 'start.lock'))).toBe(false);
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

async function occupy(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup.add(() => new Promise((r) => server.close(r)));
  return (server.address() as { port: number }).port;
}

describe('npm start on a machine where its ports are taken', () => {
  it('npm start | head: once the reader is gone the daemon keeps running (its output dropped) and stops cleanly on SIGINT', async () => {
    const cwd = await cleanup.tmp('govops-start-');
    const run = launch(cwd);
    const url = await until(() => /daemon\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(run.out())?.[1], 20_000, 'banner');
    run.child.stdout.destroy(); // the reader leaves: the next log line the daemon writes meets EPIPE
    run.child.stderr.destroy();
    await firstReconcile(url!); // it logs while it applies the examples
    expect(run.child.exitCode).toBeNull();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);
    expect(existsSync(join(cwd, '.govops', 'start.lock'))).toBe(false);
  });

  it('says which port was busy, prints the lines for this run, and they work; a second npm start in the same clone is refused', async () => {
    const cwd = await cleanup.tmp('govops-start-busy-');
    const [daemonPort, sandboxPort] = [await occupy(), await occupy()];
    const run = launch(cwd, { daemon: daemonPort, sandbox: sandboxPort });
    const out = (await until(() => (/npx govops plan \S+/.test(run.out()) ? run.out() : undefined), 20_000, "banner"))!;
    expect(out).toContain(`port ${sandboxPort} was busy (another program or another govops): the sandbox is on http://127.0.0.1:`);
    expect(out).toContain(`port ${daemonPort} was busy (another program or another govops): the daemon is on http://127.0.0.1:`);
    expect(out).toContain('copy these lines (they are for this run: not the default ports)');
    const exported = /^ {2}(export GOVOPS_URL=(\S+) GOVOPS_TOKEN=\S+ GOVOPS_DAEMON_URL=(\S+))$/m.exec(out ?? "")!;
    const [sandboxUrl, daemonUrl] = [exported[2]!, exported[3]!];
    expect(sandboxUrl).not.toContain(`:${sandboxPort}`);
    expect(daemonUrl).not.toContain(`:${daemonPort}`);
    await firstReconcile(daemonUrl);
    // DNS-rebinding protection: both servers answer loopback Host names only.
    for (const u of [daemonUrl, sandboxUrl]) {
      expect((await rawRequest(u, { host: 'evil.example', path: '/status' })).status, u).toBe(421);
      expect((await rawRequest(u, { host: `localhost:${new URL(u).port}`, path: '/healthz' })).status, u).not.toBe(421);
    }
    // The env file holds the same connection and the example secrets; sourced by a shell it reaches this run.
    const envSh = await readFile(join(cwd, '.govops', 'env.sh'), 'utf8');
    expect((await stat(join(cwd, '.govops', 'env.sh'))).mode & 0o777).toBe(0o600);
    const shell = (script: string): string => execFileSync('bash', ['-c', script], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(shell('. .govops/env.sh && echo "$GOVOPS_URL $GOVOPS_DAEMON_URL $GOVOPS_TOKEN"').trim()).toBe(`${sandboxUrl} ${daemonUrl} govops-dev-admin-token`);
    expect(shell(`${exported[1]} && echo "$GOVOPS_URL $GOVOPS_DAEMON_URL"`).trim()).toBe(`${sandboxUrl} ${daemonUrl}`);
    const secrets = JSON.parse(await readFile(join(cwd, '.govops', 'example-env.json'), 'utf8')) as Record<string, string>;
    for (const [k, v] of Object.entries(secrets)) expect(shell(`. .govops/env.sh && printf %s "$${k}"`)).toBe(v);
    expect(envSh).not.toContain(`:${daemonPort}`);
    // The README's walkthrough reads (curl) lines, run literally in a shell that sourced env.sh: they reach this run.
    const readme = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const walkthrough = readme.slice(readme.indexOf('## A five-minute walkthrough'), readme.indexOf('## Manifest format'));
    const commands = walkthrough.split('\n').filter((l) => /curl |npx govops /.test(l));
    expect(commands.filter((l) => /localhost:\d|127\.0\.0\.1:\d/.test(l))).toEqual([]); // no hard-coded address in a command
    // The variables (and the example secrets) are loaded before the first command that needs them.
    const firstCommand = walkthrough.search(/^ {3}(curl|npx govops) /m);
    expect(walkthrough.indexOf('   . .govops/env.sh')).toBeGreaterThan(-1);
    expect(walkthrough.indexOf('   . .govops/env.sh')).toBeLessThan(firstCommand);
    const reads = [...walkthrough.matchAll(/^ {3}(curl -s "\$GOVOPS_(?:DAEMON_)?URL[^\n]*?)(?:\s+#.*)?$/gm)].map((m) => m[1]!).filter((l) => !/-X (POST|PATCH)/.test(l));
    expect(reads.length).toBeGreaterThanOrEqual(3);
    if (HAS_CURL) {
      for (const line of reads) {
        const out = shell(`set -o pipefail; . .govops/env.sh && ${line.replace(/\| grep [^|]*$/, '')}`);
        expect(out.length, line).toBeGreaterThan(0);
      }
    }
    if (HAS_CURL) {
      // The /status reads show what their comments promise, whole: not cut before it (head -40, grep -A12).
      const line = (re: RegExp): string => reads.find((l) => re.test(l))!;
      const summary = shell(`. .govops/env.sh && ${line(/grep -E/)}`);
      for (const key of ['"latest":', '"result":', '"syncState":']) expect(summary, key).toContain(key);
      const now = (await (await fetch(`${daemonUrl}/status`)).json()) as { resources: Array<{ name: string }>; webhookHealth: Record<string, unknown> };
      for (const r of now.resources) expect(summary).toContain(`"name": "${r.name}"`);
      const health = shell(`. .govops/env.sh && ${line(/webhookHealth/)}`);
      for (const key of Object.keys(now.webhookHealth)) expect(health, key).toContain(`"${key}"`);
    }
    // The walkthrough's plan, with the variables of env.sh: in sync with what the daemon applied.
    const env = Object.fromEntries([...envSh.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.replace(/^'(.*)'$/, '$1')]));
    const plan = await runGovops(['plan', examples()], { cwd, env: { ...env, GOVOPS_LOG_LEVEL: '' } });
    expect(plan.stderr).toBe('');
    expect(plan.stdout).toMatch(/No changes/);

    // A second npm start in the same folder is refused, naming the running one; the first keeps running.
    const second = launch(cwd);
    expect(await second.exit).toBe(1);
    expect(second.out()).toMatch(new RegExp(`npm start is already running in this folder \\(pid ${run.child.pid}: daemon ${daemonUrl.replace(/\./g, '\\.')}, sandbox`));
    expect(second.out()).toMatch(/hint: use the running one/);
    expect((await fetch(`${daemonUrl}/healthz`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(0);
    // Once it stopped, a new one starts.
    const third = launch(cwd);
    await until(() => /daemon\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(third.out())?.[1], 20_000, 'banner 3');
    third.child.kill('SIGTERM');
    expect(await third.exit).toBe(0);
  }, 90_000);
});
