#!/usr/bin/env node
// Fixed cost of a CLI start (issue #26): CPU of `govops --help` and of `govops validate` of one file, each a
// cold process of the built CLI, against `node -e 0` measured in the same run (runs alternate; medians).
// CPU = user + system of the child (all threads), read by report-cpu.cjs at exit. Also the ESM modules each
// loads (counted through a module hook; load-independent; the hook makes Node read a CommonJS entry through its ESM
// loader, so `--help` counts the one CommonJS file of the command). Targets: --help <= 1.3x, validate of 1 file <= 1.6x.
// Beside them two floors: the same output from an ESM entry using the same libraries and nothing of govops.
// Run: npm run build && node bench/run.mjs startup     (STARTUP_RUNS=15)
import './no-extra-ca.mjs';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { manifest } from './fixtures.mjs';

const RUNS = Number(process.env.STARTUP_RUNS ?? 15);
// the `govops` command as package.json's bin names it (dist/cli/govops.cjs: scripts/build-bin.mjs)
const PKG = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const CLI = fileURLToPath(new URL(`../${PKG.bin.govops}`, import.meta.url));
const REPORT_CPU = fileURLToPath(new URL('./report-cpu.cjs', import.meta.url));

const dir = await mkdtemp(join(tmpdir(), 'govops-startup-'));
try {
  const one = join(dir, 'one.yaml');
  await writeFile(one, manifest(0)); // an object_store integration, no secret
  // Floors: the least a Node ESM command line built on the same libraries does for the same output. `floor --help`:
  // an ESM entry that requires commander and prints a program's help; `floor validate`: the same plus js-yaml's
  // parse of the file and the kind's generated schema check (dist/manifests/validators), nothing else.
  const req = `import { createRequire } from 'node:module';\nconst require = createRequire(${JSON.stringify(fileURLToPath(new URL('../package.json', import.meta.url)))});\n`;
  const floorHelp = join(dir, 'floor-help.mjs');
  await writeFile(floorHelp, `${req}process.stdout.write(require('commander').program.name('govops').description('GitOps').helpInformation());\n`);
  // `floor --help, same text`: the same root help govops prints (its options, each command's term and description),
  // built by commander alone from literal data (read here, in the bench, from govops' own summaries and version), so
  // the child loads commander and nothing of govops. Its output must equal govops' (checked below).
  const { COMMAND_SUMMARIES } = await import('../dist/cli/commands/summaries.js');
  const { LOG_LEVELS } = await import('../dist/cli/log-levels.js');
  const { GOVOPS_VERSION } = await import('../dist/cli/version.js');
  const floorHelpText = join(dir, 'floor-help-text.mjs');
  await writeFile(floorHelpText, `${req}const { Command, Option, Help } = require('commander');
const S = ${JSON.stringify(COMMAND_SUMMARIES)};
const root = new Command('govops')
  .description('GitOps for the data-governance service: integrations and webhooks as YAML in Git')
  .version(${JSON.stringify(GOVOPS_VERSION)})
  .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
  .addOption(new Option('--log-level <level>', 'log level (default: env GOVOPS_LOG_LEVEL, else warn; info for run and sandbox)').choices(${JSON.stringify(LOG_LEVELS)}))
  .option('--no-color', 'disable colored output (color is used only on a TTY)')
  .addOption(new Option('--state-key <name>', "the state's name in a PostgreSQL state shared by several deployments (default: default)").env('GOVOPS_STATE_KEY'));
for (const [name, s] of Object.entries(S)) root.command(name).description(s.description);
root.configureHelp({ subcommandTerm(cmd) { return Object.hasOwn(S, cmd.name()) ? S[cmd.name()].term : Help.prototype.subcommandTerm.call(this, cmd); } });
root.parse(process.argv);
`);
  const floorValidate = join(dir, 'floor-validate.mjs');
  const check = fileURLToPath(new URL('../dist/manifests/validators/manifest.object_store.generated.cjs', import.meta.url));
  await writeFile(floorValidate, `${req}import { readFileSync } from 'node:fs';
const { program } = require('commander');
const yaml = require('js-yaml');
const generated = require(${JSON.stringify(check)});
generated.adviceKeyword = () => true;
const validate = Object.values(generated).find((f) => typeof f === 'function' && f !== generated.adviceKeyword);
for (const doc of yaml.loadAll(readFileSync(process.argv[2], 'utf8'))) if (!validate(doc)) process.exit(5);
process.stdout.write(program.name('govops').name() + ': 1 valid\\n');
`);
  const cases = {
    'node -e 0': ['-e', '0'],
    '--help': [CLI, '--help'],
    'validate 1 file': [CLI, 'validate', one],
    'floor --help': [floorHelp],
    'floor same help': [floorHelpText, '--help'],
    'floor validate': [floorValidate, one],
  };
  const env = { ...process.env, NO_COLOR: '1', GOVOPS_URL: '', GOVOPS_TOKEN: '' };
  const helpOf = (args) => spawnSync(process.execPath, args, { env, encoding: 'utf8' }).stdout;
  if (helpOf([floorHelpText, '--help']) !== helpOf([CLI, '--help'])) throw new Error('floor same help: not the text govops --help prints');

  // modules loaded (ESM, not node: builtins), once each
  const hooks = join(dir, 'hooks.mjs');
  await writeFile(hooks, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  if (!url.startsWith('node:')) appendFileSync(process.env.GOVOPS_BENCH_MODLOG, url + '\\n');\n  return next(url, context);\n}\n`);
  const register = join(dir, 'register.mjs');
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const modules = {};
  for (const [k, args] of Object.entries(cases)) {
    if (k === 'node -e 0' || k.startsWith('floor')) continue;
    const log = join(dir, `mods-${k.replace(/\W/g, '_')}.txt`);
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, ...args], { env: { ...env, GOVOPS_BENCH_MODLOG: log }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${k} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
    const urls = (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    modules[k] = { all: urls.length, ours: urls.filter((u) => u.includes('/dist/')).length };
  }

  const runs = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const [k, args] of Object.entries(cases)) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, ['--require', REPORT_CPU, ...args], { env, encoding: 'utf8' });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`${k} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
      runs[k].push({ ms, cpu: Number(/GOVOPS_BENCH_CPU ([\d.]+)/.exec(r.stderr)?.[1]) });
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = runs['node -e 0'];
  const bw = med(base.map((r) => r.ms));
  const bc = med(base.map((r) => r.cpu));
  console.log(`cold processes, ${RUNS} alternating runs each (medians; min in brackets):`);
  console.log('  process            wall ms        x bare   CPU ms        x bare   ESM modules (dist/)');
  for (const [k, xs] of Object.entries(runs)) {
    const w = med(xs.map((r) => r.ms));
    const c = med(xs.map((r) => r.cpu));
    const mods = modules[k] ? `${modules[k].all} (${modules[k].ours})` : '-';
    console.log(`  ${k.padEnd(16)} ${w.toFixed(0).padStart(6)} (${Math.min(...xs.map((r) => r.ms)).toFixed(0).padStart(4)})  ${(w / bw).toFixed(2).padStart(5)}x  ${c.toFixed(0).padStart(6)} (${Math.min(...xs.map((r) => r.cpu)).toFixed(0).padStart(4)})  ${(c / bc).toFixed(2).padStart(5)}x   ${mods}`);
  }
  const ratio = (k) => (med(runs[k].map((r) => r.cpu)) / bc).toFixed(2);
  console.log(`RATIO CPU vs node -e 0: --help ${ratio('--help')}x (target <= 1.3x), validate of 1 file ${ratio('validate 1 file')}x (target <= 1.6x)`);
  console.log(`floors (an ESM entry with the same libraries, nothing of govops): --help ${ratio('floor --help')}x, validate of 1 file ${ratio('floor validate')}x`);
  console.log(`floor of the --help target (commander alone printing the same help text): ${ratio('floor same help')}x; govops --help / it: ${(med(runs['--help'].map((r) => r.cpu)) / med(runs['floor same help'].map((r) => r.cpu))).toFixed(2)}x`);
  console.log(`load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
