#!/usr/bin/env node
// Converge benchmark (issue #18): `apply` of N new integrations against the sandbox whose transitions take
// T ms, at concurrency C, compared with an ideal client measured in the same run on a fresh sandbox.
//
// The ideal client (issue #26) is what a hand-written client of this service could do at best, with govops'
// own HTTP library (one undici Pool) and nothing else: C slots for the dry run and the create, a slot freed as
// soon as the create is accepted, then it waits exactly the known transition time T and polls that
// integration's status every 10 ms until it is settled. No validation, no logging, no state, no plan. (Until
// issue #26 the ideal read each transition's end from the sandbox's memory and sent one status request at that
// moment, which no client can do.)
//
// govops is measured cold (a state without learned transition times: the very first apply) and warm (the
// state keeps what the apply before it learned: every later apply; each warm run starts from the last). The
// process is warmed up first (an untimed apply and ideal run of 200), so cold differs from warm by the state only.
// The ideal client is bench/ideal-client.mjs. Every row but the last two is one reconcile inside this process
// (modules loaded, the process started). With C=32 also warm with status requests only (never a list) and a high
// rate cap, for comparison; and the whole process (issue #26's first row is one): `govops apply` as a user runs it
// (the built CLI in its own process: start-up and module loading included) against the ideal client in its own
// process, warm state, alternating CONVERGE_ROUNDS times (the settle lag is not seen from here). Printed: wall time
// of the whole `apply` (load, plan, apply) and of the apply phase (first dry run to last integration seen
// settled), of the write phase (first dry run to the last create's arrival, from the sandbox's log for both
// clients: what the last transition and the settle lag come after), the ratio to the ideal, requests (status polls, lists, per integration) and the settle lag
// (from the moment the sandbox ended a transition to the moment govops reported the integration).
//
// Run: npm run build && node bench/run.mjs converge   (CONVERGE=quick: only N=200; CONVERGE_N, CONVERGE_T,
// CONVERGE_C: comma lists of sizes, transitions and concurrencies; CONVERGE_ROUNDS: alternations, default 3).
// Issue #26 at scale: CONVERGE_N=5000,10000,20000 CONVERGE_T=50 CONVERGE_C=32 (prints linearity in N).
import './no-extra-ca.mjs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '../dist/api/client.js';
import { silentLogger } from '../dist/log.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { startSandbox } from '../dist/sandbox/index.js';
import { loadState, saveState } from '../dist/state/store.js';
import { objectStore } from './flaky-drill.mjs';
import { idealClient } from './ideal-client.mjs';

// the `govops` command as package.json's bin names it (what a user runs)
const CLI = fileURLToPath(new URL('../dist/cli/govops.cjs', import.meta.url));
const IDEAL = fileURLToPath(new URL('./ideal-client.mjs', import.meta.url));

const quick = process.env.CONVERGE === 'quick';
const SIZES = process.env.CONVERGE_N ? process.env.CONVERGE_N.split(',').map(Number) : quick ? [200] : [200, 1000];
const TRANSITIONS = process.env.CONVERGE_T ? process.env.CONVERGE_T.split(',').map(Number) : [200, 2000];
const CONCURRENCY = process.env.CONVERGE_C ? process.env.CONVERGE_C.split(',').map(Number) : [8, 32];
const PER_FILE = 50;

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');

/** A sandbox that remembers when each transition ended (the truth the lag is measured against). */
async function sandboxWithClock(transitionMs) {
  const sandbox = await startSandbox({ port: 0, transitionMs });
  const ended = new Map();
  const store = sandbox.integrations;
  const complete = store.complete.bind(store);
  store.complete = (id, force) => {
    const item = store.get(id);
    if (item?.pendingUntil !== undefined && !ended.has(String(id))) ended.set(String(id), Date.now());
    complete(id, force);
  };
  return { sandbox, ended };
}

/**
 * The write phase, read from the sandbox's request log the same way for both clients: from the first POST (a dry
 * run) to the arrival of the last create. What follows it is the last transition and the settle lag.
 */
function writeSpan(sandbox) {
  const posts = sandbox.requests().filter((r) => r.method === 'POST' && r.path === '/integrations');
  const creates = posts.filter((r) => r.query.dryRun !== 'true');
  return posts.length && creates.length ? Date.parse(creates.at(-1).time) - Date.parse(posts[0].time) : NaN;
}

