// API client and state store: status polls over one keep-alive pool (sequential and 16 in flight),
// and atomic state saves/loads with 10,000 managed resources. Run: npm run build && node bench/client.bench.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServiceClient } from '../dist/api/client.js';
import { startSandbox } from '../dist/sandbox/index.js';
import { fingerprint, loadState, putResource, saveState } from '../dist/state/store.js';

const N = Number(process.env.BENCH_N ?? 2000);
const sb = await startSandbox({ port: 0, transitionMs: 10 });
const client = new ServiceClient({ baseUrl: sb.url, token: sb.adminToken });
const { id } = await client.createIntegration({ type: 'distributed_sql' });

let t = performance.now();
for (let i = 0; i < N; i++) await client.getIntegrationStatus(id);
let ms = performance.now() - t;
console.log(`sequential status polls: ${N} in ${ms.toFixed(0)} ms (${(N / (ms / 1000)).toFixed(0)} req/s, ${(ms / N).toFixed(3)} ms each)`);

t = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next++ < N) await client.getIntegrationStatus(id);
  }),
);
ms = performance.now() - t;
console.log(`16 in flight status polls: ${N} in ${ms.toFixed(0)} ms (${(N / (ms / 1000)).toFixed(0)} req/s)`);
await client.close();
await sb.close();

const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-bench-state-'));
const file = path.join(dir, 'state.json');
let state = await loadState(file);
for (let i = 0; i < 10_000; i++) {
  state = putResource(state, {
    kind: i % 2 ? 'Integration' : 'Webhook', name: `r${i}`, id: String(i), origin: 'created', specHash: 'x'.repeat(64),
    secretFingerprints: { 'config.password': fingerprint(state.fingerprintKey, `pw${i}`) }, updatedAt: new Date().toISOString(),
  });
}
const runs = 10;
t = performance.now();
for (let i = 0; i < runs; i++) await saveState(file, state);
console.log(`saveState, 10,000 resources: ${((performance.now() - t) / runs).toFixed(1)} ms each (temp file + fsync + rename + dir fsync)`);
t = performance.now();
for (let i = 0; i < runs; i++) await loadState(file);
console.log(`loadState, 10,000 resources: ${((performance.now() - t) / runs).toFixed(1)} ms each`);
rmSync(dir, { recursive: true, force: true });
