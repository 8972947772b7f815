#!/usr/bin/env node
// Failover time of `govops run` replicas on a PostgreSQL state (issue 24; target <= 20 s with the default lease
// 15 s / 10 s / 2 s): two replicas (the built CLI) against a sandbox, a throw-away PostgreSQL 15 (bench/postgres.mjs);
// K times: SIGKILL the leader, measure, start a replacement replica (as a Deployment would), wait until it stands by.
//
// Measured from the SIGKILL (all on this machine's clock):
//   elected  - the moment the surviving replica became leader (its /status `leader.since`): the failover time;
//   first request - the new leader's first service request after its election (its identity in the sandbox's
//                   request log: it reconciles the last good revision as soon as it is elected).
// A kill lands at a random moment of the leader's renewal cycle (the replicas run unsynchronised), so the
// election comes lease duration - (time since the last renewal) + up to one retry period after it.
//
// Run: npm run build && node bench/run.mjs failover
//   FAILOVER_KILLS (default 10), FAILOVER_LEASE=duration,renew,retry (default: govops' default, 15s,10s,2s;
//   a shorter lease only for a quick check that the bench works)
import './no-extra-ca.mjs';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';
import { objectStore } from './flaky-drill.mjs';
import { startPostgres } from './postgres.mjs';

const KILLS = Number(process.env.FAILOVER_KILLS ?? 10);
const LEASE = process.env.FAILOVER_LEASE?.split(',');
// the `govops` command as users run it (package.json bin: dist/cli/govops.cjs, running dist/cli/main.cjs from its compiled code)
const CLI = fileURLToPath(new URL('../dist/cli/govops.cjs', import.meta.url));
const KEY = 'failover';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(check, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}
const status = async (r) => (await (await fetch(`${r.url}/status`)).json()).leader;

const home = await mkdtemp(join(tmpdir(), 'govops-failover-'));
const pg = await startPostgres();
const sandbox = await startSandbox({ port: 0, transitionMs: 20 });
const replicas = new Set();
let serial = 0;

/** A `govops run` replica; resolves once it listens. */
async function replica() {
  const identity = `failover-${++serial}`;
  const lease = LEASE ? ['--lease-duration', LEASE[0], '--lease-renew-deadline', LEASE[1], '--lease-retry-period', LEASE[2]] : [];
  const child = spawn(
    process.execPath,
    [CLI, 'run', '--dir', 'm', '--workdir', join(home, `work-${identity}`), '--listen', '127.0.0.1:0', '--state-key', KEY, '--identity', identity,
      '--interval', '60s', '--resync', '10m', '--manual-steps', 'trust', ...lease],
    { cwd: home, env: { ...process.env, NO_COLOR: '1', GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const r = { identity, child, url: '', exited: false };
  child.on('exit', () => (r.exited = true));
  replicas.add(r);
  r.url = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d.toString();
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*govops daemon listening/.exec(out);
      if (m) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${identity} exited ${code}: ${out.slice(-2000)}`)));
  });
  return r;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (ms) => (ms === undefined ? '-' : (ms / 1000).toFixed(2));
try {
  await mkdir(join(home, 'm'));
  for (let i = 0; i < 5; i++) await writeFile(join(home, 'm', `store-${i}.yaml`), objectStore(`store-${i}`));
  console.log(`failover: ${KILLS} SIGKILLs of the leader of 2 replicas, lease ${LEASE ? LEASE.join(' / ') : '15s / 10s / 2s (default)'}; ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)}`);
  await replica();
  await replica();
  const leaderAmong = async (rs) => {
    const st = await Promise.all(rs.map((r) => status(r).catch(() => undefined)));
    const leading = rs.filter((_, i) => st[i]?.role === 'leader');
    return leading.length === 1 ? { r: leading[0], st: st[rs.indexOf(leading[0])] } : undefined;
  };
  let { r: leader } = await until(() => leaderAmong([...replicas]), 60_000, 'a first leader');
  await until(async () => (await (await fetch(`${leader.url}/status`)).json()).revision?.lastApplied, 60_000, 'the first apply');
  const rows = [];
  console.log('kill | elected s | first request s | new leader');
  for (let k = 1; k <= KILLS; k++) {
    const others = [...replicas].filter((r) => r !== leader);
    // every other replica is up and stands by (it has read the lease)
    await until(async () => (await Promise.all(others.map(status))).every((x) => x.role === 'standby' && x.leader?.identity === leader.identity), 60_000, 'standbys ready');
    // land the kill at a random moment of the renewal cycle
    await sleep(Math.random() * 2_000);
    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    const next = await until(() => leaderAmong(others), 60_000, 'a new leader');
    const elected = Date.parse(next.st.since) - killedAt;
    const first = await until(
      async () => sandbox.requests().find((q) => Date.parse(q.time) >= killedAt + elected && q.userAgent?.endsWith(`(${next.r.identity})`)),
      30_000,
      'the new leader\'s first request',
    ).catch(() => undefined);
    const row = { elected, first: first ? Date.parse(first.time) - killedAt : undefined };
    rows.push(row);
    console.log(`${String(k).padStart(4)} | ${s(row.elected).padStart(9)} | ${s(row.first).padStart(14)} | ${next.r.identity}`);
    replicas.delete(leader);
    leader = next.r;
    await replica();
  }
  const el = rows.map((r) => r.elected);
  const fr = rows.map((r) => r.first).filter((x) => x !== undefined);
  console.log(`failover time (SIGKILL -> the new leader elected), ${rows.length} kills: median ${s(median(el))} s, max ${s(Math.max(...el))} s (target <= 20 s): ${Math.max(...el) <= 20_000 ? 'OK' : 'OVER'}`);
  if (fr.length) console.log(`SIGKILL -> the new leader's first service request: median ${s(median(fr))} s, max ${s(Math.max(...fr))} s`);
  console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  for (const r of replicas) if (!r.exited) r.child.kill('SIGKILL');
  await sandbox.close();
  pg.destroy();
  await rm(home, { recursive: true, force: true });
}
