/**
 * `govops run` as a real process: a bare Git repo in a temp dir, the sandbox over HTTP, push
 * notifications over HTTP, and SIGTERM.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { ServiceClient } from '../../src/api/client.js';
import { githubSignature } from '../../src/daemon/hooks.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, spawnRun, until, webhook, type DaemonProcess } from './helpers.js';

const GIT_TOKEN = 'ghp_runCliT0kenNeverLogged';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function runDaemon(args: string[], env: Record<string, string>, cwd: string): DaemonProcess {
  return spawnRun(cleanup, args, { cwd, env, stopSignal: 'SIGKILL' });
}

describe('govops run (Git source, real process)', () => {
  it('applies commits, takes push notifications, rejects an invalid commit, and exits 0 on SIGTERM with state saved', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    const home = await cleanup.tmp('govops-run-');
    const sha1 = await repo.commit({ 'manifests/lake.yaml': lakehouse('lake', '/sql/1'), 'README.md': 'not a manifest' });

    const d = runDaemon(
      [
        '--repo', repo.bare, '--branch', 'main', '--path', 'manifests',
        // A long interval: after the first fetch only push notifications make it look again.
        '--interval', '10m', '--resync', '10m',
        '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--grace', '10s',
        // Everything the daemon can log, to check no credential is in it.
        '--log-level', 'trace',
      ],
      {
        GOVOPS_URL: sandbox.url,
        GOVOPS_TOKEN: sandbox.adminToken,
        GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN,
        GOVOPS_GIT_WEBHOOK_SECRET: 'push-secret',
        // Not needed by a local repo, but configured (askpass): it must not show up either.
        GOVOPS_GIT_TOKEN: GIT_TOKEN,
      },
      home,
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    const status = async () => (await getJson(`${url}/status`)).body;
    await until(async () => (await status()).revision.lastApplied === sha1, 20_000, 'first commit applied');
    expect((await api.listIntegrations())[0]).toMatchObject({ status: 'enabled', config: { httpPath: '/sql/1' } });
    expect((await status()).source).toMatchObject({ type: 'git', branch: 'main', path: 'manifests' });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const push = (body: string, secret = 'push-secret') =>
      fetch(`${url}/hooks/git`, { method: 'POST', body, headers: { 'x-hub-signature-256': githubSignature(secret, body), 'x-github-event': 'push' } });

    // Next commit changes a field; a signed push notification makes it fetch at once.
    const sha2 = await repo.commit({ 'manifests/lake.yaml': lakehouse('lake', '/sql/2') });
    expect((await push(JSON.stringify({ ref: 'refs/heads/main', after: sha2 }), 'wrong')).status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect((await status()).revision.latest).toBe(sha1); // a bad signature triggered nothing
    expect((await push(JSON.stringify({ ref: 'refs/heads/main', after: sha2 }))).status).toBe(202);
    await until(async () => (await status()).revision.lastApplied === sha2, 20_000, 'second commit applied');
    expect((await api.listIntegrations())[0]!.config.httpPath).toBe('/sql/2');

    // An invalid manifest next to a valid change: the commit is rejected whole.
    const sha3 = await repo.commit({
      'manifests/lake.yaml': lakehouse('lake', '/sql/3'),
      'manifests/hook.yaml': webhook('hook1', 'https://hooks.example.com/a'),
      'manifests/bad.yaml': 'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: bad\nspec:\n  url: https://x.example.com\n  global: maybe\n',
    });
    expect((await push(JSON.stringify({ ref: 'refs/heads/main', after: sha3 }))).status).toBe(202);
    const rejected = await until(async () => {
      const s = await status();
      return s.revision.rejected === sha3 ? s : undefined;
    }, 20_000, 'third commit rejected');
    expect(rejected.revision.lastGood).toBe(sha2);
    expect(rejected.revision.lastApplied).toBe(sha2);
    expect(rejected.lastError.message).toMatch(/manifests\/bad\.yaml:\d+/);
    expect((await api.listIntegrations())[0]!.config.httpPath).toBe('/sql/2');
    expect(await api.listWebhooks()).toHaveLength(0);
    // A push for another branch is accepted but ignored.
    const other = await push(JSON.stringify({ ref: 'refs/heads/feature' }));
    expect(other.status).toBe(202);
    expect(((await other.json()) as { accepted: boolean }).accepted).toBe(false);

    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/govops_git_fetch_duration_seconds_count [3-9]/);
    expect(metrics).toContain(`govops_last_applied_revision_info{revision="${sha2}"} 1`);

    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
    expect(d.out()).toContain('govops run stopped');
    // Logs: JSON lines on stdout (not a TTY), with the revision on every reconcile line and the
    // resource on per-resource lines; no credential anywhere, even at trace level.
    const lines = d.stdout().split('\n').filter(Boolean);
    const logs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logs.some((l) => l.msg === 'reconcile started' && l.revision === sha1 && l.reason === 'revision')).toBe(true);
    const perResource = logs.filter((l) => l.revision === sha2 && l.resource === 'Integration/lake');
    expect(perResource.length).toBeGreaterThan(0);
    expect(logs.some((l) => l.revision === sha3 && /rejected/.test(String(l.msg)))).toBe(true);
    expect(logs.some((l) => l.level === 20 && l.msg === 'request')).toBe(true); // debug-level request lines were written
    for (const secret of [GOVOPS_SECRET_LAKE_TOKEN, GIT_TOKEN, sandbox.adminToken, 'push-secret']) expect(d.out()).not.toContain(secret);
    const state = JSON.parse(await readFile(join(home, 'state.json'), 'utf8'));
    expect(state.resources).toEqual([expect.objectContaining({ kind: 'Integration', name: 'lake', revision: sha2 })]);
    // Defaults: the Git cache lives next to the state file.
    await readFile(join(home, 'work', 'repo.git', 'HEAD'), 'utf8');
  });

  it('SIGTERM during an apply: in-flight calls finish, state is saved, exit 0', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 1500 });
    cleanup.add(() => sandbox.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    const home = await cleanup.tmp('govops-run-');
    const sha = await repo.commit({ 'lake.yaml': lakehouse('lake', '/sql/1') });
    const d = runDaemon(
      ['--repo', repo.bare, '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--grace', '10s'],
      { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN },
      home,
    );
    await d.url;
    // Wait until the create was accepted (the integration is `creating`), then stop.
    await until(() => sandbox.requests().some((r) => r.method === 'POST' && r.path === '/integrations' && r.query.dryRun !== 'true' && r.status === 200), 20_000, 'create sent');
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    expect((await api.listIntegrations())[0]!.status).toBe('creating'); // still in flight
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
    const state = JSON.parse(await readFile(join(home, 'state.json'), 'utf8'));
    expect(state.resources).toEqual([expect.objectContaining({ kind: 'Integration', name: 'lake', revision: sha })]);
  });

  it('a second SIGINT (Ctrl-C) aborts the calls in flight at once (as apply does), and the process exits 0 well within --grace', async () => {
    // every call to the service hangs for a minute: the first reconcile is in flight when the signals come
    const sandbox = await startSandbox({ port: 0, faults: [{ type: 'latency', method: 'POST', path: '/integrations', latencyMs: 60_000, count: 1 }] });
    cleanup.add(() => sandbox.close());
    const home = await cleanup.tmp('govops-run-');
    await mkdir(join(home, 'm'));
    await writeFile(join(home, 'm', 'lake.yaml'), lakehouse('lake', '/sql/1'));
    const d = runDaemon(
      ['--dir', 'm', '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--grace', '120s', '--retries', '0'],
      { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN },
      home,
    );
    const url = await d.url;
    await until(async () => (await getJson(`${url}/status`)).body.running !== undefined && /applying plan/.test(d.out()), 20_000, 'apply started');
    // the create's dry run (a POST /integrations) is the apply's first call, answered in a minute: the fault, used once,
    // is gone from the list once it arrived (no fixed wait a busy machine could outlast)
    await until(() => sandbox.faults.list().length === 0, 20_000, 'the dry run in flight');
    d.child.kill('SIGINT');
    await until(() => /shutting down/.test(d.out()), 10_000, 'first signal taken');
    d.child.kill('SIGINT');
    // without the second signal taken, the call waits for its minute (cut at the 30 s request timeout)
    const code = await Promise.race([d.exit, new Promise<string>((r) => setTimeout(() => r('still running'), 15_000).unref())]);
    expect(code).toBe(0);
    expect(d.out()).toMatch(/second signal: aborting the calls in flight/);
  }, 60_000);

  it('SIGTERM during start-up (the first fetch hangs): the fetch is stopped and the process exits 0, not by the signal', async () => {
    // A Git server that takes the connection and never answers: the first fetch, part of start-up, hangs.
    const sockets: Socket[] = [];
    const git = createServer((req) => sockets.push(req.socket));
    await new Promise<void>((r) => git.listen(0, '127.0.0.1', r));
    cleanup.add(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => git.close(r));
    });
    const port = (git.address() as AddressInfo).port;
    const home = await cleanup.tmp('govops-run-');
    const d = runDaemon(
      ['--repo', `http://127.0.0.1:${port}/team/manifests.git`, '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--grace', '10s'],
      { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 't' },
      home,
    );
    await d.url; // listening; the first fetch is under way
    await until(() => sockets.length > 0, 20_000, 'git connected');
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
    expect(d.child.signalCode).toBeNull();
    expect(d.out()).toMatch(/govops run stopped during start-up/);
  });

  it('refuses to start without a source, with a clear message', async () => {
    const home = await cleanup.tmp('govops-run-');
    const d = runDaemon(['--listen', '127.0.0.1:0'], { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 't' }, home);
    expect(await d.exit).toBe(1);
    expect(d.out()).toMatch(/no source given/);
  });
});
