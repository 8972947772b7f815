#!/usr/bin/env node
// Daemon memory at 10,000 (issue #18): `govops run --dir` (the built CLI, its own process) watching 10,000
// integration manifests that are in sync with the sandbox (another process), through the first reconcile
// and 20 resyncs. RSS read from /proc after each; heap from the daemon's own /metrics. Compared with a bare
// process measured in the same run, holding what the daemon must hold: the parsed manifests and the parsed
// live lists (GET /integrations, GET /webhooks). Target: <= 1.3x the bare process, flat across resyncs.
// Then the same daemon creating the 10,000 itself (an empty service at start).
// MEMORY_SPACES=1: the committed size of each V8 heap space too.
// MEMORY_SNAPSHOTS=dir: heap snapshots of the daemon after the first reconcile and after the resyncs.
// Run: npm run build && node bench/run.mjs daemon-memory     (MEMORY_N=2000 for a quick run)
import './no-extra-ca.mjs';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '../dist/api/client.js';
import { silentLogger } from '../dist/log.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { ENV, TRUST_MANUAL_STEPS, writeIntegrations } from './fixtures.mjs';
import { sandboxProcess } from './sandbox-process.mjs';

const N = Number(process.env.MEMORY_N ?? 10_000);
const RESYNCS = Number(process.env.MEMORY_RESYNCS ?? 20);
const SNAPSHOTS = process.env.MEMORY_SNAPSHOTS;
/** MEMORY_SPACES=1: V8's committed size per heap space after each reconcile (which space grows). */
const SPACES = process.env.MEMORY_SPACES === '1';
// the `govops` command as users run it (package.json bin: dist/cli/govops.cjs, running dist/cli/main.cjs from its compiled code)
const CLI = fileURLToPath(new URL('../dist/cli/govops.cjs', import.meta.url));
const JSYAML = fileURLToPath(new URL('../node_modules/js-yaml/dist/js-yaml.mjs', import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes) => (bytes / 2 ** 20).toFixed(0);
const proc = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const rssOf = (pid) => proc(pid, 'VmRSS');
/** CPU seconds (user + system) a process used so far, from /proc/<pid>/stat. */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
/** How long the daemon idles between resyncs here (its RSS is read at the end of each, and again just before the next). */
const IDLE_MS = 2500;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// What the daemon must hold, in a bare process: the parsed manifests and the parsed live lists.
const BARE = `
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from ${JSON.stringify(JSYAML)};
const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.yaml') ? [join(d, e.name)] : []));
const held = { manifests: [], live: [] };
for (const f of walk(process.argv[1])) for (const doc of yaml.loadAll(readFileSync(f, 'utf8'))) if (doc) held.manifests.push(doc);
const get = async (p, auth) => JSON.parse(await (await fetch(process.env.GOVOPS_URL + p, { headers: { authorization: auth } })).text());
held.live.push(await get('/integrations', process.env.GOVOPS_TOKEN), await get('/webhooks', 'Bearer ' + process.env.GOVOPS_TOKEN));
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 300));
const rss = Number(/VmRSS:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
process.stdout.write(JSON.stringify({ rss, heap: process.memoryUsage().heapUsed, manifests: held.manifests.length, live: held.live[0].length }));
`;

async function bare(env, dir) {
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', BARE, dir], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out);
}

async function status(url) {
  try {
    const res = await fetch(`${url}/status`);
    return await res.json();
  } catch {
    return undefined;
  }
}

async function heapUsed(url) {
  return (await memory(url)).used;
}

/** The daemon's own view (prom-client default metrics): heap used and committed, memory outside the heap. */
async function memory(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const metric = (name) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1]);
  // committed per V8 space (new, old, code, large_object...): which one grows
  const spaces = [...text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\} (\S+)/gm)].map(([, s, v]) => `${s} ${mb(Number(v))}`).join(', ');
  return { used: metric('nodejs_heap_size_used_bytes'), total: metric('nodejs_heap_size_total_bytes'), external: metric('nodejs_external_memory_bytes'), spaces };
}

