// Sandbox webhooks at scale: 10,000 webhooks (list latency), one event fanned out to all of them
// (delivery throughput to a local receiver), and history queries over the 10,000 records.
import http from 'node:http';
import { startSandbox } from '../dist/sandbox/index.js';

const N = 10_000;
const sb = await startSandbox({ port: 0, deliveryTimeoutMs: 10_000 });
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('{}'));
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const rxUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

async function call(method, path, token, body) {
  const res = await fetch(sb.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

async function time(label, runs, fn) {
  await fn(); // warm-up
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label}: median ${ms[Math.floor(runs / 2)].toFixed(1)} ms, max ${ms.at(-1).toFixed(1)} ms (${runs} runs)`);
}

try {
  let t = performance.now();
  for (let i = 0; i < N; i += 1000) {
    const webhooks = Array.from({ length: 1000 }, (_, j) => ({
      url: rxUrl,
      name: `hook-${i + j}`,
      global: false,
      notificationType: ['modelAccessRequested'],
      actionType: 'triggered',
      secret: `s-${i + j}`,
    }));
    await call('POST', '/webhooks', i % 2000 === 0 ? sb.adminToken : sb.userToken, { webhooks });
  }
  console.log(`create ${N} webhooks (10 batches of 1000): ${(performance.now() - t).toFixed(0)} ms`);

  await time(`GET /webhooks as admin (${N} webhooks)`, 20, () => call('GET', '/webhooks', sb.adminToken));
  await time(`GET /webhooks as user (${N / 2} own)`, 20, () => call('GET', '/webhooks', sb.userToken));
  await time('GET /webhooks/5000', 50, () => call('GET', '/webhooks/5000', sb.adminToken));

  t = performance.now();
  const fired = await fetch(`${sb.url}/_sandbox/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: sb.adminToken },
    body: JSON.stringify({ notificationType: 'modelAccessRequested' }),
  }).then(async (r) => {
    if (r.status !== 200) throw new Error(`POST /_sandbox/events: ${r.status} ${await r.text()}`);
    return r.json();
  });
  const emitted = performance.now() - t;
  await sb.webhooks.idle();
  const total = performance.now() - t;
  console.log(
    `one event to ${fired.deliveries} webhooks: emit answered in ${emitted.toFixed(0)} ms, all delivered+recorded in ${total.toFixed(0)} ms (${((fired.deliveries / total) * 1000).toFixed(0)}/s, signed)`,
  );

  await time(`GET /webhooks/history default page (${N} records)`, 20, () => call('GET', '/webhooks/history', sb.adminToken));
  await time('GET /webhooks/history sortField=statusCode&successOrFailure=success&offset=5000', 20, () =>
    call('GET', '/webhooks/history?sortField=statusCode&sortOrder=asc&successOrFailure=success&offset=5000', sb.adminToken),
  );
  await time('GET /webhooks/history as user (5000 own records)', 20, () => call('GET', '/webhooks/history', sb.userToken));
} finally {
  await sb.close();
  receiver.close();
}
