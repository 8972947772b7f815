#!/usr/bin/env node
// `govops plan` and `govops validate` at 10,000 (issue #18), as a user runs them: cold processes of the
// built CLI, against a sandbox (in its own process) holding the 10,000 integrations in sync with the
// state (an apply first). Timed against a bare parse measured in the same run — a cold node process
// that reads the same files with js-yaml and does nothing else — so the figures are ratios that hold
// on a busy machine. Runs alternate (bare, validate, plan) and medians are compared.
// Floors beside them (what the least validator and the least planner on the same libraries cost: below), so a
// ratio can be read against what cannot be cut. Then the stages of one plan inside one process (CPU ms).
// An in-sync `govops apply` of the same folder is timed beside them (its lock, lists and state read overlap the load).
// Run: npm run build && node bench/run.mjs plan      (PLAN_N=2000 for a quick run; PLAN_LIST_LATENCY_MS=300 for a slow list)
import './no-extra-ca.mjs';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '../dist/api/client.js';
import { silentLogger } from '../dist/log.js';
import { reconcile } from '../dist/reconcile/engine.js';
import { ENV, TRUST_MANUAL_STEPS, writeIntegrations } from './fixtures.mjs';
import { sandboxProcess } from './sandbox-process.mjs';

const N = Number(process.env.PLAN_N ?? 10_000);
const RUNS = Number(process.env.PLAN_RUNS ?? 5);
const PER_FILE = 20;
// the `govops` command as users run it (package.json bin: dist/cli/govops.cjs, running dist/cli/main.cjs from its compiled code)
const CLI = fileURLToPath(new URL('../dist/cli/govops.cjs', import.meta.url));
const JSYAML = fileURLToPath(new URL('../node_modules/js-yaml/dist/js-yaml.mjs', import.meta.url));
const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));
// What every bare process below starts with: js-yaml, a require for the repository's packages, the YAML files under a folder.
const PRELUDE = `
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import yaml from ${JSON.stringify(JSYAML)};
const require = createRequire(${JSON.stringify(PACKAGE_JSON)});
const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.yaml') ? [join(d, e.name)] : []));
`;
const BARE = `${PRELUDE}
let n = 0;
for (const f of walk(process.argv[1])) for (const doc of yaml.loadAll(readFileSync(f, 'utf8'))) if (doc) n++;
if (n !== ${N}) process.exit(3);
`;
// The floor of `validate` (issue #26's validate / bare parse target): the bare parse plus each document checked by
// its kind's generated schema check (dist/manifests/validators, the one `validate` runs; a secret reference
// replaced by a string first, as govops does, since the check is of the resolved shape), nothing else: no
// positions, no hostile-input or secret-scope checks, no duplicate check, no `yaml` confirmation. It must find all
// ${N} valid.
const VALIDATORS = fileURLToPath(new URL('../dist/manifests/validators/', import.meta.url));
const BARE_VALIDATE = `${PRELUDE}
const checks = new Map();
const checkOf = (type) => {
  let f = checks.get(type);
  if (!f) {
    const g = require(${JSON.stringify(VALIDATORS)} + 'manifest.' + type + '.generated.cjs');
    g.adviceKeyword = () => true;
    checks.set(type, (f = g.v));
  }
  return f;
};
const refs = (v) => {
  if (Array.isArray(v)) return v.map(refs);
  if (!v || typeof v !== 'object') return v;
  if ('fromEnv' in v || 'fromFile' in v) return 'secret';
  for (const k of Object.keys(v)) v[k] = refs(v[k]);
  return v;
};
let n = 0;
for (const f of walk(process.argv[1])) for (const doc of yaml.loadAll(readFileSync(f, 'utf8'))) if (doc && checkOf(doc.spec.type)(refs(doc))) n++;
if (n !== ${N}) process.exit(3);
`;

