/**
 * High availability drills with a real PostgreSQL (started here) and real `govops run` processes against the
 * sandbox, with a short lease (3s / 2s / 0.5s):
 * - two and three replicas: exactly one leads; SIGKILL of the leader in the middle of a 50-resource apply ->
 *   exactly one standby leads within 20s and finishes: 0 duplicates, 0 orphans, the state records exactly the 50;
 * - two and three replicas: SIGSTOP of the leader while it has writes due, for longer than the lease, then
 *   SIGCONT: it steps down by its own clock (renew deadline) and no service write carries its identity
 *   (User-Agent in the sandbox's request log) after it thawed or after the takeover; the new leader finishes;
 * - two and three replicas: a push hook sent to a standby makes the leader fetch (LISTEN/NOTIFY);
 * - lock contention: a CLI apply while another CLI apply, then the daemon, holds the lock fails naming it;
 * - PostgreSQL stopped during a run: probes and /status answer, readiness and the metric report it, no write
 *   is sent that could not be recorded, and the daemon resumes by itself.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hook, objectStore } from '../../bench/flaky-drill.mjs';
import { ServiceClient } from '../../src/api/client.js';
import { githubSignature } from '../../src/daemon/hooks.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { loadState } from '../../src/state/store.js';
import { withStateKey } from '../../src/state/location.js';
import { createRepo } from '../sources/gitrepo.js';
import { GOVOPS_VERSION } from '../../src/cli/version.js';
import { Cleanup, getJson, spawnRun, until, type DaemonProcess } from '../daemon/helpers.js';
import { CLI, runGovops } from '../helpers/cli.js';
import { spawn } from 'node:child_process';
import { postgresPerFile } from '../helpers/postgres.js';

const pg = postgresPerFile();
let sandbox: SandboxHandle;
let api: ServiceClient;
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const LEASE = ['--lease-duration', '3s', '--lease-renew-deadline', '2s', '--lease-retry-period', '500ms'];

interface Replica {
  d: DaemonProcess;
  url: string;
  identity: string;
}

/** Creates answered after `slowCreatesMs` (dry runs too): an apply is still sending creates seconds after it began. */
async function setup(key: string, n: { integrations: number; webhooks: number }, transitionMs = 300, slowCreatesMs = 0): Promise<{ home: string; names: string[]; state: string }> {
  sandbox = await startSandbox({ port: 0, transitionMs, faults: slowCreatesMs ? [{ type: 'latency', method: 'POST', path: '/integrations', latencyMs: slowCreatesMs }] : [] });
  cleanup.add(() => sandbox.close());
  api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, retries: 0 });
  cleanup.add(() => api.close());
  const home = await cleanup.tmp('govops-ha-');
  await mkdir(join(home, 'm'), { recursive: true });
  const names: string[] = [];
  for (let i = 0; i < n.integrations; i++) {
    names.push(`store-${i}`);
    await writeFile(join(home, 'm', `store-${i}.yaml`), objectStore(`store-${i}`));
  }
  for (let i = 0; i < n.webhooks; i++) {
    names.push(`hook-${i}`);
    await writeFile(join(home, 'm', `hook-${i}.yaml`), hook(`hook-${i}`));
  }
  return { home, names, state: withStateKey(pg.url, key) };
}

async function replica(home: string, key: string, identity: string, extra: string[] = [], env: Record<string, string> = {}, source = ['--dir', 'm']): Promise<Replica> {
  const d = spawnRun(
    cleanup,
    [...source, '--workdir', join(home, `work-${identity}`), '--listen', '127.0.0.1:0', '--state-key', key, '--identity', identity, '--interval', '60s', '--resync', '10m', '--grace', '2s',
      '--manual-steps', 'trust', '--retries', '0', ...LEASE, ...extra],
    { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url, ...env }, stopSignal: 'SIGKILL' },
  );
  const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
  return { d, url, identity };
}

const status = async (r: Replica) => (await getJson(`${r.url}/status`)).body;
const role = async (r: Replica): Promise<string | undefined> => (await status(r).catch(() => undefined))?.leader?.role;

async function leaderOf(replicas: Replica[]): Promise<Replica> {
  const found = await until(async () => {
    const roles = await Promise.all(replicas.map(role));
    return roles.filter((x) => x === 'leader').length === 1 ? replicas[roles.indexOf('leader')] : undefined;
  }, 20_000, 'exactly one leader');
  return found!;
}

