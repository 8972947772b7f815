#!/usr/bin/env node
// The pull-request preview's pure core at 2,000 resources (no network, no git): the per-resource diff of two
// revisions where every integration changed one field, then the comment for 2,000 touched resources, each with a
// live change, a dry run and drift, fitted under GitHub's 65,536 characters. Uses dist/.
import { diffRevisions } from '../dist/preview/pr-diff.js';
import { renderPreview } from '../dist/preview/render.js';
import { finish } from '../dist/preview/result.js';

const N = 2000;
const at = { file: 'm/x.yaml', line: 1, column: 1 };
const loaded = (name, port) => ({
  manifest: {
    apiVersion: 'govops/v1',
    kind: 'Integration',
    metadata: { name },
    spec: { type: 'sql_analytics', autoBootstrap: true, config: { host: `${name}.example.com`, database: 'd', schema: 's', username: 'u', password: { fromEnv: 'GOVOPS_SECRET_PW' }, port } },
  },
  source: at,
  dir: '/tmp',
  locate: () => at,
});
const base = Array.from({ length: N }, (_, i) => loaded(`int-${i}`, 1433));
const head = Array.from({ length: N }, (_, i) => loaded(`int-${i}`, 1434));

function time(label, fn, runs = 5) {
  fn();
  const ms = [];
  let out;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    out = fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label}: median ${ms[Math.floor(runs / 2)].toFixed(1)} ms`);
  return out;
}

const pr = time(`diffRevisions, ${N} changed integrations`, () => diffRevisions(base, head));
const resources = pr.map((p, i) => ({
  ...p,
  live: {
    action: 'update',
    adopt: false,
    id: String(i),
    status: 'enabled',
    reasons: [],
    changes: [{ path: 'config.port', before: 1433, after: 1434, sensitive: false, forcesReplace: false, fromPr: true }],
    forcesReplace: [],
  },
  dryRun: { status: 'passed', request: `PUT /integrations/${i}?dryRun=true`, tests: [{ name: 'Initial Validation: Basic Connection Test', status: 'passed', result: [] }] },
}));
const result = finish({
  formatVersion: 2,
  marker: '<!-- govops-preview -->',
  mode: 'live',
  revision: 'abc1234',
  base: { ref: 'main', mergeBase: 'f'.repeat(40), files: resources.map((r) => ({ status: 'M', file: `m/${r.name}.yaml` })) },
  valid: true,
  diagnostics: [],
  unknownSecrets: [],
  summary: { pr: { added: 0, changed: 0, renamed: 0, removed: 0 }, drift: 0, manualSteps: 0 },
  warnings: [],
  resources,
  drift: resources.map((r) => ({ resourceKind: 'Integration', name: r.name, action: 'update', touched: false, reasons: [], changes: [{ path: 'config.schema', before: 'a', after: 'b', sensitive: false, forcesReplace: false }] })),
  changed: false,
  exitCode: 0,
});
globalThis.gc?.();
const heap = process.memoryUsage().heapUsed;
const md = time(`renderPreview, ${N} touched resources + ${N} drifted`, () => renderPreview(result));
console.log(`comment: ${md.length} characters (limit 65,536); heap after setup ${(heap / 1048576).toFixed(0)} MiB`);
if (md.length >= 65_536) process.exit(1);
