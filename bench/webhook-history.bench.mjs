// Webhook delivery-health polling over a large history: 100,000 records in the sandbox, then the cost of
// one incremental poll (requests and time) when nothing is new and when 100 records are new, next to
// reading the whole history. Uses the daemon's cursor (dist/deliveries/cursor.js) and the HTTP client.
import http from 'node:http';
import { ServiceClient } from '../dist/api/client.js';
import { HistoryCursor } from '../dist/deliveries/cursor.js';
import { readHistory } from '../dist/deliveries/reader.js';
import { startSandbox } from '../dist/sandbox/index.js';

const N = 100_000;
const NEW = 100;
const sb = await startSandbox({ port: 0, dev: true });
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('{}'));
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const rxUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
const api = new ServiceClient({ baseUrl: sb.url, token: sb.adminToken });

async function call(method, path, body) {
  const res = await fetch(sb.url + path, {
    method,
    headers: { authorization: `Bearer ${sb.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const serverMs = () => sb.requests().filter((r) => r.path === '/webhooks/history').map((r) => r.durationMs);

try {
  const { createdWebhooks } = await call('POST', '/webhooks', {
    webhooks: [{ url: rxUrl, name: 'bench', global: true, notificationType: ['ALL_NOTIFICATIONS'], actionType: 'triggered' }],
  });
  let t = performance.now();
  // one record per second up to now: the newest are within the 60 s overlap window, as in a busy service
  // ending 20 minutes ago: the 10 x 100 records of the steady phase continue the timeline at 1 record/s
  const start = Date.now() - (N + 10 * NEW + 200) * 1000;
  await call('POST', '/_sandbox/webhooks/history', { webhookId: createdWebhooks[0].id, count: N, from: new Date(start).toISOString(), stepMs: 1000 });
  console.log(`seeded ${N} history records in ${(performance.now() - t).toFixed(0)} ms`);

  const webhookId = createdWebhooks[0].id;
  let next = start + N * 1000; // createdAt of the next seeded record (the timeline continues at 1 record/s)
  const cursor = new HistoryCursor({ pageSize: 100, overlapMs: 60_000 });
  console.log('\ncursor: pageSize 100, overlap 60 s (the defaults)');
  sb.clearRequests();
  t = performance.now();
  const first = await cursor.poll(api);
  console.log(`first poll (baseline): ${first.requests} request(s), ${first.records.length} records, ${(performance.now() - t).toFixed(1)} ms`);

  const idle = async (label) => {
    const ms = [];
    const reqs = [];
    sb.clearRequests();
    for (let i = 0; i < 20; i++) {
      const s = performance.now();
      const r = await cursor.poll(api);
      ms.push(performance.now() - s);
      reqs.push(r.requests);
      if (r.records.length) throw new Error('nothing should be new');
    }
    console.log(`${label}: ${median(reqs)} request(s) per poll, median ${median(ms).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms (20 polls; sandbox ${median(serverMs()).toFixed(1)} ms per request)`);
  };
  const fresh = async (label, produce) => {
    const ms = [];
    const reqs = [];
    const offsets = new Set();
    for (let round = 0; round < 10; round++) {
      await produce();
      sb.clearRequests();
      const s = performance.now();
      const r = await cursor.poll(api);
      ms.push(performance.now() - s);
      reqs.push(r.requests);
      for (const q of sb.requests()) offsets.add(q.query.offset);
      if (r.records.length !== NEW) throw new Error(`expected ${NEW} new records, got ${r.records.length}`);
    }
    console.log(`${label}: ${median(reqs)} request(s) per poll (offsets ${[...offsets].join(', ')}), median ${median(ms).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms (10 polls)`);
  };

  await idle('nothing new');
  await fresh(`${NEW} new (1 record/s)`, async () => {
    await call('POST', '/_sandbox/webhooks/history', { webhookId, count: NEW, from: new Date(next).toISOString(), stepMs: 1000 });
    next += NEW * 1000;
  });
  await idle('nothing new, after them');

  console.log(`\nbursts: ${NEW} real deliveries within about a second (the overlap window then holds the burst)`);
  await fresh(`${NEW} new (a burst)`, async () => {
    for (let i = 0; i < NEW; i++) await call('POST', '/_sandbox/events', { notificationType: 'modelAccessRequested' });
    await sb.webhooks.idle();
  });
  await idle(`nothing new, with ${NEW * 10} records inside the 60 s window`);

  console.log('\nfor comparison, reading the whole history:');
  for (const pageSize of [100, 1000]) {
    const stats = { requests: 0, received: 0, exhausted: false, truncated: false };
    t = performance.now();
    let n = 0;
    for await (const _ of readHistory(api, { pageSize, filters: { includeGlobal: true } }, stats)) n++;
    console.log(`  pageSize ${pageSize}: ${stats.requests} requests, ${n} records, ${(performance.now() - t).toFixed(0)} ms`);
  }
} finally {
  await api.close();
  await sb.close();
  receiver.close();
}
