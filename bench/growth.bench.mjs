#!/usr/bin/env node
// Growth with size (issue #26): every phase of a resource's life at N and at 2N resources of each kind (object-store
// integrations, one data source each, webhooks): create, no-op, update, replace (each webhook's URL: no update endpoint),
// adoption (state removed), `govops export --state` of all of them, prune. Printed: the time at
// N, at 2N and their ratio (2.00 = linear; fixed costs and JIT warm-up keep small sizes below 2). A phase above
// ~2.3 grows faster than linearly: a scan or copy of the whole set per resource (two such were found with it:
// the data-source create's copy of the state, export's adoptions).
// In process against the embedded sandbox (transitions 1 ms), concurrency 32; export runs as a CLI process.
// Run: npm run build && node bench/run.mjs growth     (GROWTH_N=2500 by default)
import './no-extra-ca.mjs';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '../dist/api/client.js';
import { silentLogger } from '../dist/log.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { isTargeted, parseTargets } from '../dist/plan/target.js';
import { startSandbox } from '../dist/sandbox/index.js';
import { hook, objectStore } from './flaky-drill.mjs';
import { GROWTH_TARGET } from './growth-target.mjs';

const N = Number(process.env.GROWTH_N ?? 2500);
// the `govops` command as users run it (package.json bin: dist/cli/govops.cjs, running dist/cli/main.cjs from its compiled code)
const CLI = fileURLToPath(new URL('../dist/cli/govops.cjs', import.meta.url));
const dataSource = (i) =>
  `apiVersion: govops/v1\nkind: DataSource\nmetadata:\n  name: ds-${i}\nspec:\n  integration: store-${i}\n  dataSourceName: DS ${i}\n  prefix: s3://store-${i}/data/x/\n`;

function cli(args, env) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`govops ${args[0]} exited ${code}: ${err.slice(0, 500)}`))));
  });
}