function counts(sandbox) {
  const reqs = sandbox.requests();
  const c = { total: reqs.length, status: 0, lists: 0, dry: 0, create: 0 };
  for (const r of reqs) {
    if (r.method === 'GET' && r.path.endsWith('/status')) c.status++;
    else if (r.method === 'GET' && r.path === '/integrations') c.lists++;
    else if (r.method === 'POST' && r.path === '/integrations') r.query.dryRun === 'true' ? c.dry++ : c.create++;
  }
  return c;
}

/** The ideal client in this process, against a fresh sandbox (bench/ideal-client.mjs). */
async function ideal(n, transitionMs, concurrency) {
  const { sandbox, ended } = await sandboxWithClock(transitionMs);
  const t0 = performance.now();
  const start = Date.now();
  const { seen, doneAt } = await idealClient({ url: sandbox.url, token: sandbox.adminToken, n, transitionMs, concurrency });
  const wall = doneAt - t0;
  const apply = Math.max(...seen.map((s) => s.at)) - start;
  const lags = seen.map((s) => s.at - ended.get(s.id));
  const c = counts(sandbox);
  const writes = writeSpan(sandbox);
  await sandbox.close();
  return { wall, apply, writes, lags, c };
}

/** Wait for a child process to end; its stderr on a failure. */
function ended(child, what) {
  let err = '';
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => (code === 0 ? resolve(out) : reject(new Error(`${what} ended ${signal ?? `with ${code}`}: ${err.slice(-800)}`))));
  });
}

/** The ideal client as a process of its own (node, undici, nothing else), timed from its start to its end. */
async function idealProcess(n, transitionMs, concurrency) {
  const { sandbox, ended: endedAt } = await sandboxWithClock(transitionMs);
  try {
    const args = JSON.stringify({ url: sandbox.url, token: sandbox.adminToken, n, transitionMs, concurrency });
    const t0 = performance.now();
    const out = await ended(spawn(process.execPath, [IDEAL, args], { stdio: ['ignore', 'pipe', 'pipe'] }), 'the ideal client');
    const wall = performance.now() - t0;
    const { seen } = JSON.parse(out);
    if (seen.length !== n) throw new Error(`the ideal client saw ${seen.length} of ${n} settled`);
    return { wall, apply: NaN, writes: writeSpan(sandbox), lags: seen.map((s) => s.at - endedAt.get(s.id)), c: counts(sandbox) };
  } finally {
    await sandbox.close();
  }
}

/** `govops apply` as a user runs it (the built CLI, a process of its own), its state holding `transitions`. */
async function govopsProcess(dir, n, transitionMs, concurrency, transitions) {
  const { sandbox } = await sandboxWithClock(transitionMs);
  try {
    const statePath = join(dir, `state-${Math.random().toString(36).slice(2)}.json`);
    if (transitions) {
      const s = await loadState(statePath);
      s.transitions = transitions;
      await saveState(statePath, s);
    }
    const env = { ...process.env, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_LOG_LEVEL: 'error', NO_COLOR: '1' };
    const t0 = performance.now();
    await ended(spawn(process.execPath, [CLI, 'apply', 'm', '--state', statePath, '--concurrency', String(concurrency), '--timeout', '10m'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] }), 'govops apply');
    const wall = performance.now() - t0;
    const c = counts(sandbox);
    if (c.create !== n) throw new Error(`govops apply: ${c.create} creates, expected ${n}`);
    return { wall, apply: NaN, writes: writeSpan(sandbox), lags: [], c, learned: (await loadState(statePath)).transitions };
  } finally {
    await sandbox.close();
  }
}

async function manifestsDir(n) {
  const dir = await mkdtemp(join(tmpdir(), 'govops-converge-'));
  await mkdir(join(dir, 'm'));
  for (let f = 0; f * PER_FILE < n; f++) {
    const docs = [];
    for (let i = f * PER_FILE; i < Math.min(n, (f + 1) * PER_FILE); i++) docs.push(objectStore(`store-${i}`));
    await writeFile(join(dir, 'm', `f${f}.yaml`), docs.join('---\n'));
  }
  return dir;
}

