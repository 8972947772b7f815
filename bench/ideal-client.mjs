// The ideal client of bench/converge.bench.mjs (issue #26), not a benchmark itself: what a hand-written client of
// this service could do at best with govops' own HTTP library (one undici Pool) and nothing else. C slots for the
// dry run and the create, a slot freed as soon as the create is accepted; then it waits exactly the known
// transition time T and polls that integration's status every 10 ms until it is settled. No validation, no
// logging, no state, no plan. Run in the bench's process, or as a process of its own (the whole-process figure):
//   node bench/ideal-client.mjs '{"url":…,"token":…,"n":1000,"transitionMs":2000,"concurrency":32}'
// prints {"seen":[{id, at}]} (at: epoch ms at which the integration was seen settled).
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

/** The body of object store `i` (the same fields as the manifests govops applies: store-i). */
export function body(i) {
  const name = `store-${i}`;
  return {
    type: 'object_store',
    autoBootstrap: false,
    config: {
      name,
      cloudAccountId: '123456789012',
      cloudRegion: 'eu-west-1',
      cloudLocationRole: `arn:aws:iam::123456789012:role/${name}`,
      cloudLocationPath: `s3://${name}/data`,
      authenticationType: 'auto',
    },
  };
}

/** Create store-0 … store-(n-1) and see each settled; resolves with when each was seen. */
export async function idealClient({ url, token, n, transitionMs, concurrency }) {
  const pool = new Pool(url, { connections: concurrency + 16, pipelining: 1 });
  const headers = { authorization: token, 'content-type': 'application/json', accept: 'application/json' };
  const call = async (method, path, payload) => {
    const res = await pool.request({ method, path, headers, body: payload === undefined ? undefined : JSON.stringify(payload) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const seen = [];
  let next = 0;
  const waits = [];
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await call('POST', '/integrations?dryRun=true', body(i));
      const { id } = await call('POST', '/integrations', body(i));
      waits.push(
        (async () => {
          await sleep(transitionMs);
          for (;;) {
            const s = await call('GET', `/integrations/${id}/status`);
            if (s.status === 'enabled') return seen.push({ id: String(id), at: Date.now() });
            await sleep(10);
          }
        })(),
      );
    }
  };
  let doneAt;
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
    await Promise.all(waits);
    doneAt = performance.now();
  } finally {
    await pool.close();
  }
  // doneAt: performance.now() when the last was seen settled (before the pool's close)
  return { seen, doneAt };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { seen } = await idealClient(JSON.parse(process.argv[2]));
  process.stdout.write(JSON.stringify({ seen }));
}
