#!/usr/bin/env node
// Converge with a PostgreSQL state vs the state file (issue 24; target <= 1.1x): one `apply` creating N
// integrations (object_store) against a fresh sandbox in its own process (transition T ms, concurrency C),
// once with the state file and once with a PostgreSQL state (a throw-away PostgreSQL 15 on 127.0.0.1 with fsync
// on, started here: bench/postgres.mjs), in the same process. Each apply records every intent and outcome in
// its state (one fsync'd journal line, or one transaction, per change). The order alternates over rounds.
//
// Run: npm run build && node bench/run.mjs state-converge
//   STATE_CONVERGE_N (default 1000), STATE_CONVERGE_T (default 200), STATE_CONVERGE_C (default 32),
//   STATE_CONVERGE_ROUNDS (default 1: one run of each; more alternate file/PostgreSQL and print medians)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceClient } from '../dist/api/client.js';
import { silentLogger } from '../dist/log.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { loadState } from '../dist/state/store.js';
import { closePgPools } from '../dist/state/pg/backend.js';
import { objectStore } from './flaky-drill.mjs';
import { startPostgres } from './postgres.mjs';
import { sandboxProcess } from './sandbox-process.mjs';

const N = Number(process.env.STATE_CONVERGE_N ?? 1000);
const T = Number(process.env.STATE_CONVERGE_T ?? 200);
const C = Number(process.env.STATE_CONVERGE_C ?? 32);
const ROUNDS = Number(process.env.STATE_CONVERGE_ROUNDS ?? 1);
const PER_FILE = 100;

/** One apply of the n manifests under dir/m against a fresh sandbox, its state at `statePath`: wall ms. */
async function apply(dir, statePath, n = N) {
  const sb = await sandboxProcess({ transitionMs: T });
  const api = new ServiceClient({ baseUrl: sb.url, token: sb.token, logger: silentLogger(), connections: C + 16 });
  try {
    const t0 = performance.now();
    const res = await reconcile(api, {
      source: { root: dir, paths: ['m'] }, plan: { prune: false, allowReplace: false }, apply: true, logger: silentLogger(), statePath, env: {},
      tuning: { concurrency: C, timeoutMs: 1_800_000 },
    });
    const wall = performance.now() - t0;
    if (!res.ok) throw new Error(`apply failed (${statePath.startsWith('postgres') ? 'PostgreSQL' : 'file'}): ${res.error}`);
    const recorded = (await loadState(statePath)).resources.filter((r) => r.id && r.pending === undefined).length;
    if (recorded !== n) throw new Error(`the state records ${recorded} resources, expected ${n}`);
    const counts = await sb.counts();
    if (counts.writes !== n) throw new Error(`${counts.writes} creates sent, expected ${n}`);
    return wall;
  } finally {
    await api.close();
    await sb.close();
  }
}

const dir = await mkdtemp(join(tmpdir(), 'govops-state-converge-'));
const pg = await startPostgres();
try {
  const manifests = async (d, n) => {
    await mkdir(join(d, 'm'), { recursive: true });
    for (let f = 0; f * PER_FILE < n; f++) {
      const docs = [];
      for (let i = f * PER_FILE; i < Math.min(n, (f + 1) * PER_FILE); i++) docs.push(objectStore(`store-${i}`));
      await writeFile(join(d, 'm', `f${f}.yaml`), docs.join('---\n'));
    }
  };
  await manifests(dir, N);
  // Untimed applies first, one per state: the first apply of the process also pays V8's warm-up (and the first
  // PostgreSQL one its pool and schema), so with one round the state measured first looked slower for that alone.
  const warm = join(dir, 'warm-up');
  await manifests(warm, 100);
  await apply(warm, join(warm, 'state.json'), 100);
  await apply(warm, `${pg.url}#warm-up`, 100);
  console.log(`converge of ${N} creates, transition ${T} ms, concurrency ${C}, sandbox in its own process; ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)}`);
  const file = [];
  const db = [];
  for (let r = 0; r < ROUNDS; r++) {
    // a fresh, empty state each run (every run creates all N)
    const runFile = () => apply(dir, join(dir, `state-${r}.json`)).then((ms) => file.push(ms));
    const runDb = () => apply(dir, `${pg.url}#converge-${r}`).then((ms) => db.push(ms));
    if (r % 2 === 0) {
      await runFile();
      await runDb();
    } else {
      await runDb();
      await runFile();
    }
    console.log(`  round ${r + 1}: file ${(file[r] / 1000).toFixed(2)} s, PostgreSQL ${(db[r] / 1000).toFixed(2)} s`);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = median(file);
  const p = median(db);
  const ratio = p / f;
  console.log(`apply wall time${ROUNDS > 1 ? ` (median of ${ROUNDS})` : ''}: file ${(f / 1000).toFixed(2)} s, PostgreSQL ${(p / 1000).toFixed(2)} s`);
  console.log(`ratio PostgreSQL / file: ${ratio.toFixed(2)}x (target <= 1.1x): ${ratio <= 1.1 ? 'OK' : 'OVER'}`);
  console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  await closePgPools();
  pg.destroy();
  await rm(dir, { recursive: true, force: true });
}
