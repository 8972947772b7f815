/** `govops sandbox` as a real process: prints URL and tokens, serves, SIGTERM persists state and exits 0. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, runGovops } from '../helpers/cli.js';
import { DEV_ADMIN_TOKEN } from '../../src/sandbox/auth.js';

let child: ChildProcess | undefined;
const dirs: string[] = [];
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'govops-sandbox-cli-'));
  dirs.push(d);
  return d;
}

/** Start `govops sandbox` and wait for its banner. */
function launch(args: string[]): Promise<{ url: string; out: () => string; exited: Promise<number | null> }> {
  const proc = spawn(process.execPath, [CLI, '--log-level', 'silent', 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  let out = '';
  const exited = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner: ${out}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && out.includes('control API')) {
        clearTimeout(timer);
        resolve({ url: m[1]!, out: () => out, exited });
      }
    });
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('close', () => reject(new Error(`exited early: ${out}`)));
  });
}

describe('govops sandbox', () => {
  it('with --dev prints the URL and the fixed tokens, serves requests, and persists on SIGTERM', async () => {
    const data = join(tempDir(), 'state.json');
    const s = await launch(['--port', '0', '--dev', '--transition', '50ms', '--data', data]);
    expect(s.out()).toContain(DEV_ADMIN_TOKEN);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${s.url}/integrations`, {
      method: 'POST',
      headers: { authorization: DEV_ADMIN_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'distributed_sql' }),
    });
    expect(res.status).toBe(200);
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const saved = JSON.parse(readFileSync(data, 'utf8'));
    expect(saved.integrations.integrations).toHaveLength(1);
  });

  it('without tokens generates and prints them; given tokens are not printed', async () => {
    const s = await launch(['--port', '0']);
    const m = /admin token: (\S+)/.exec(s.out());
    expect(m).not.toBeNull();
    const token = m![1]!;
    expect(token).not.toBe(DEV_ADMIN_TOKEN);
    expect((await fetch(`${s.url}/integrations`, { headers: { authorization: token } })).status).toBe(200);
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);

    const g = await launch(['--port', '0', '--admin-token', 'super-secret-admin']);
    expect(g.out()).not.toContain('super-secret-admin');
    expect((await fetch(`${g.url}/integrations`, { headers: { authorization: 'super-secret-admin' } })).status).toBe(200);
    child!.kill('SIGINT');
    expect(await g.exited).toBe(0);
  });

  it('a tokens file without an ordinary user: the generated user token is printed, the file\'s admin token is not', async () => {
    const file = join(tempDir(), 'tokens.json');
    writeFileSync(file, JSON.stringify([{ token: 'file-admin-token', role: 'admin', userId: 7, name: 'ops' }]));
    const s = await launch(['--port', '0', '--tokens-file', file]);
    expect(s.out()).toContain('admin token: (as configured)');
    expect(s.out()).not.toContain('file-admin-token');
    expect(s.out()).not.toContain('user token: (as configured)');
    const m = /user token: (\S+)/.exec(s.out());
    expect((await fetch(`${s.url}/webhooks`, { headers: { authorization: `Bearer ${m![1]!}` } })).status).toBe(200);
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('fault flags are active from the start', async () => {
    const s = await launch(['--port', '0', '--dev', '--error-rate', '1', '--error-status', '429', '--retry-after', '3', '--fault-path', '/integrations']);
    const res = await fetch(`${s.url}/integrations`, { headers: { authorization: DEV_ADMIN_TOKEN } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    const faults = (await (await fetch(`${s.url}/_sandbox/faults`)).json()) as { rules: unknown[] };
    expect(faults.rules).toHaveLength(1);
    child!.kill('SIGTERM');
    await s.exited;
  });

  it('--error-status or --retry-after without --error-rate is refused (no error would be injected), as is a fraction of a second', async () => {
    for (const flags of [['--error-status', '429'], ['--retry-after', '3'], ['--error-status', '503', '--retry-after', '3']]) {
      const r = await runGovops(['sandbox', '--port', '0', ...flags]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/the errors --error-rate injects, and --error-rate is not given/);
    }
    const frac = await runGovops(['sandbox', '--port', '0', '--error-rate', '1', '--retry-after', '2.5']);
    expect(frac.stderr).toMatch(/--retry-after must be a whole number of seconds/);
    // the control API: a Retry-After header is whole seconds (RFC 9110); "2.5" reads as no delay to clients
    const s = await launch(['--port', '0', '--dev']);
    const res = await fetch(`${s.url}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ type: 'error', status: 503, retryAfter: 2.5 }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/retryAfter.*whole number/);
    child!.kill('SIGTERM');
    await s.exited;
  });

  it('a faults file and --stuck-transitions', async () => {
    const file = join(tempDir(), 'faults.json');
    writeFileSync(file, JSON.stringify([{ type: 'conflict', method: 'DELETE', path: '/integrations/:id' }]));
    const s = await launch(['--port', '0', '--dev', '--faults', file, '--stuck-transitions', 'editing,deleting']);
    const body = (await (await fetch(`${s.url}/_sandbox/faults`)).json()) as { rules: unknown[]; stuckTransitions: boolean };
    expect(body.stuckTransitions).toBe(true);
    expect((body as unknown as { stuckStatuses: string[] }).stuckStatuses).toEqual(['editing', 'deleting']);
    expect(body.rules).toEqual([expect.objectContaining({ type: 'conflict', method: 'DELETE' })]);
    child!.kill('SIGTERM');
    await s.exited;
  });

  it('bad flags are clear errors with exit code 1', async () => {
    const r = await runGovops(['sandbox', '--transition', 'soon']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--transition/);
    const p = await runGovops(['sandbox', '--port', '70000']);
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(/--port/);
    const f = await runGovops(['sandbox', '--error-rate', '3']);
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/--error-rate/);
    const d = await runGovops(['sandbox', '--deliver-to', 'hooks.example.com:443']);
    expect(d.code).toBe(1);
    expect(d.stderr).toMatch(/--deliver-to: "hooks.example.com:443".*ports are not part of the policy/);
  });

  it('by default webhook deliveries to other hosts are recorded as EBLOCKED (no lookup, no connection)', async () => {
    const s = await launch(['--port', '0', '--dev']);
    expect(s.out()).toContain('webhook deliveries allowed to: 127.0.0.0/8, ::1, localhost');
    const auth = { authorization: `Bearer ${DEV_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const hook = { url: 'https://hooks.example.com/pager', name: 'pager', global: false, notificationType: ['tagCreated'], actionType: 'triggered' };
    const created = await fetch(`${s.url}/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ webhooks: [hook] }) });
    expect(created.status).toBe(200);
    const fired = await fetch(`${s.url}/_sandbox/events?wait=true`, { method: 'POST', headers: auth, body: JSON.stringify({ notificationType: 'tagCreated' }) });
    expect(await fired.json()).toMatchObject({ deliveries: 1 });
    const history = (await (await fetch(`${s.url}/webhooks/history`, { headers: auth })).json()) as { records: unknown[] };
    // A real attempt would end in ENOTFOUND / ECONNREFUSED / a timeout, never EBLOCKED.
    expect(history.records).toEqual([
      expect.objectContaining({ url: hook.url, statusCode: 500, response: { body: { code: 'EBLOCKED', connect: false } } }),
    ]);
    child!.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it("--deliver-to '*' and lists are shown in the banner", async () => {
    const s = await launch(['--port', '0', '--dev', '--deliver-to', '*']);
    expect(s.out()).toContain('webhook deliveries allowed to: any host (*)');
    child!.kill('SIGTERM');
    await s.exited;
    const l = await launch(['--port', '0', '--dev', '--deliver-to', 'loopback, .internal.example.com,10.0.0.0/8']);
    expect(l.out()).toContain('webhook deliveries allowed to: 127.0.0.0/8, ::1, localhost, .internal.example.com, 10.0.0.0/8');
    child!.kill('SIGTERM');
    await l.exited;
  });

  it('--data in a folder that does not exist fails at start (exit 1), naming the folder', async () => {
    const data = join(tempDir(), 'missing', 'state.json');
    const r = await runGovops(['sandbox', '--port', '0', '--dev', '--data', data]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--data .*: the folder .*missing does not exist/);
  });

  it('warns when --host is not a loopback address; the control API needs the token without --dev', async () => {
    const s = await launch(['--port', '0', '--host', '0.0.0.0']);
    expect(s.out()).toContain('control API: ');
    expect(s.out()).toContain('needs the admin token');
    const deadline = Date.now() + 10_000;
    while (!s.out().includes('warning: --host 0.0.0.0 is not a loopback address') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(s.out()).toContain('warning: --host 0.0.0.0 is not a loopback address');
    const port = new URL(s.url).port;
    expect((await fetch(`http://127.0.0.1:${port}/_sandbox/health`)).status).toBe(401);
    child!.kill('SIGTERM');
    await s.exited;
    const l = await launch(['--port', '0', '--dev']);
    expect(l.out()).not.toContain('not a loopback address');
    expect((await fetch(`${l.url}/_sandbox/health`)).status).toBe(200);
    child!.kill('SIGTERM');
    await l.exited;
  });
});
