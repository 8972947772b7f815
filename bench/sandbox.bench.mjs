// Sandbox scale: 10,000 integrations + 10,000 webhooks, then time the list requests over real HTTP.
// Target: list requests answered in milliseconds. Run: npm run build && node bench/sandbox.bench.mjs
import { startSandbox } from '../dist/sandbox/index.js';

const N = Number(process.env.BENCH_N ?? 10_000);
const RUNS = 20;
const sb = await startSandbox({ port: 0, transitionMs: 10 });
const adminHeaders = { authorization: sb.adminToken, 'content-type': 'application/json' };
const hookHeaders = { authorization: `Bearer ${sb.adminToken}`, 'content-type': 'application/json' };

async function req(method, path, headers, body) {
  const res = await fetch(sb.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

function body(i) {
  return {
    type: 'cloud_warehouse',
    autoBootstrap: true,
    config: {
      host: `cw${i}.example.com`,
      warehouse: 'COMPUTE_WH',
      database: 'GOV',
      authenticationType: 'userPassword',
      username: 'svc',
      password: `secret-${i}`,
      role: 'ACCOUNTADMIN',
    },
  };
}

let t0 = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < N) {
      const i = next++;
      await req('POST', '/integrations', adminHeaders, body(i));
    }
  }),
);
const createMs = performance.now() - t0;
t0 = performance.now();
for (let b = 0; b < N; b += 500) {
  const webhooks = Array.from({ length: Math.min(500, N - b) }, (_, k) => ({
    url: `http://127.0.0.1:9/hook/${b + k}`,
    name: `hook-${b + k}`,
    global: false,
    notificationType: ['tagCreated'],
    actionType: 'triggered',
  }));
  await req('POST', '/webhooks', hookHeaders, { webhooks });
}
const hookMs = performance.now() - t0;
await new Promise((r) => setTimeout(r, 50));
sb.finishTransitions();

async function time(label, fn) {
  await fn(); // warm-up (fills caches)
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await fn();
    samples.push(performance.now() - s);
  }
  samples.sort((a, b) => a - b);
  const med = samples[Math.floor(RUNS / 2)];
  const p95 = samples[Math.ceil(RUNS * 0.95) - 1]; // nearest rank (Math.floor(RUNS * 0.95) was the maximum of 20)
  console.log(`${label.padEnd(44)} median ${med.toFixed(1)} ms   p95 ${p95.toFixed(1)} ms`);
}

console.log(`seeded ${N} integrations in ${(createMs / 1000).toFixed(2)} s (${(N / (createMs / 1000)).toFixed(0)}/s, 16 concurrent)`);
console.log(`seeded ${N} webhooks in ${(hookMs / 1000).toFixed(2)} s (batches of 500)`);
let size = 0;
await time(`GET /integrations (${N} items)`, async () => {
  size = (await req('GET', '/integrations', adminHeaders)).length;
});
console.log(`  response size ${(size / 1e6).toFixed(1)} MB`);
const serverSide = sb.requests().filter((r) => r.method === 'GET' && r.path === '/integrations').map((r) => r.durationMs).sort((a, b) => a - b);
console.log(`  server side (request log): median ${serverSide[Math.floor(serverSide.length / 2)].toFixed(1)} ms`);
await time(`GET /webhooks (${N} items)`, async () => {
  size = (await req('GET', '/webhooks', hookHeaders)).length;
});
console.log(`  response size ${(size / 1e6).toFixed(1)} MB`);
await time('GET /integrations/5000', () => req('GET', `/integrations/${Math.ceil(N / 2)}`, adminHeaders));
await time('GET /integrations/5000/status', () => req('GET', `/integrations/${Math.ceil(N / 2)}/status`, adminHeaders));
await time('GET /webhooks/history', () => req('GET', '/webhooks/history', hookHeaders));
await time('POST /integrations?dryRun=true (uniqueness over N)', () => req('POST', '/integrations?dryRun=true', adminHeaders, body(N + 1)));
await sb.close();
