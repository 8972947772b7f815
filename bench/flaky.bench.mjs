// Flaky-service drill (issue #10) on the build: one apply of 100 integrations + 20 webhooks against a
// sandbox with 20% 503, 5% dropped connections, 5% 409, 5% +400 ms, and a webhook batch landing after
// the request timeout. Prints the API economy under faults (HTTP requests made, retries, wall time) per
// seed, so a regression is visible in bench/RESULTS.md. The scenario is bench/flaky-drill.mjs.
import { flakyDrill } from './flaky-drill.mjs';
import { startSandbox } from '../dist/sandbox/index.js';
import { ServiceClient } from '../dist/api/client.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { parseState } from '../dist/state/store.js';
import { silentLogger } from '../dist/log.js';

const parts = { startSandbox, ServiceClient, reconcile, parseState, silentLogger };
const base = await flakyDrill(parts, { faults: false });
console.log(
  `baseline (no faults): ${base.applied.ok ? 'converged' : 'NOT CONVERGED'}; ${base.stats.requests} HTTP requests ` +
    `(${base.stats.retries} retries), wall ${(base.stats.wallMs / 1000).toFixed(2)} s`,
);
const rows = [];
for (const seed of [1, 2, 3, 4, 5]) {
  const r = await flakyDrill(parts, { seed });
  const ok =
    r.applied.ok &&
    r.integrations.length === 100 &&
    new Set(r.integrations.map((i) => i.config?.name)).size === 100 &&
    r.webhooks.length === 20 &&
    new Set(r.webhooks.map((w) => w.name)).size === 20 &&
    r.state.resources.length === 120 &&
    r.next.ok &&
    !r.next.changed;
  rows.push({ seed, ...r.stats, faulted: r.faultedRequests, ok });
  const s = r.stats;
  console.log(
    `seed ${seed}: ${ok ? 'converged in one apply' : 'NOT CONVERGED'}; ${s.requests} HTTP requests (${s.retries} client retries, ` +
      `${r.faultedRequests} answered with a fault), wall ${(s.wallMs / 1000).toFixed(2)} s; by status ${JSON.stringify(s.byStatus)}`,
  );
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `median: ${med(rows.map((r) => r.requests))} requests, ${med(rows.map((r) => r.retries))} retries, ` +
    `${(med(rows.map((r) => r.wallMs)) / 1000).toFixed(2)} s wall (baseline ${base.stats.requests} requests, ` +
    `${(base.stats.wallMs / 1000).toFixed(2)} s)`,
);
process.exit(rows.every((r) => r.ok) ? 0 : 1);
