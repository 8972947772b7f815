#!/usr/bin/env node
// Plan 5,000 resources (pure planner, no network): 4,000 integrations of mixed kinds + 1,000 webhooks,
// all unchanged (the daemon's steady state), then the same with 10% rotated secrets. Uses dist/.
import { toDesired } from '../dist/plan/desired.js';
import { planChanges } from '../dist/plan/planner.js';
import { renderText } from '../dist/plan/render-text.js';
import { withDefaults } from '../dist/manifests/schemas.js';
import { MASK, MASKED_KEYS } from '../dist/service/kinds.js';
import { newState } from '../dist/state/store.js';

const N_INT = 4000;
const N_HOOK = 1000;
const state = newState();
const src = { file: 'bench.yaml', line: 1, column: 1 };

function mask(v) {
  if (Array.isArray(v)) return v.map(mask);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, MASKED_KEYS.has(k) && typeof x === 'string' ? MASK : mask(x)]));
  return v;
}

function manifests(rotate) {
  const out = [];
  for (let i = 0; i < N_INT; i++) {
    const pw = rotate && i % 10 === 0 ? `rotated-${i}` : `pw-${i}`;
    const spec =
      i % 2 === 0
        ? { type: 'sql_analytics', autoBootstrap: true, config: { host: `sql-${i}.example.com`, database: 'd', schema: 's', username: 'u', password: pw } }
        : { type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: `https://lake-${i}.example.com`, httpPath: '/p', token: pw } };
    out.push({ apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: `int-${i}` }, spec });
  }
  for (let i = 0; i < N_HOOK; i++) {
    out.push({
      apiVersion: 'govops/v1',
      kind: 'Webhook',
      metadata: { name: `hook-${i}` },
      spec: { url: `https://hooks.example.com/${i}`, global: false, notificationType: ['modelCreated', 'tagCreated'], actionType: 'triggered', secret: `s-${i}` },
    });
  }
  return out;
}

const secretPathsOf = (m) => (m.kind === 'Webhook' ? ['spec.secret'] : m.spec.type === 'sql_analytics' ? ['spec.config.password'] : ['spec.config.token']);

// live + state as after a successful apply
const base = manifests(false).map((m) => toDesired(m, src, secretPathsOf(m), state.fingerprintKey));
const live = { integrations: [], webhooks: [] };
base.forEach((d, i) => {
  const id = String(i + 1);
  if (d.kind === 'Integration') {
    live.integrations.push({ id, status: 'enabled', validationResults: { status: 'passed', validationTests: [] }, type: d.body.type, autoBootstrap: true, config: mask(withDefaults(d.body.type, d.body.config)) });
  } else {
    const { secret, ...rest } = d.body;
    live.webhooks.push({ id, ...rest, createdBy: 1 });
  }
  state.resources.push({ kind: d.kind, name: d.name, id, origin: 'created', type: d.body.type, autoBootstrap: true, specHash: d.specHash, secretFingerprints: { ...d.fingerprints }, updatedAt: new Date().toISOString() });
});

function time(label, fn, runs = 5) {
  fn(); // warm-up
  const times = [];
  let result;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    result = fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`${label}: median ${times[Math.floor(runs / 2)].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[runs - 1].toFixed(1)})`);
  return result;
}

const options = { prune: false, allowReplace: false };
console.log(`resources: ${N_INT} integrations + ${N_HOOK} webhooks`);
const steady = manifests(false);
const rotated = manifests(true);
const desire = (ms) => ms.map((m) => toDesired(m, src, secretPathsOf(m), state.fingerprintKey));
time('toDesired (fingerprints + spec hash), 5,000 manifests', () => desire(steady));
// fresh desired objects each run (as in a real reconcile): no cached defaults
const p1 = time('toDesired + planChanges, no changes', () => planChanges({ desired: desire(steady), live, state, options }));
const p2 = time('toDesired + planChanges, 400 rotated secrets', () => planChanges({ desired: desire(rotated), live, state, options }));
time('renderText of the rotated plan', () => renderText(p2));
console.log(`check: ${p1.summary.noop} noop; rotated plan: ${p2.summary.update} to update`);
if (p1.summary.noop !== N_INT + N_HOOK || p2.summary.update !== N_INT / 10) process.exit(1);
