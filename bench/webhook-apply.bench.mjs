#!/usr/bin/env node
// 10,000 webhooks applied (issue #26): `govops apply` of 10,000 webhook manifests (a cold process of the built
// CLI, an empty service) against a bare client posting the same 10,000 webhooks in 20 batches of 500 (a cold
// node process with undici's fetch and nothing else). Same arrangement for both: each against a fresh sandbox
// in its own process, runs alternating, medians compared, wall and CPU. Target: govops <= 2x the bare client.
// A floor beside them: the same client also checking each manifest and recording what it made (below).
// Run: npm run build && node bench/run.mjs webhook-apply     (WEBHOOK_N=2000, WEBHOOK_RUNS=3)
import './no-extra-ca.mjs';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sandboxProcess } from './sandbox-process.mjs';

const N = Number(process.env.WEBHOOK_N ?? 10_000);
const RUNS = Number(process.env.WEBHOOK_RUNS ?? 3);
const BATCH = 500;
const PER_FILE = 100;
// the `govops` command as users run it (package.json bin: dist/cli/govops.cjs, running dist/cli/main.cjs from its compiled code)
const CLI = fileURLToPath(new URL('../dist/cli/govops.cjs', import.meta.url));
const REPORT_CPU = fileURLToPath(new URL('./report-cpu.cjs', import.meta.url));
const SECRET = 'hook-secret-value';
const HOOK_URL = 'https://hooks.example.com/in';

const input = (i) => ({ url: `${HOOK_URL}/${i}`, name: `hook-${i}`, global: false, notificationType: ['healthCheckFailed', 'modelCreated'], actionType: 'triggered', secret: SECRET });
const manifest = (i) =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: hook-${i}\nspec:\n  url: ${HOOK_URL}/${i}\n  global: false\n  notificationType: [healthCheckFailed, modelCreated]\n  actionType: triggered\n  secret: { fromEnv: GOVOPS_SECRET_HOOK }\n`;

// The bare client: the same bodies, 20 POSTs of 500, one after the other (as govops sends its batches).
const BARE = `
const url = process.env.GOVOPS_URL, token = process.env.GOVOPS_TOKEN, n = ${N}, batch = ${BATCH};
const input = ${input.toString()};
const HOOK_URL = ${JSON.stringify(HOOK_URL)}, SECRET = ${JSON.stringify(SECRET)};
let created = 0;
for (let i = 0; i < n; i += batch) {
  const webhooks = [];
  for (let j = i; j < Math.min(n, i + batch); j++) webhooks.push(input(j));
  const res = await fetch(url + '/webhooks', { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify({ webhooks }) });
  const body = await res.json();
  if (res.status >= 300) throw new Error('POST /webhooks ' + res.status);
  created += body.createdWebhooks.length;
}
if (created !== n) process.exit(3);
`;

// The same client reading the manifests first (js-yaml, every file; nothing checked): how much of the gap is
// reading 10,000 YAML documents, which the bare client does not do. Printed, not a target.
const JSYAML = fileURLToPath(new URL('../node_modules/js-yaml/dist/js-yaml.mjs', import.meta.url));
// Reading every file's documents into `docs` (what both processes below start with).
const READ = `
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import yaml from ${JSON.stringify(JSYAML)};
const dir = process.argv[1];
const docs = [];
for (const f of readdirSync(dir)) for (const d of yaml.loadAll(readFileSync(join(dir, f), 'utf8'))) if (d) docs.push(d);
if (docs.length !== ${N}) process.exit(4);
`;
const BARE_YAML = READ + BARE;

// The floor of what govops must do besides (issue #26's 2x target): the client reading the manifests, checking each
// document with the generated schema check govops runs (dist/manifests/validators, the secret reference replaced
// by a string first, as govops does), posting the same batches, and recording what it made in a state file (kind,
// name, id per webhook, written once, atomically: temp file and rename). No positions, no hostile-input or
// duplicate checks, no plan, no output, no fingerprints. It must find all ${N} valid and record all ${N}.
const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));
const VALIDATOR = fileURLToPath(new URL('../dist/manifests/validators/manifest.other.generated.cjs', import.meta.url));
const BARE_RECORDED = `${READ}
const check = createRequire(${JSON.stringify(PACKAGE_JSON)})(${JSON.stringify(VALIDATOR)});
check.adviceKeyword = () => true;
for (const d of docs) {
  const secret = d.spec.secret;
  d.spec.secret = 'secret';
  if (!check.v(d)) process.exit(5);
  d.spec.secret = secret;
}
const url = process.env.GOVOPS_URL, token = process.env.GOVOPS_TOKEN, batch = ${BATCH};
const resources = [];
for (let i = 0; i < docs.length; i += batch) {
  const webhooks = docs.slice(i, i + batch).map((d) => ({ ...d.spec, name: d.metadata.name, secret: process.env[d.spec.secret.fromEnv] }));
  const res = await fetch(url + '/webhooks', { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify({ webhooks }) });
  const body = await res.json();
  if (res.status >= 300) throw new Error('POST /webhooks ' + res.status);
  for (const w of body.createdWebhooks) resources.push({ kind: 'Webhook', name: w.name, id: String(w.id) });
}
if (resources.length !== ${N}) process.exit(3);
const state = join(process.cwd(), 'bare-state.json');
writeFileSync(state + '.tmp', JSON.stringify({ version: 1, resources }, null, 2));
renameSync(state + '.tmp', state);
`;

function timed(args, env, cwd) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--require', REPORT_CPU, ...args], { env: { ...process.env, ...env }, cwd, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.slice(0, 3).join(' ')} exited ${r.status}: ${r.stderr.slice(0, 800)}`);
  return { ms, cpu: Number(/GOVOPS_BENCH_CPU ([\d.]+)/.exec(r.stderr)?.[1]) };
}