async function scenario(n) {
  const dir = await mkdtemp(join(tmpdir(), 'govops-scale-'));
  const m = join(dir, 'm');
  await mkdir(m);
  const write = async (edit, editHook = (x) => x, editDataSource = (x) => x) => {
    for (let f = 0; f * 50 < n; f++) {
      const docs = [];
      for (let i = f * 50; i < Math.min(n, (f + 1) * 50); i++) docs.push(edit(objectStore(`store-${i}`)), editDataSource(dataSource(i)), editHook(hook(`hook-${i}`)));
      await writeFile(join(m, `f${f}.yaml`), docs.join('---\n'));
    }
  };
  const sandbox = await startSandbox({ port: 0, transitionMs: 1 });
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), connections: 48 });
  const statePath = join(dir, 'state.json');
  const times = {};
  // `expect(changes)` checks the phase did what it is named for (a phase that did nothing would look fast).
  const run = async (phase, plan = {}, expect) => {
    const t = performance.now();
    const r = await reconcile(api, {
      source: { root: dir, paths: ['m'] },
      plan: { prune: false, allowReplace: false, maxDeletes: Number.MAX_SAFE_INTEGER, ...plan },
      apply: true,
      logger: silentLogger(),
      statePath,
      env: {},
      tuning: { concurrency: 32, timeoutMs: 600_000 },
    });
    times[phase] = performance.now() - t;
    if (!r.ok) throw new Error(`${phase} at ${n}: ${r.error}`);
    if (expect && !expect(r.plan.changes)) throw new Error(`${phase} at ${n}: not the changes expected: ${JSON.stringify(r.plan.changes.filter((c) => c.action !== "noop" || c.renamedFrom).slice(0, 4).map((c) => [c.resourceKind, c.name, c.action, c.renamedFrom]))} of ${r.plan.changes.length}`);
  };
  try {
    await write((x) => x);
    await run('create');
    // nothing to do: every change a no-op, and the requests counted (issue #26: a constant number at every N)
    sandbox.clearRequests();
    await run('no-op', {}, (cs) => cs.every((c) => c.action === 'noop'));
    noopRequests.set(n, sandbox.requests().map((r) => `${r.method} ${r.path}`));
    await write((x) => x.replace('cloudRegion: eu-west-1', 'cloudRegion: eu-west-2'));
    await run('update');
    await write((x) => x.replace('cloudRegion: eu-west-1', 'cloudRegion: eu-west-2'), (x) => x.replace('/hook-', '/v2/hook-'));
    await run('replace webhooks');
    const region2 = (x) => x.replace('cloudRegion: eu-west-1', 'cloudRegion: eu-west-2');
    const hook2 = (x) => x.replace('/hook-', '/v2/hook-');
    // A targeted update: a tenth of the integrations at every N (--only with a glob), the rest left out of the plan.
    await write((x) => region2(x).replace('cloudRegion: eu-west-2', 'cloudRegion: eu-central-1'), hook2);
    const count = (changes, test) => changes.filter(test).length;
    const targets = parseTargets([GROWTH_TARGET]);
    const tenth = Array.from({ length: n }, (_, i) => `store-${i}`).filter((x) => isTargeted(targets, 'Integration', x)).length;
    if (tenth !== Math.ceil(n / 10)) throw new Error(`${GROWTH_TARGET} selects ${tenth} of ${n} integrations, not a tenth`);
    await run('targeted update', { only: [GROWTH_TARGET] }, (cs) => cs.length === tenth && count(cs, (c) => c.action === 'update') === tenth);
    // Every integration renamed (its identity in the service unchanged), its data source following it.
    const renamed = (x) => x.replace('metadata:\n  name: store-', 'metadata:\n  name: renamed-store-');
    await write((x) => renamed(region2(x)), hook2, (x) => x.replace('integration: store-', 'integration: renamed-store-'));
    await run('rename', {}, (cs) => count(cs, (c) => c.renamedFrom !== undefined) === n && count(cs, (c) => c.resourceKind === 'DataSource' && c.action !== 'noop') === 0);
    await rm(statePath, { force: true });
    await rm(`${statePath}.journal`, { force: true });
    await run('adopt');
    times['export --state'] = await cli(['export', '--out', join(dir, 'export'), '--state', join(dir, 'exported.json')], {
      GOVOPS_URL: sandbox.url,
      GOVOPS_TOKEN: sandbox.adminToken,
      GOVOPS_LOG_LEVEL: 'error',
      NO_COLOR: '1',
    });
    for (const f of await readdir(m)) await rm(join(m, f));
    await writeFile(join(m, 'keep.yaml'), objectStore('store-keep'));
    await run('prune', { prune: true });
  } finally {
    await api.close();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
  return times;
}

/** The requests of the no-op phase at each N. */
const noopRequests = new Map();
const small = await scenario(N);
const large = await scenario(2 * N);
console.log(`${N} and ${2 * N} of each kind (integrations, data sources, webhooks); ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}`);
console.log(`  phase            at ${String(N).padEnd(6)}  at ${String(2 * N).padEnd(6)}  ratio`);
let worst = 0;
for (const phase of Object.keys(small)) {
  const ratio = large[phase] / small[phase];
  worst = Math.max(worst, ratio);
  console.log(`  ${phase.padEnd(16)} ${small[phase].toFixed(0).padStart(6)} ms ${large[phase].toFixed(0).padStart(6)} ms  ${ratio.toFixed(2)}`);
}
console.log(`RATIO worst growth at 2N / N: ${worst.toFixed(2)} (2.00 = linear)`);
const [atN, at2N] = [noopRequests.get(N), noopRequests.get(2 * N)];
console.log(`no-op reconcile: ${atN.length} requests at ${N}, ${at2N.length} at ${2 * N} (${at2N.join(', ')})`);
if (atN.length !== at2N.length) throw new Error('the no-op reconcile makes more requests at 2N than at N');
