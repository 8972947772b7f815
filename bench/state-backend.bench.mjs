// State write per change during an apply: the state file (journal line, fsync'd) vs PostgreSQL (one small
// transaction), with 1,000 resources recorded and 300 changes, each recorded alone as the ledger does.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StateWriter } from '../dist/state/journal.js';
import { newState } from '../dist/state/store.js';
import { closePgPools } from '../dist/state/pg/backend.js';
import { startPostgres } from './postgres.mjs';

const N = 1000;
const CHANGES = 300;
const res = (i, extra = {}) => ({ kind: 'Integration', name: `r${i}`, id: String(i), origin: 'created', specHash: 'h'.repeat(64), secretFingerprints: { 'config.token': 'f'.repeat(64) }, updatedAt: new Date().toISOString(), ...extra });

async function measure(location) {
  const w = new StateWriter(location);
  await w.writeFull({ ...newState(), resources: Array.from({ length: N }, (_, i) => res(i)) });
  const times = [];
  for (let i = 0; i < CHANGES; i++) {
    const t0 = performance.now();
    await w.append([{ put: res(i % N, { pending: i % 2 ? 'delete' : undefined }) }]);
    times.push(performance.now() - t0);
  }
  await w.close();
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)] };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-bench-state-'));
const pg = await startPostgres();
try {
  const file = await measure(path.join(dir, 'state.json'));
  const db = await measure(`${pg.url}#bench`);
  const f = (x) => `${x.toFixed(2)} ms`;
  console.log(`state write per change, ${N} resources recorded, ${CHANGES} changes:`);
  console.log(`  file (journal, fsync):   median ${f(file.median)}, p95 ${f(file.p95)}`);
  console.log(`  PostgreSQL (1 tx, local, fsync on): median ${f(db.median)}, p95 ${f(db.p95)}`);
  console.log(`  ratio PostgreSQL / file (median): ${(db.median / file.median).toFixed(2)}x`);
} finally {
  await closePgPools();
  pg.destroy();
  rmSync(dir, { recursive: true, force: true });
}