const dir = await mkdtemp(join(tmpdir(), 'govops-webhook-apply-'));
try {
  const m = join(dir, 'm');
  await mkdir(m);
  for (let f = 0; f * PER_FILE < N; f++) {
    const docs = [];
    for (let i = f * PER_FILE; i < Math.min(N, (f + 1) * PER_FILE); i++) docs.push(manifest(i));
    await writeFile(join(m, `f${f}.yaml`), docs.join('---\n'));
  }
  const runs = { bare: [], 'bare+yaml': [], 'bare+check+state': [], govops: [] };
  let posts;
  for (let r = 0; r < RUNS; r++) {
    for (const who of Object.keys(runs)) {
      const sb = await sandboxProcess({ transitionMs: 1 });
      try {
        const env = { GOVOPS_URL: sb.url, GOVOPS_TOKEN: sb.token, GOVOPS_SECRET_HOOK: SECRET, GOVOPS_LOG_LEVEL: 'error', NO_COLOR: '1' };
        const args =
          who === 'bare' ? ['--input-type=module', '-e', BARE]
          : who === 'bare+yaml' ? ['--input-type=module', '-e', BARE_YAML, m]
          : who === 'bare+check+state' ? ['--input-type=module', '-e', BARE_RECORDED, m]
          : [CLI, 'apply', m, '--state', join(dir, `state-${r}.json`), '--revision', 'bench'];
        runs[who].push(timed(args, env, dir));
        const c = await sb.counts();
        if (who === 'govops') posts = c;
        if (c.webhookPosts < N / BATCH) throw new Error(`${who}: ${c.webhookPosts} webhook POSTs`);
      } finally {
        await sb.close();
      }
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const bw = med(runs.bare.map((r) => r.ms));
  const bc = med(runs.bare.map((r) => r.cpu));
  console.log(`${N} webhooks into an empty service, cold processes, ${RUNS} alternating runs each (medians; min wall in brackets):`);
  console.log('  process            wall ms         x bare    CPU ms   x bare');
  for (const [k, xs] of Object.entries(runs)) {
    const w = med(xs.map((r) => r.ms));
    const c = med(xs.map((r) => r.cpu));
    console.log(`  ${k.padEnd(16)} ${w.toFixed(0).padStart(6)} (${Math.min(...xs.map((r) => r.ms)).toFixed(0).padStart(5)})  ${(w / bw).toFixed(2).padStart(6)}x  ${c.toFixed(0).padStart(7)}  ${(c / bc).toFixed(2).padStart(6)}x`);
  }
  console.log(`  govops requests (last run): ${posts.total} in all, ${posts.webhookPosts} webhook POSTs, ${posts.dryRuns} dry runs`);
  const floor = med(runs['bare+check+state'].map((r) => r.ms));
  console.log(`floor (reading, checking, posting, recording) / bare client: wall ${(floor / bw).toFixed(2)}x; govops beyond the floor ${(med(runs.govops.map((r) => r.ms)) - floor).toFixed(0)} ms`);
  console.log(`RATIO webhook apply / bare client: wall ${(med(runs.govops.map((r) => r.ms)) / bw).toFixed(2)}x, CPU ${(med(runs.govops.map((r) => r.cpu)) / bc).toFixed(2)}x (target <= 2x)`);
  console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