/** One govops apply of the N manifests against a fresh sandbox; `transitions`: what the state knows already. */
async function govops(dir, n, transitionMs, concurrency, transitions, extra = {}) {
  const { sandbox, ended } = await sandboxWithClock(transitionMs);
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), connections: concurrency + 16 });
  const statePath = join(dir, `state-${Math.random().toString(36).slice(2)}.json`);
  if (transitions) {
    const s = await loadState(statePath);
    s.transitions = transitions;
    await saveState(statePath, s);
  }
  const seen = [];
  const t0 = performance.now();
  const res = await reconcile(api, {
    source: { root: dir, paths: ['m'] }, plan: { prune: false, allowReplace: false }, apply: true, logger: silentLogger(), statePath, env: {},
    // `extra`: more apply tuning (poll rate, list threshold)
    tuning: { concurrency, timeoutMs: 600_000, ...extra },
    onOutcome: (o) => seen.push({ id: o.liveId, at: Date.now(), ok: o.result === 'ok' }),
  });
  const wall = performance.now() - t0;
  if (!res.ok) throw new Error(`apply failed: ${res.error}`);
  // an apply that held or skipped some (a manual step, a refusal) would look fast: all N created and seen
  const made = counts(sandbox).create;
  if (made !== n || seen.length !== n) throw new Error(`govops created ${made} and reported ${seen.length} of ${n}`);
  const firstWrite = Date.parse(sandbox.requests().find((r) => r.method === 'POST')?.time ?? new Date().toISOString());
  const apply = Math.max(...seen.map((s) => s.at)) - firstWrite;
  const lags = seen.filter((s) => s.ok && ended.has(s.id)).map((s) => s.at - ended.get(s.id));
  const c = counts(sandbox);
  const writes = writeSpan(sandbox);
  const learned = (await loadState(statePath)).transitions;
  await api.close();
  await sandbox.close();
  return { wall, apply, writes, lags, c, learned, polls: res.polls };
}