/** The daemons started, stopped in the end whatever happened (a failed run left one resyncing for ever). */
const daemons = new Set();

/** Start `govops run --dir`; resolves once its first reconcile finished. */
async function daemon(env, dir, state, resync) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['--heapsnapshot-signal=SIGUSR2', CLI, 'run', '--dir', dir, '--state', state, '--listen', `127.0.0.1:${port}`, '--resync', resync, '--interval', '1h', '--concurrency', '32'];
  const child = spawn(process.execPath, args, { env: { ...env, GOVOPS_LOG_LEVEL: 'warn' }, cwd: SNAPSHOTS ?? tmpdir(), stdio: ['ignore', 'ignore', 'inherit'] });
  daemons.add(child);
  for (;;) {
    const s = await status(url);
    if (s?.lastReconcile?.finishedAt) return { child, url, first: s.lastReconcile };
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`daemon exited ${child.signalCode ?? child.exitCode}`);
    await sleep(200);
  }
}

async function snapshot(child, name) {
  if (!SNAPSHOTS) return;
  const before = new Set(await readdir(SNAPSHOTS));
  child.kill('SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const made = (await readdir(SNAPSHOTS)).filter((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (made.length) {
      await sleep(2000); // written in one go; give it time to finish
      await rename(join(SNAPSHOTS, made[0]), join(SNAPSHOTS, `${name}.heapsnapshot`));
      console.log(`  heap snapshot: ${join(SNAPSHOTS, `${name}.heapsnapshot`)}`);
      return;
    }
  }
}

