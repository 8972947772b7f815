#!/usr/bin/env node
// Redaction with many secrets in force (issue #26): every output (log lines, plan text, /status, /metrics) passes
// through the redactor, which finds every encoded form of every secret in force. A daemon with a credential per
// integration holds thousands. Per size: the time to set up the forms, to take one value more in force (a rotated
// credential: the daemon's event loop waits for it), to redact one JSON log line (no secret in it, the common case) and
// one holding a secret, and a 1 MB JSON document. Then 5,000 values sharing their first characters (tokens of one kind).
// Run: npm run build && node bench/run.mjs redact
import { availableParallelism, loadavg } from 'node:os';
import { Redactor } from '../dist/util/redact.js';

const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*/+=';
let seed = 1;
const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const secret = () => Array.from({ length: 20 }, () => chars[Math.floor(rnd() * chars.length)]).join('');
const line = '{"level":30,"time":1700000000000,"app":"govops","kind":"Integration","name":"store-123","action":"create","msg":"applied"}\n';
const doc = JSON.stringify({ resources: Array.from({ length: 10_000 }, (_, i) => ({ kind: 'Integration', name: `store-${i}`, action: 'noop', syncState: 'synced' })) });
const per = (runs, fn) => {
  fn();
  const t = performance.now();
  for (let i = 0; i < runs; i++) fn();
  return (performance.now() - t) / runs;
};

console.log(`secrets in force  set-up ms  one more ms  clean line µs  line with a secret µs  ${(doc.length / 1e6).toFixed(1)} MB JSON ms`);
for (const n of [1, 10, 100, 1_000, 10_000]) {
  const values = Array.from({ length: n }, secret);
  const r = new Redactor();
  let t = performance.now();
  r.inForce(...values);
  r.redactText('x');
  const setup = performance.now() - t;
  t = performance.now();
  r.inForce(secret());
  r.redactText('x');
  const oneMore = performance.now() - t;
  const dirty = line.replace('applied', `service said ${values[n - 1]}`);
  const clean = per(2000, () => r.redactOutput(line)) * 1000;
  const withSecret = per(2000, () => r.redactOutput(dirty)) * 1000;
  if (r.redactOutput(dirty).includes(values[n - 1])) throw new Error('not redacted');
  const big = per(5, () => r.redactJsonText(doc));
  console.log(`${String(n).padStart(16)}  ${setup.toFixed(1).padStart(9)}  ${oneMore.toFixed(1).padStart(11)}  ${clean.toFixed(2).padStart(13)}  ${withSecret.toFixed(2).padStart(21)}  ${big.toFixed(1).padStart(14)}`);
}
// Values sharing their first characters (GitHub tokens `ghp_…`, JWTs with one header): every place in a text where those
// characters occur meets all their forms under one head of the index, unless it has levels (src/util/literal-matcher.ts).
console.log(`\nvalues sharing their beginning  in force  set-up ms  a line naming another µs  2,000 such lines ms`);
for (const [what, prefix, length] of [['ghp_ + 36', 'ghp_', 40], ['a JWT header (36)', 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.', 80]]) {
  const token = () => prefix + Array.from({ length: length - prefix.length }, () => chars[Math.floor(rnd() * 62)]).join('');
  const values = Array.from({ length: 5_000 }, token);
  const r = new Redactor();
  const t = performance.now();
  r.inForce(...values);
  r.redactText('x');
  const setup = performance.now() - t;
  const lines = Array.from({ length: 2_000 }, (_, i) => `{"level":30,"msg":"pushed with ${token()} to repo ${i}"}`);
  const one = per(2000, () => r.redactOutput(lines[7])) * 1000;
  const all = lines.join('\n');
  const many = per(3, () => r.redactText(all));
  if (!r.redactText(`x ${values[42]} y`).includes('[redacted]')) throw new Error('not redacted');
  console.log(`${what.padStart(30)}  ${'5000'.padStart(8)}  ${setup.toFixed(1).padStart(9)}  ${one.toFixed(1).padStart(24)}  ${many.toFixed(1).padStart(19)}`);
}
console.log(`${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}`);