// The floor of what a plan adds to the parse (issue #26's plan / validate target): the bare parse above, plus the
// two live lists fetched with undici and JSON.parse'd, the state file read, and each manifest's config compared
// leaf by leaf with its live item (found by the id the state recorded; a secret reference or a masked live
// value counts as the same). No secrets, fingerprints, hashing, matching by natural key, stale checks or output:
// not a planner, only the least any planner does here. It must find all ${N} in sync, or the bench stops.
const BARE_PLAN = `${PRELUDE}
const { request } = require('undici');
const [dir, statePath] = process.argv.slice(1);
const get = async (p, authorization) => {
  const res = await request(process.env.GOVOPS_URL + p, { headers: { authorization } });
  const text = await res.body.text();
  if (res.statusCode !== 200) process.exit(5); // a refused list would be a floor that skipped it
  return JSON.parse(text);
};
// the webhook endpoints take a Bearer token, the integration endpoints the token alone (the service's contract)
const lists = Promise.all([get('/integrations', process.env.GOVOPS_TOKEN), get('/webhooks', 'Bearer ' + process.env.GOVOPS_TOKEN)]);
const docs = [];
for (const f of walk(dir)) for (const doc of yaml.loadAll(readFileSync(f, 'utf8'))) if (doc) docs.push(doc);
const state = JSON.parse(readFileSync(statePath, 'utf8'));
const [integrations] = await lists;
const idOf = new Map(state.resources.map((r) => [r.kind + '\\0' + r.name, r.id]));
const live = new Map(integrations.map((l) => [String(l.id), l]));
const same = (d, l) => {
  if (Array.isArray(d)) return Array.isArray(l) && d.length === l.length && d.every((x, i) => same(x, l[i]));
  if (d && typeof d === 'object') {
    if ('fromEnv' in d || 'fromFile' in d) return true;
    return !!l && typeof l === 'object' && Object.keys(d).every((k) => same(d[k], l[k]));
  }
  return d === l || l === '********';
};
let inSync = 0;
for (const m of docs) {
  const l = live.get(idOf.get(m.kind + '\\0' + m.metadata.name));
  if (l && l.type === m.spec.type && same(m.spec.config ?? {}, l.config ?? {})) inSync++;
}
if (inSync !== ${N}) process.exit(4);
`;

const REPORT_CPU = fileURLToPath(new URL('./report-cpu.cjs', import.meta.url));
/** A cold process: wall ms, and its CPU ms (all threads, from report-cpu.cjs). */
function timed(args, env) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--require', REPORT_CPU, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
  const cpu = Number(/GOVOPS_BENCH_CPU ([\d.]+)/.exec(r.stderr)?.[1]);
  return { ms, cpu, out: r.stdout };
}