async function stop(child) {
  daemons.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const dir = await mkdtemp(join(tmpdir(), 'govops-memory-'));
const sb = await sandboxProcess({ transitionMs: 1 });
try {
  const m = join(dir, 'm');
  await writeIntegrations(m, N);
  const statePath = join(dir, 'state.json');
  const api = new ServiceClient({ baseUrl: sb.url, token: sb.token, logger: silentLogger(), connections: 48 });
  const applied = await reconcile(api, { source: { root: m, paths: ['.'] }, plan: { prune: false, allowReplace: false, manualSteps: 'trust' }, apply: true, logger: silentLogger(), statePath, env: ENV, tuning: { concurrency: 32, timeoutMs: 1_800_000 } });
  await api.close();
  if (!applied.ok) throw new Error(`setup apply failed: ${applied.error}`);
  const env = { ...process.env, ...ENV, ...TRUST_MANUAL_STEPS, GOVOPS_URL: sb.url, GOVOPS_TOKEN: sb.token, NO_COLOR: '1' };

  const b = await bare(env, m);
  if (b.live !== N) throw new Error(`the setup is not in sync: ${b.live} of ${N} integrations live`);
  console.log(`bare process holding ${b.manifests} parsed manifests and the live lists (${b.live} integrations): RSS ${mb(b.rss)} MB, heap ${mb(b.heap)} MB`);

  console.log(`\ndaemon, ${N} integrations in sync, ${RESYNCS} resyncs:`);
  const d = await daemon(env, m, statePath, `${IDLE_MS}ms`);
  const rows = [];
  const sample = async (label) => {
    const rss = rssOf(d.child.pid);
    await sleep(IDLE_MS - 500);
    const idle = rssOf(d.child.pid);
    const mem = await memory(d.url);
    rows.push({ label, rss, idle, heap: mem.used });
    console.log(`  ${label.padEnd(26)} RSS at its end ${mb(rss).padStart(4)} MB (${(rss / b.rss).toFixed(2)}x bare), idle ${mb(idle).padStart(4)} MB (${(idle / b.rss).toFixed(2)}x)  heap used ${mb(mem.used).padStart(3)} / committed ${mb(mem.total).padStart(3)} MB, external ${mb(mem.external).padStart(3)} MB${SPACES ? `\n      committed by space (MB): ${mem.spaces}` : ''}`);
  };
  await sample(`first reconcile (${d.first.result})`);
  await snapshot(d.child, 'after-first');
  let last = d.first.finishedAt;
  const durations = [];
  for (let i = 1; i <= RESYNCS; i++) {
    for (;;) {
      const s = await status(d.url);
      if (s?.lastReconcile?.finishedAt && s.lastReconcile.finishedAt !== last && !s.running) {
        last = s.lastReconcile.finishedAt;
        durations.push(s.lastReconcile.durationSec);
        if (s.lastReconcile.result !== 'in-sync') throw new Error(`resync ${i}: ${s.lastReconcile.result}`);
        break;
      }
      // a daemon that ended answers no /status: an error, not a wait for ever
      if (d.child.exitCode !== null || d.child.signalCode !== null) throw new Error(`resync ${i}: the daemon ended (${d.child.signalCode ?? `exit ${d.child.exitCode}`})`);
      await sleep(100);
    }
    await sample(`resync ${i}`);
  }
  await snapshot(d.child, `after-${RESYNCS}-resyncs`);
  const peak = proc(d.child.pid, 'VmHWM');
  const cpu = cpuOf(d.child.pid);
  await stop(d.child);
  const resyncRss = rows.slice(1).map((r) => r.rss);
  const idleRss = rows.slice(1).map((r) => r.idle);
  console.log(`  resyncs: RSS at their end ${mb(Math.min(...resyncRss))}-${mb(Math.max(...resyncRss))} MB (max ${(Math.max(...resyncRss) / b.rss).toFixed(2)}x bare), idle ${mb(Math.min(...idleRss))}-${mb(Math.max(...idleRss))} MB (max ${(Math.max(...idleRss) / b.rss).toFixed(2)}x; target <= 1.3x, flat); peak (VmHWM) ${mb(peak)} MB; a resync took ${Math.min(...durations).toFixed(2)}-${Math.max(...durations).toFixed(2)} s; daemon CPU ${cpu.toFixed(1)} s`);
  const half = Math.floor(resyncRss.length / 2);
  const firstHalf = Math.max(...resyncRss.slice(0, half));
  const secondHalf = Math.max(...resyncRss.slice(half));
  console.log(`  growth: max of the last ${resyncRss.length - half} resyncs vs the first ${half}: ${((secondHalf - firstHalf) / 2 ** 20).toFixed(1)} MB`);
  const medianOf = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`RATIO daemon RSS / bare process at ${N} (issue #26, target <= 1.3x, flat): idle median ${(medianOf(idleRss) / b.rss).toFixed(2)}x, idle max ${(Math.max(...idleRss) / b.rss).toFixed(2)}x, at a resync's end median ${(medianOf(resyncRss) / b.rss).toFixed(2)}x (bare ${mb(b.rss)} MB)`);

  // the daemon creating them itself
  const sb2 = await sandboxProcess({ transitionMs: 1 });
  try {
    const env2 = { ...env, GOVOPS_URL: sb2.url, GOVOPS_TOKEN: sb2.token };
    const d2 = await daemon(env2, m, join(dir, 'state-2.json'), '1h');
    const rss = rssOf(d2.child.pid);
    await sleep(IDLE_MS);
    const idle = rssOf(d2.child.pid);
    const cpu2 = cpuOf(d2.child.pid);
    console.log(`\ndaemon creating the ${N} itself (first reconcile ${d2.first.result} in ${d2.first.durationSec.toFixed(1)} s): RSS at its end ${mb(rss)} MB (${(rss / b.rss).toFixed(2)}x bare), idle ${mb(idle)} MB (${(idle / b.rss).toFixed(2)}x), peak ${mb(proc(d2.child.pid, 'VmHWM'))} MB, heap used ${mb(await heapUsed(d2.url))} MB, CPU ${cpu2.toFixed(1)} s`);
    await stop(d2.child);
  } finally {
    await sb2.close();
  }
  console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  for (const child of daemons) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await sb.close();
  await rm(dir, { recursive: true, force: true });
}