const writes = () => sandbox.requests().filter((r) => r.method !== 'GET' && !r.query.dryRun);
const liveNames = async (): Promise<string[]> => [...(await api.listIntegrations()).map((i) => String(i.config?.name)), ...(await api.listWebhooks()).map((w) => w.name)].sort();

describe('PostgreSQL state: several replicas of govops run', () => {
  it.each([2, 3])('%i replicas: one leader; SIGKILL mid 50-resource apply -> exactly one standby leads within 20s and finishes, 0 duplicates, 0 orphans', async (n) => {
    const key = `kill-${n}`;
    const { home, names, state } = await setup(key, { integrations: 40, webhooks: 10 }, 300, 200);
    const replicas: Replica[] = [];
    for (const x of 'abc'.slice(0, n)) replicas.push(await replica(home, key, `replica-${x}`, ['--concurrency', '4']));
    const leader = await leaderOf(replicas);
    const standbys = replicas.filter((r) => r !== leader);
    for (const standby of standbys) {
      expect(await role(standby)).toBe('standby');
      const shown = JSON.stringify(await status(standby));
      expect(shown).toContain('"statePath":"postgres 127.0.0.1:');
      expect(shown).not.toContain(pg.password);
      expect(await (await fetch(`${standby.url}/metrics`)).text()).toMatch(/^govops_leader 0$/m);
      expect((await getJson(`${standby.url}/healthz`)).status).toBe(200);
    }
    // in the middle of the apply: some creates sent, not all
    await until(() => writes().length >= 12, 20_000, 'the leader started writing');
    leader.d.child.kill('SIGKILL');
    const killedAt = Date.now();
    const next = await leaderOf(standbys);
    // finished: everything live, an apply done, and every intent left by either leader settled in the state
    const settled = async () => (await loadState(state)).resources.every((r) => r.pending === undefined && r.id !== '');
    await until(async () => ((await liveNames()).length >= names.length && (await status(next)).revision?.lastApplied && (await settled()) ? true : undefined), 20_000, 'the new leader finished');
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    expect(await liveNames()).toEqual([...names].sort()); // each once: no duplicate, nothing else
    const s = await loadState(state);
    expect(s.resources.filter((r) => r.pending !== undefined || r.id === '')).toEqual([]);
    expect(s.resources.map((r) => r.name).sort()).toEqual([...names].sort());
    // every write names its replica; only the killed leader and the new one wrote
    const agents = new Set(writes().map((w) => w.userAgent));
    expect([...agents].sort()).toEqual([leader, next].map((r) => `govops/${GOVOPS_VERSION} (${r.identity})`).sort());
    // exactly one of the standbys was ever elected; the others still stand by
    for (const r of standbys) {
      const m = await (await fetch(`${r.url}/metrics`)).text();
      const elected = r === next ? 1 : 0;
      expect(m).toMatch(new RegExp(`^govops_leader ${elected}$`, 'm'));
      expect(m).toMatch(new RegExp(`^govops_leader_transitions_total\\{to="leader"\\} ${elected}$`, 'm'));
      expect(await role(r)).toBe(elected ? 'leader' : 'standby');
    }
  }, 90_000);

  it.each([2, 3])('%i replicas: SIGSTOP of the leader (a write due) longer than the lease, then SIGCONT: it steps down on its own clock, no write with its identity after it lost the lease', async (n) => {
    const key = `stop-${n}`;
    const { home, names } = await setup(key, { integrations: 30, webhooks: 0 }, 400, 150);
    const replicas: Replica[] = [];
    for (const x of 'abc'.slice(0, n)) replicas.push(await replica(home, key, `stop-${x}`, ['--concurrency', '2']));
    const leader = await leaderOf(replicas);
    const standbys = replicas.filter((r) => r !== leader);
    const mine = () => writes().filter((w) => w.userAgent?.includes(`(${leader.identity})`));
    await until(() => mine().length >= 4, 20_000, 'the leader started writing');
    leader.d.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    const next = await leaderOf(standbys);
    const takeover = (await status(next)).leader.since as string;
    // frozen well past the lease (the new leader's election proves it expired), then thawed while the new leader works
    await new Promise((r) => setTimeout(r, Math.max(0, 5_000 - (Date.now() - stoppedAt))));
    const thawedAt = new Date().toISOString();
    leader.d.child.kill('SIGCONT');
    await until(async () => ((await liveNames()).length >= names.length && (await status(next)).revision?.lastApplied ? true : undefined), 30_000, 'all created');
    await until(async () => ((await role(leader)) === 'standby' ? true : undefined), 10_000, 'the old leader stands by');
    // the old leader's interrupted reconcile has ended (so whatever it would still send has been sent)
    const lines = () => leader.d.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; why?: string });
    await until(() => {
      const ls = lines();
      const down = ls.findIndex((l) => l.msg === 'no longer leader: standing by');
      return down >= 0 && ls.slice(down).some((l) => /^reconcile (failed|finished)/.test(l.msg ?? '')) ? true : undefined;
    }, 10_000, 'the old leader\'s reconcile ended').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; its log: ${lines().map((l) => l.msg).join(' | ')}`);
    });
    await liveNames(); // one more round trip: the sandbox has read every request sent before it
    // it stepped down by its own monotonic clock (renew deadline), not because the database refused it
    expect(lines().find((l) => l.msg === 'no longer leader: standing by')?.why).toMatch(/renew deadline/);
    // a write was due when it was frozen: the apply was not done, the new leader created the rest
    const creates = writes().filter((w) => w.method === 'POST' && w.path === '/integrations');
    expect(creates.filter((w) => w.userAgent?.includes(`(${next.identity})`)).length).toBeGreaterThan(0);
    // nothing after it thawed, nor after the new leader's first write (the sandbox's order: robust to a stall of
    // this test process, which would delay when a write sent before the freeze is logged)
    const firstOfNext = creates.find((w) => w.userAgent?.includes(`(${next.identity})`))!;
    const late = mine().filter((w) => w.time >= thawedAt || w.seq > firstOfNext.seq);
    expect(late, JSON.stringify({ stoppedAt: new Date(stoppedAt).toISOString(), takeover, thawedAt, firstOfNext, log: leader.d.stdout().slice(-4000) })).toEqual([]);
    expect(await liveNames()).toEqual([...names].sort());
    for (const r of standbys.filter((r) => r !== next)) expect(await role(r)).toBe('standby');
  }, 90_000);

  it.each([2, 3])('%i replicas: a push sent to a standby makes the leader fetch (LISTEN/NOTIFY)', async (n) => {
    const key = `hook-${n}`;
    const { home } = await setup(key, { integrations: 0, webhooks: 0 }, 20);
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    await repo.commit({ 'm/first.yaml': objectStore('first') });
    const env = { GOVOPS_GIT_WEBHOOK_SECRET: 'push-secret' };
    // a Git source fetched every 10 minutes: within the test only a push brings a new commit in
    const source = ['--repo', repo.bare, '--branch', 'main', '--path', 'm', '--interval', '10m'];
    const replicas: Replica[] = [];
    for (const x of 'abc'.slice(0, n)) replicas.push(await replica(home, key, `hook-${x}`, [], env, source));
    const leader = await leaderOf(replicas);
    const standby = replicas.find((r) => r !== leader)!;
    await until(async () => ((await status(leader)).revision?.lastApplied ? true : undefined), 20_000, 'first revision applied');
    const sha = await repo.commit({ 'm/late.yaml': objectStore('late') });
    const body = JSON.stringify({ ref: 'refs/heads/main', after: sha });
    const res = await fetch(`${standby.url}/hooks/git`, { method: 'POST', body, headers: { 'x-hub-signature-256': githubSignature('push-secret', body), 'x-github-event': 'push' } });
    expect(res.status).toBe(202);
    await until(async () => ((await status(leader)).revision?.lastApplied === sha ? true : undefined), 15_000, 'the leader applied the pushed commit');
    expect(await liveNames()).toEqual(['first', 'late']);
    const creates = writes().filter((w) => w.method === 'POST' && w.path === '/integrations');
    expect(creates.map((w) => w.userAgent)).toEqual([`govops/${GOVOPS_VERSION} (${leader.identity})`, `govops/${GOVOPS_VERSION} (${leader.identity})`]);
  }, 60_000);

  const OUTAGE_MS = 30_000;
  it('PostgreSQL stopped for 30 s during a run: probes and /status answer, the outage is reported, no write it could not record, recovery by itself', async () => {
    const { home, names, state } = await setup('outage', { integrations: 30, webhooks: 0 }, 300);
    const a = await replica(home, 'outage', 'outage-a', ['--concurrency', '2']);
    await leaderOf([a]);
    await until(() => writes().length >= 4, 20_000, 'the leader started writing');
    pg.stop();
    const stoppedAt = Date.now();
    try {
      await until(async () => ((await status(a)).leader?.database?.up === false ? true : undefined), 10_000, 'the outage reported in /status');
      expect((await getJson(`${a.url}/healthz`)).status).toBe(200);
      const ready = await getJson(`${a.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(JSON.stringify(ready.body)).toContain('PostgreSQL state is unreachable');
      expect(JSON.stringify(ready.body)).not.toContain(pg.password);
      expect(await (await fetch(`${a.url}/metrics`)).text()).toMatch(/^govops_state_database_up 0$/m);
      // down for 30 s (the drill): longer than any lease, the daemon idle on it, so the suite barely feels it
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt))));
    } finally {
      pg.start();
    }
    const restartedAt = Date.now();
    // past the renew deadline (2s) no write at all can leave while the database is down
    const blind = writes().filter((w) => Date.parse(w.time) > stoppedAt + 2_500 && Date.parse(w.time) < restartedAt);
    expect(blind).toEqual([]);
    await until(async () => ((await status(a)).leader?.database?.up === true ? true : undefined), 15_000, 'the database is back');
    await until(async () => ((await liveNames()).length >= names.length && (await status(a)).revision?.lastApplied ? true : undefined), 40_000, 'converged after the outage');
    expect(await liveNames()).toEqual([...names].sort());
    const s = await loadState(state);
    expect(s.resources.filter((r) => r.pending !== undefined || r.id === '')).toEqual([]);
    expect(s.resources.map((r) => r.name).sort()).toEqual([...names].sort());
    expect((await getJson(`${a.url}/readyz`)).status).toBe(200);
  }, 120_000);

  it('lock contention: a CLI apply against a CLI apply, and against the daemon, fails naming the holder (host, pid, command, since)', async () => {
    const { home } = await setup('contend', { integrations: 2, webhooks: 0 }, 20);
    sandbox.setStuckTransitions(['creating']); // the first writer holds the lock while it polls
    const env = { ...process.env, NO_COLOR: '1', GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url, GOVOPS_STATE_KEY: 'contend' };
    const first = spawn(process.execPath, [CLI, 'apply', 'm', '--manual-steps', 'trust', '--timeout', '60s'], { cwd: home, env, stdio: 'ignore' });
    const firstExit = new Promise((r) => first.on('exit', r));
    cleanup.add(async () => {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
      await firstExit;
    });
    await until(() => writes().length >= 1, 20_000, 'the first apply writing');
    const second = await runGovops(['apply', 'm', '--manual-steps', 'trust'], { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url, GOVOPS_STATE_KEY: 'contend' } });
    expect(second.code).not.toBe(0);
    expect(second.stdout + second.stderr).toMatch(new RegExp(`locked by process ${first.pid} on \\S+ \\(govops apply\\) since \\d{4}-`));
    expect(second.stdout + second.stderr).not.toContain(pg.password);
    first.kill('SIGKILL');
    await firstExit;
    // the daemon's apply holds it now (a new resource, stuck in creating while it polls)
    await writeFile(join(home, 'm', 'extra.yaml'), objectStore('extra'));
    sandbox.clearRequests();
    const d = await replica(home, 'contend', 'contend-a');
    await leaderOf([d]);
    let last = '';
    await until(async () => {
      const r = await runGovops(['apply', 'm', '--manual-steps', 'trust'], { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url, GOVOPS_STATE_KEY: 'contend' } });
      last = r.stdout + r.stderr;
      return /locked by process \d+ on \S+ \(govops run\) since \d{4}-/.test(last) ? true : undefined;
    }, 30_000, 'a CLI apply refused while the daemon applies').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; last answer: ${last}; daemon: ${d.d.out().slice(-3000)}`);
    });
  }, 90_000);
});