const dir = await mkdtemp(join(tmpdir(), 'govops-plan-'));
// PLAN_LIST_LATENCY_MS: the service takes that long to answer GET /integrations (a remote service sending 10,000
// integrations), for govops and the bare plan alike.
const LIST_LATENCY = Number(process.env.PLAN_LIST_LATENCY_MS ?? 0);
const sb = await sandboxProcess({ transitionMs: 1, ...(LIST_LATENCY > 0 ? { faults: [{ type: 'latency', method: 'GET', path: '/integrations', latencyMs: LIST_LATENCY }] } : {}) });
try {
  const m = join(dir, 'm');
  await writeIntegrations(m, N, PER_FILE);
  const statePath = join(dir, 'state.json');
  const api = new ServiceClient({ baseUrl: sb.url, token: sb.token, logger: silentLogger(), connections: 48 });
  const t0 = performance.now();
  const applied = await reconcile(api, { source: { root: m, paths: ['.'] }, plan: { prune: false, allowReplace: false, manualSteps: 'trust' }, apply: true, logger: silentLogger(), statePath, env: ENV, tuning: { concurrency: 32, timeoutMs: 1_800_000 } });
  await api.close();
  if (!applied.ok) throw new Error(`setup apply failed: ${applied.error}`);
  console.log(`setup: ${N} integrations applied in ${((performance.now() - t0) / 1000).toFixed(1)} s (sandbox in its own process)`);

  const env = { ...ENV, ...TRUST_MANUAL_STEPS, GOVOPS_URL: sb.url, GOVOPS_TOKEN: sb.token, GOVOPS_LOG_LEVEL: 'error', NO_COLOR: '1' };
  const runs = { bare: [], validate: [], plan: [], 'apply in sync': [], 'bare validate': [], 'bare plan': [] };
  for (let r = 0; r < RUNS; r++) {
    runs.bare.push(timed(['--input-type=module', '-e', BARE, m], env));
    runs.validate.push(timed([CLI, 'validate', m], env));
    const p = timed([CLI, 'plan', m, '--state', statePath, '-o', 'json'], env);
    const plan = JSON.parse(p.out);
    if (plan.changes.some((c) => c.action !== 'noop')) throw new Error('the plan is not empty: the setup is not in sync');
    runs.plan.push(p);
    // an apply of the same folder: nothing to apply, but its lock, lists and state read (under the lock, while the
    // manifests are read: PLAN_LIST_LATENCY_MS shows what that saves against a slow list)
    const a = timed([CLI, 'apply', m, '--state', statePath], env);
    if (!/Nothing to apply/.test(a.out)) throw new Error('the apply found something to apply: the setup is not in sync');
    runs['apply in sync'].push(a);
    runs['bare validate'].push(timed(['--input-type=module', '-e', BARE_VALIDATE, m], env));
    runs['bare plan'].push(timed(['--input-type=module', '-e', BARE_PLAN, m, statePath], env));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const bareWall = med(runs.bare.map((r) => r.ms));
  const bareCpu = med(runs.bare.map((r) => r.cpu));
  console.log(`\ncold processes, ${N} manifests in ${Math.ceil(N / PER_FILE)} files, ${RUNS} alternating runs each (medians; min wall in brackets):`);
  console.log('  process         wall ms         x bare    CPU ms   x bare');
  for (const [k, xs] of Object.entries(runs)) {
    const w = med(xs.map((r) => r.ms));
    const c = med(xs.map((r) => r.cpu));
    console.log(`  ${k.padEnd(13)} ${w.toFixed(0).padStart(6)} (${Math.min(...xs.map((r) => r.ms)).toFixed(0).padStart(5)})  ${(w / bareWall).toFixed(2).padStart(6)}x  ${c.toFixed(0).padStart(7)}  ${(c / bareCpu).toFixed(2).padStart(6)}x`);
  }
  console.log('  targets (quiet machine): validate <= 2x the bare parse; plan <= 1 s wall');
  const medOf = (k, f) => med(runs[k].map((r) => r[f]));
  console.log(`RATIO plan / validate (issue #26, target <= 1.5x; plan < 1 s quiet): wall ${(medOf('plan', 'ms') / medOf('validate', 'ms')).toFixed(2)}x, CPU ${(medOf('plan', 'cpu') / medOf('validate', 'cpu')).toFixed(2)}x`);
  console.log(`RATIO validate / bare js-yaml parse (issue #26, target <= 1.8x): wall ${(medOf('validate', 'ms') / bareWall).toFixed(2)}x, CPU ${(medOf('validate', 'cpu') / bareCpu).toFixed(2)}x`);
  console.log(`floor of validate (bare parse + each kind's schema check) / bare parse: wall ${(medOf('bare validate', 'ms') / bareWall).toFixed(2)}x, CPU ${(medOf('bare validate', 'cpu') / bareCpu).toFixed(2)}x`);
  const planAdds = medOf('plan', 'ms') - medOf('validate', 'ms');
  const floorAdds = medOf('bare plan', 'ms') - bareWall;
  console.log(`what a plan adds to the parse (wall): govops plan - validate ${planAdds.toFixed(0)} ms; the floor (bare plan - bare parse) ${floorAdds.toFixed(0)} ms; the 1.5x target allows ${(medOf('validate', 'ms') / 2).toFixed(0)} ms`);

  // stages of one plan, in this process (cold modules are already loaded here: CPU per stage)
  const { loadManifests } = await import('../dist/manifests/loader.js');
  const { resolveAllSecrets } = await import('../dist/manifests/secrets.js');
  const { configShapes } = await import('../dist/manifests/shapes.js');
  const { toDesired } = await import('../dist/plan/desired.js');
  const { planChanges } = await import('../dist/plan/planner.js');
  const { hashingFor, loadState } = await import('../dist/state/store.js');
  const api2 = new ServiceClient({ baseUrl: sb.url, token: sb.token, logger: silentLogger() });
  const stages = [];
  let c = process.cpuUsage();
  const mark = (label) => {
    const c2 = process.cpuUsage();
    stages.push(`${label} ${((c2.user + c2.system - c.user - c.system) / 1000).toFixed(0)}`);
    c = c2;
  };
  const set = await loadManifests(['.'], { cwd: m, root: m });
  mark('load+validate');
  const { resolved, diagnostics } = resolveAllSecrets(set.manifests, { env: ENV });
  mark('secrets');
  if (diagnostics.length) throw new Error(`the fixture's secrets draw ${diagnostics.length} diagnostics (${diagnostics[0].message}): the stages would time the warning path`);
  const [integrations, webhooks] = await Promise.all([api2.listIntegrations(), api2.listWebhooks()]);
  mark('list');
  const state = await loadState(statePath);
  mark('state');
  const hashing = hashingFor(state.fingerprintKey);
  const desired = resolved.map((r, i) => toDesired(r.manifest, set.manifests[i].source, r.secretPaths, hashing));
  mark('toDesired');
  planChanges({ desired, live: { integrations, webhooks }, state, options: { prune: false, allowReplace: false }, shapes: configShapes() });
  mark('planChanges');
  await api2.close();
  console.log(`\none plan in this process, CPU ms per stage (warm modules): ${stages.join(', ')}`);
  console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
}
