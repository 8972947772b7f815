#!/usr/bin/env node
// Last build step before the stamp: records the compiled code the `govops` command runs from (src/cli/code-cache.ts)
// into dist/code-cache/. It runs the built command, each run with scripts/code-cache-record.mjs preloaded, one after
// another, against a sandbox of its own on 127.0.0.1 and the examples: validate, plan, apply, plan again, export,
// webhooks list, state list, the whole program's help, and the daemon until its first reconcile. Each run writes
// what it compiled, and starts from what the runs before it wrote, so the cache holds what all of them compiled.
// V8 only accepts the cache in a process of the same V8 version and flags; anything it rejects, or that no run
// compiled, is compiled as usual, so a failed step here only makes the command slower: it is reported and the build
// goes on.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'dist/cli/govops.cjs');
const recorder = pathToFileURL(join(root, 'scripts/code-cache-record.mjs')).href;
const examples = join(root, 'examples');
const work = mkdtempSync(join(tmpdir(), 'govops-code-cache-'));
const state = join(work, 'state.json');
rmSync(join(root, 'dist/code-cache'), { recursive: true, force: true });

// The examples' credentials (fromEnv) as made-up values; the sandbox's fixed dev tokens.
const secrets = {};
for (const f of existsSync(examples) ? readdirSync(examples).filter((n) => n.endsWith('.yaml')) : []) {
  for (const m of readFileSync(join(examples, f), 'utf8').matchAll(/fromEnv:\s*([A-Z0-9_]+)/g)) secrets[m[1]] = `code-cache-${m[1].toLowerCase()}`;
}
const env = { ...process.env, ...secrets, NO_COLOR: '1', GOVOPS_LOG_LEVEL: 'warn' };
for (const k of Object.keys(env)) if (k.startsWith('GOVOPS_') && !(k in secrets) && k !== 'GOVOPS_LOG_LEVEL') delete env[k];
delete env.NODE_OPTIONS;

let failures = 0;
const warn = (what) => {
  failures++;
  console.error(`build-code-cache: ${what} (the cache covers less; the command still works)`);
};

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function until(what, check, ms = 60_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  warn(`${what}: timed out`);
  return false;
}

const stopped = (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));

const sandboxPort = await freePort();
const sandbox = spawn(process.execPath, [bin, 'sandbox', '--port', String(sandboxPort), '--dev', '--transition', '20ms'], { cwd: work, env, stdio: 'ignore' });
const url = `http://127.0.0.1:${sandboxPort}`;
try {
  if (!existsSync(examples)) warn(`no ${examples} to run the commands on`);
  else if (await until('the sandbox', async () => (await fetch(`${url}/integrations`, { headers: { authorization: 'govops-dev-admin-token' } })).ok)) {
    Object.assign(env, { GOVOPS_URL: url, GOVOPS_TOKEN: 'govops-dev-admin-token' });
    const runs = [
      ['validate', examples],
      ['plan', examples, '--state', state],
      ['apply', examples, '--state', state, '--log-level', 'info'],
      ['plan', examples, '--state', state, '-o', 'json'],
      ['export', '--out', join(work, 'export')],
      ['webhooks', 'list', '--state', state],
      ['state', 'list', '--state', state],
      ['--no-color', '--help'],
    ];
    for (const args of runs) {
      const r = spawnSync(process.execPath, ['--import', recorder, bin, ...args], { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
      if (r.status !== 0) warn(`govops ${args[0]} exited ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
    }
    const listen = await freePort();
    const daemon = spawn(process.execPath, ['--import', recorder, bin, 'run', '--dir', examples, '--state', state, '--listen', `127.0.0.1:${listen}`], {
      cwd: work,
      env,
      stdio: 'ignore',
    });
    await until('the daemon\'s first reconcile', async () => Boolean((await (await fetch(`http://127.0.0.1:${listen}/status`)).json()).lastReconcile));
    daemon.kill('SIGTERM');
    await stopped(daemon);
    if (daemon.exitCode !== 0) warn(`govops run exited ${daemon.exitCode ?? daemon.signalCode} on SIGTERM`);
  }
} finally {
  sandbox.kill('SIGTERM');
  await stopped(sandbox);
  rmSync(work, { recursive: true, force: true });
}
let files = 0;
try {
  files = Object.keys(JSON.parse(readFileSync(join(root, 'dist/code-cache/index.json'), 'utf8')).files).length;
} catch {
  warn('no index written');
}
console.log(`build-code-cache: compiled code of ${files} files in dist/code-cache${failures ? ` (${failures} steps failed)` : ''}`);
