#!/usr/bin/env node
// Apply cost as N grows (issue #18): one `apply` creating N integrations (object_store), the sandbox's
// transitions 50 ms, concurrency 32, against a sandbox in its own process (so the CPU time is govops'
// alone). Linear means the time per resource stays flat: target 20k <= 2.2x 10k.
// Run: npm run build && node bench/run.mjs apply-scale     (APPLY_SCALE=1000,5000 to choose sizes; APPLY_POLL_RATE)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceClient } from '../dist/api/client.js';
import { silentLogger } from '../dist/log.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { objectStore } from './flaky-drill.mjs';
import { sandboxProcess } from './sandbox-process.mjs';

const SIZES = (process.env.APPLY_SCALE ?? '1000,5000,10000,20000').split(',').map(Number);
const PER_FILE = 100;
/** APPLY_POLL_RATE: --poll-rate of the applies (default: govops' own, 50/s). */
const POLL_RATE = process.env.APPLY_POLL_RATE ? Number(process.env.APPLY_POLL_RATE) : undefined;
console.log(`apply scale: creates, transition 50 ms, concurrency 32, poll rate ${POLL_RATE ?? 'default'}; ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)}`);
console.log('N       | wall s  | per 1k s | CPU s (govops) | CPU per 1k s | requests | req/int | status | lists | heap MB after');
const rows = [];
for (const n of SIZES) {
  const dir = await mkdtemp(join(tmpdir(), 'govops-scale-'));
  const sb = await sandboxProcess({ transitionMs: 50 });
  const api = new ServiceClient({ baseUrl: sb.url, token: sb.token, logger: silentLogger(), connections: 48 });
  try {
    await mkdir(join(dir, 'm'));
    for (let f = 0; f * PER_FILE < n; f++) {
      const docs = [];
      for (let i = f * PER_FILE; i < Math.min(n, (f + 1) * PER_FILE); i++) docs.push(objectStore(`store-${i}`));
      await writeFile(join(dir, 'm', `f${f}.yaml`), docs.join('---\n'));
    }
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await reconcile(api, {
      source: { root: dir, paths: ['m'] }, plan: { prune: false, allowReplace: false }, apply: true, logger: silentLogger(),
      statePath: join(dir, 'state.json'), env: {}, tuning: { concurrency: 32, timeoutMs: 1_800_000, pollRate: POLL_RATE || undefined },
    });
    const wall = (performance.now() - t0) / 1000;
    const cu = process.cpuUsage(c0);
    const cpu = (cu.user + cu.system) / 1e6;
    if (!res.ok) throw new Error(`apply of ${n} failed: ${res.error}`);
    const counts = await sb.counts();
    // an apply that held or skipped some would look cheap: every one created
    if (counts.writes !== n) throw new Error(`apply of ${n}: ${counts.writes} creates`);
    globalThis.gc?.();
    const heap = process.memoryUsage().heapUsed / 2 ** 20;
    rows.push({ n, wall, cpu });
    console.log(
      `${String(n).padEnd(7)} | ${wall.toFixed(2).padStart(7)} | ${((wall * 1000) / n).toFixed(2).padStart(8)} | ${cpu.toFixed(2).padStart(14)} | ${((cpu * 1000) / n).toFixed(2).padStart(12)} | ${String(counts.total).padStart(8)} | ${(counts.total / n).toFixed(2).padStart(7)} | ${String(counts.status).padStart(6)} | ${String(counts.lists).padStart(5)} | ${heap.toFixed(0).padStart(5)}`,
    );
  } finally {
    await api.close();
    await sb.close();
    await rm(dir, { recursive: true, force: true });
  }
}
const at = (n) => rows.find((r) => r.n === n);
if (at(10000) && at(20000)) {
  const w = at(20000).wall / at(10000).wall;
  const c = at(20000).cpu / at(10000).cpu;
  console.log(`20k / 10k: wall ${w.toFixed(2)}x, CPU ${c.toFixed(2)}x (target <= 2.2x): ${w <= 2.2 ? 'OK' : 'OVER'}`);
}
console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