const ROUNDS = Number(process.env.CONVERGE_ROUNDS ?? 3);
// One untimed apply and one untimed ideal run first: the first reconcile of a process also pays V8's warm-up of
// govops, undici and the sandbox (0.2 s of a 0.57 s apply of 200 at T 200 ms, against 0.37 s for the same cold
// apply run again), so "cold" compared the first apply of the process with warm ones, not a state without learned
// transition times with one that has them.
const WARM_UP = 200;
{
  const dir = await manifestsDir(WARM_UP);
  try {
    await govops(dir, WARM_UP, 20, 8, undefined);
    await ideal(WARM_UP, 20, 8);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
console.log(`converge: ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)}; ideal and warm runs alternate ${ROUNDS} times, medians shown (after an untimed warm-up of ${WARM_UP})`);
console.log('run                                | wall s  | apply s | writes s | ratio | ratio(apply) | ratio(writes) | status/int | lists | req/int | lag p50 / p95 / max ms | lag p50 % of T');
const median = (xs) => pct(xs, 50);
const rows = [];
/** The whole-process rows (govops apply and the ideal client each a process of its own). */
const processRows = [];
const print = (label, n, t, runs, ideal) => {
  const wall = median(runs.map((r) => r.wall));
  const apply = median(runs.map((r) => r.apply));
  const iw = ideal ? median(ideal.map((r) => r.wall)) : wall;
  const ia = ideal ? median(ideal.map((r) => r.apply)) : apply;
  const writes = median(runs.map((r) => r.writes));
  const iwr = ideal ? median(ideal.map((r) => r.writes)) : writes;
  const r = runs[runs.length - 1];
  const lags = runs.flatMap((x) => x.lags);
  const reqPerInt = (r.c.total - (ideal ? 2 : 0)) / n;
  console.log(
    `${label.padEnd(34)} | ${f2(wall / 1000).padStart(7)} | ${f2(apply / 1000).padStart(7)} | ${f2(writes / 1000).padStart(8)} | ${f2(wall / iw).padStart(5)} | ${f2(apply / ia).padStart(12)} | ${f2(writes / iwr).padStart(13)} | ${f2(r.c.status / n).padStart(10)} | ${String(r.c.lists).padStart(5)} | ${f2(reqPerInt).padStart(7)} | ${`${f0(pct(lags, 50))} / ${f0(pct(lags, 95))} / ${f0(Math.max(...lags))}`.padStart(22)} | ${f0((100 * pct(lags, 50)) / t).padStart(4)}%`,
  );
  return { label, n, wall, idealWall: iw, ratio: wall / iw, applyRatio: apply / ia, writesRatio: writes / iwr, statusPerInt: r.c.status / n, lists: r.c.lists, reqPerInt, lagP50: pct(lags, 50), t };
};
for (const n of SIZES) {
  const dir = await manifestsDir(n);
  try {
    for (const t of TRANSITIONS) {
      for (const c of CONCURRENCY) {
        const cold = await govops(dir, n, t, c, undefined);
        const ideals = [];
        const warms = [];
        // every apply starts from what the one before it learned (as successive applies do)
        let learned = cold.learned;
        for (let i = 0; i < ROUNDS; i++) {
          ideals.push(await ideal(n, t, c));
          const warm = await govops(dir, n, t, c, learned);
          warms.push(warm);
          learned = warm.learned;
        }
        const tag = `N=${n} T=${t} C=${c}`;
        print(`${tag} ideal`, n, t, ideals);
        rows.push(print(`${tag} govops warm`, n, t, warms, ideals));
        print(`${tag} govops cold (first apply)`, n, t, [cold], ideals);
        if (c === 32) {
          print(`${tag} warm, status only (rate 1000/s)`, n, t, [await govops(dir, n, t, c, learned, { pollListThreshold: Infinity, pollRate: 1000 })], ideals);
          // The whole process (issue #26's first row): `govops apply` as a user runs it, the process's start and
          // module loading included, against the ideal client as a process of its own; warm state, alternating.
          const idealProcs = [];
          const govopsProcs = [];
          for (let i = 0; i < ROUNDS; i++) {
            idealProcs.push(await idealProcess(n, t, c));
            govopsProcs.push(await govopsProcess(dir, n, t, c, learned));
          }
          print(`${tag} ideal, own process`, n, t, idealProcs);
          processRows.push(print(`${tag} govops apply, own process`, n, t, govopsProcs, idealProcs));
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
console.log(`\nwarm runs: ratio to ideal (whole apply) max ${f2(Math.max(...rows.map((r) => r.ratio)))}, apply phase max ${f2(Math.max(...rows.map((r) => r.applyRatio)))}, write phase max ${f2(Math.max(...rows.map((r) => r.writesRatio)))}; status polls per integration mean ${f2(mean(rows.map((r) => r.statusPerInt)))}; requests per integration mean ${f2(mean(rows.map((r) => r.reqPerInt)))}; lag p50 max ${f0(Math.max(...rows.map((r) => (100 * r.lagP50) / r.t)))}% of T`);
if (processRows.length) console.log(`whole process (govops apply / ideal client, each its own process, warm state): ${processRows.map((r) => `${r.label.replace(' govops apply, own process', '')} ${f2(r.ratio)}x`).join('; ')}`);
// linearity in N (issue #26: 5,000-20,000 creates, T=50 ms, C=32, <= 1.3x the ideal, linear in N): per T and C,
// the time per 1,000 integrations of the largest N against the smallest (1.00 = linear)
for (const t of TRANSITIONS) {
  for (const c of CONCURRENCY) {
    const rs = rows.filter((r) => r.t === t && r.label.includes(` C=${c} `)).sort((a, b) => a.n - b.n);
    if (rs.length < 2) continue;
    const per = (r, w) => (w * 1000) / r.n;
    const [lo, hi] = [rs[0], rs.at(-1)];
    console.log(`RATIO T=${t} C=${c}: govops warm / ideal ${rs.map((r) => `N=${r.n} ${f2(r.ratio)}x`).join(', ')} (target <= 1.3x); linearity (s per 1k at N=${hi.n} / at N=${lo.n}): govops ${f2(per(hi, hi.wall) / per(lo, lo.wall))}, ideal ${f2(per(hi, hi.idealWall) / per(lo, lo.idealWall))} (1.00 = linear)`);
  }
}
console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
