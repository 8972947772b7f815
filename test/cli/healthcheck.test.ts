/**
 * `govops healthcheck` (the image's HEALTHCHECK) checks /healthz at the address the running `govops run`
 * was started with: its --listen flag, else its GOVOPS_LISTEN, else :8080, whatever the checker's own
 * environment says. Real daemon processes against a real sandbox; a fake /proc tree for the scan.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { healthzUrl } from '../../src/cli/commands/healthcheck-action.js';
import { findRunProcesses, runListenFrom } from '../../src/cli/run-processes.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { CLI, MAIN, runGovops } from '../helpers/cli.js';
import { Cleanup, until } from '../daemon/helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A port the OS has just handed out (bound to port 0, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('runListenFrom: the --listen `govops run` would use', () => {
  it('takes the flag over the environment, the environment over the default', () => {
    const env = { GOVOPS_LISTEN: '127.0.0.1:7001' };
    expect(runListenFrom(['run', '--dir', 'x', '--listen', '127.0.0.1:9001'], env)).toBe('127.0.0.1:9001');
    expect(runListenFrom(['--log-level', 'debug', 'run', '--listen=:9002', '--self-heal'], env)).toBe(':9002');
    expect(runListenFrom(['run', '--dir', 'x'], env)).toBe('127.0.0.1:7001');
    expect(runListenFrom(['run', '--dir', 'x'], {})).toBe(':8080');
  });

  it('is undefined for other commands or an invalid command line, runs no action, and leaves process.env as it was', () => {
    const before = process.env.GOVOPS_LISTEN;
    expect(runListenFrom(['sandbox', '--port', '0'], { GOVOPS_LISTEN: ':1' })).toBeUndefined();
    expect(runListenFrom(['validate', '.'], {})).toBeUndefined();
    // A subcommand's action never runs either (here it would call the service).
    expect(runListenFrom(['webhooks', 'history', 'run', '--url', 'http://127.0.0.1:1'], {})).toBeUndefined();
    expect(runListenFrom(['run', '--no-such-flag'], {})).toBeUndefined();
    expect(runListenFrom(['--version'], {})).toBeUndefined();
    expect(process.env.GOVOPS_LISTEN).toBe(before);
  });

  it("reads an empty variable of the daemon's environment as unset, as the daemon did (src/cli/empty-env.ts)", () => {
    // `GOVOPS_LISTEN=` (a template of an unset variable): the daemon listens on :8080; it was '' here, and the check
    // failed on an address that does not parse while the daemon was healthy
    expect(runListenFrom(['run', '--dir', 'x'], { GOVOPS_LISTEN: '' })).toBe(':8080');
    expect(runListenFrom(['run', '--dir', 'x'], { GOVOPS_LISTEN: '  ' })).toBe(':8080');
    // another option's empty variable made the command line invalid here: the daemon was not recognised at all
    expect(runListenFrom(['run', '--dir', 'x', '--listen', ':9090'], { GOVOPS_MANUAL_STEPS: '' })).toBe(':9090');
    expect(runListenFrom(['run', '--dir', 'x'], { GOVOPS_MANUAL_STEPS: '', GOVOPS_LISTEN: ':9091' })).toBe(':9091');
  });
});

describe('healthzUrl', () => {
  it('checks a wildcard address on the loopback address, a given host as it is', () => {
    expect(healthzUrl(':8080')).toBe('http://127.0.0.1:8080/healthz');
    expect(healthzUrl('0.0.0.0:9')).toBe('http://127.0.0.1:9/healthz');
    expect(healthzUrl('[::]:9')).toBe('http://[::1]:9/healthz');
    expect(healthzUrl('127.0.0.2:9')).toBe('http://127.0.0.2:9/healthz');
    expect(healthzUrl('[::1]:9')).toBe('http://[::1]:9/healthz');
    expect(() => healthzUrl('8080')).toThrow(/HOST:PORT/);
  });
});

describe('findRunProcesses: the /proc scan', () => {
  it('finds processes whose entry script is the govops CLI (absolute, relative to their cwd, or a symlink), reads their environment', async () => {
    const root = await cleanup.tmp('govops-proc-');
    const bin = join(root, 'bin');
    await mkdir(bin);
    await symlink(CLI, join(bin, 'govops'));
    const appDir = join(CLI, '..', '..', '..');
    const proc = async (pid: number, argv: string[], env: string[] | undefined, cwd: string): Promise<void> => {
      const d = join(root, 'proc', String(pid));
      await mkdir(d, { recursive: true });
      await writeFile(join(d, 'cmdline'), argv.map((a) => `${a}\0`).join(''));
      if (env) await writeFile(join(d, 'environ'), env.map((e) => `${e}\0`).join(''));
      await symlink(cwd, join(d, 'cwd'));
    };
    await proc(10, ['node', join(bin, 'govops'), 'run', '--dir', '/git/repo'], ['GOVOPS_LISTEN=127.0.0.1:9010', 'HOME=/x'], root);
    await proc(11, ['node', '--enable-source-maps', 'dist/cli/main.js', 'run', '--listen', ':9011'], ['GOVOPS_LISTEN=:1'], appDir);
    await proc(12, ['/usr/bin/node', CLI, 'run'], undefined, root); // environment not readable: the fallback stands in
    await proc(13, ['node', CLI, 'sandbox', '--port', 'run'], [], root); // another command
    await proc(14, ['node', join(root, 'other.js'), 'run', '--listen', ':9014'], [], root); // another program
    await proc(15, ['node', CLI, 'run', '--listen', ':9015'], [], root); // the caller itself
    await proc(16, ['node', MAIN, 'run', '--listen', '127.0.0.1:9016'], [], root); // the ES module run on its own
    await mkdir(join(root, 'proc', 'self'));
    const entries = [CLI, MAIN];
    const found = await findRunProcesses({ entries, procRoot: join(root, 'proc'), selfPid: 15, fallbackEnv: { GOVOPS_LISTEN: ':9012' } });
    expect(found.sort((a, b) => a.pid - b.pid)).toEqual([
      { pid: 10, listen: '127.0.0.1:9010', envRead: true },
      { pid: 11, listen: ':9011', envRead: true },
      { pid: 12, listen: ':9012', envRead: false },
      { pid: 16, listen: '127.0.0.1:9016', envRead: true },
    ]);
    expect(await findRunProcesses({ entries, procRoot: join(root, 'proc'), pid: 11 })).toEqual([{ pid: 11, listen: ':9011', envRead: true }]);
    // an entry list without main.js does not take a process started with it
    expect(await findRunProcesses({ entries: [CLI], procRoot: join(root, 'proc'), pid: 16 })).toEqual([]);
  });
});

describe('govops healthcheck against a running daemon', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
  });
  afterAll(() => sandbox.close());

  async function daemon(args: string[], env: Record<string, string>): Promise<ChildProcess> {
    const home = await cleanup.tmp('govops-hc-');
    const dir = join(home, 'manifests');
    await mkdir(dir);
    const child = spawn(process.execPath, [CLI, 'run', '--dir', dir, '--state', join(home, 'state.json'), ...args], {
      cwd: home,
      env: { ...process.env, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_LISTEN: undefined, ...env },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.once('exit', r));
    cleanup.add(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    });
    return child;
  }

  it('follows the daemon\'s --listen flag, not the checker\'s GOVOPS_LISTEN (the container case)', async () => {
    const port = await freePort();
    const child = await daemon(['--listen', `127.0.0.1:${port}`], { GOVOPS_LISTEN: ':1' });
    await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 20_000, 'daemon /healthz');
    // The checker's own environment names the image default, as HEALTHCHECK's would.
    const res = await runGovops(['healthcheck', '--pid', String(child.pid)], { env: { GOVOPS_LISTEN: ':8080' } });
    expect(res.stdout).toContain(`healthy: http://127.0.0.1:${port}/healthz (govops run (pid ${child.pid}))`);
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it('follows the daemon\'s GOVOPS_LISTEN when no flag was given', async () => {
    const port = await freePort();
    const child = await daemon([], { GOVOPS_LISTEN: `127.0.0.1:${port}` });
    await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 20_000, 'daemon /healthz');
    const res = await runGovops(['healthcheck', '--pid', String(child.pid)], { env: { GOVOPS_LISTEN: undefined } });
    expect(res.stdout).toContain(`healthy: http://127.0.0.1:${port}/healthz`);
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it("finds a daemon whose environment holds an empty option variable (GOVOPS_MANUAL_STEPS=), which the daemon reads as unset", async () => {
    const port = await freePort();
    const child = await daemon(['--listen', `127.0.0.1:${port}`], { GOVOPS_MANUAL_STEPS: '' });
    await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 20_000, 'daemon /healthz');
    const res = await runGovops(['healthcheck', '--pid', String(child.pid)], { env: { GOVOPS_LISTEN: undefined } });
    expect(res.stdout).toContain(`healthy: http://127.0.0.1:${port}/healthz (govops run (pid ${child.pid}))`);
    expect(res.code, res.stdout + res.stderr).toBe(0);
  });

  it('fails (exit 1) when nothing answers, and when the pid is not a govops run', async () => {
    const port = await freePort();
    const res = await runGovops(['healthcheck', '--listen', `127.0.0.1:${port}`, '--timeout', '2s']);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(new RegExp(`unhealthy: http://127\\.0\\.0\\.1:${port}/healthz \\(--listen\\): .*ECONNREFUSED`));
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'run'], { stdio: 'ignore' });
    cleanup.add(() => other.kill('SIGKILL'));
    const notOurs = await runGovops(['healthcheck', '--pid', String(other.pid)]);
    expect(notOurs.code).toBe(1);
    expect(notOurs.stderr).toContain(`process ${other.pid} is not a running \`govops run\``);
  });

  it('--pid with --listen is a usage error: one says which daemon to look for, the other not to look (the --pid was ignored)', async () => {
    const res = await runGovops(['healthcheck', '--pid', String(process.pid), '--listen', '127.0.0.1:1', '--timeout', '2s']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--pid and --listen');
    expect(res.stdout).not.toContain('unhealthy');
  });

  it('--timeout 0 is a usage error, not a check that waits for ever on a daemon that accepts and never answers', async () => {
    // a listener that accepts connections and never answers: a hung daemon
    const sockets = new Set<Socket>();
    const hung = createServer((socket) => sockets.add(socket));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    cleanup.add(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise((r) => hung.close(r));
    });
    const { port } = hung.address() as { port: number };
    const res = await runGovops(['healthcheck', '--listen', `127.0.0.1:${port}`, '--timeout', '0s'], { timeoutMs: 10_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--timeout must be greater than zero');
  });
});
