#!/usr/bin/env node
// Runs every bench/*.bench.mjs in turn (against the built dist/). Results are printed;
// record them in bench/RESULTS.md with the date and the machine's core count.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import './no-extra-ca.mjs';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
console.log(`# govops bench — ${new Date().toISOString().slice(0, 10)} — ${cpus().length} cores — node ${process.version}`);
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.bench.mjs')).sort()) {
  if (only.length && !only.some((o) => file.includes(o))) continue;
  console.log(`\n## ${file}`);
  const res = spawnSync(process.execPath, ['--expose-gc', `${dir}/${file}`], { stdio: 'inherit' });
  if (res.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
