#!/usr/bin/env node
// `npm run test:image`: builds the container image with ../shared/tools/container-build.sh (podman; needs
// root) and runs it as the Kubernetes example does (uid 10001, read-only root file system, /tmp tmpfs, all
// capabilities dropped, no new privileges, a state volume at /data) against a sandbox started on the host
// with `govops sandbox`, in both source modes:
//   --dir   the shipped examples (/app/examples in the image)
//   --repo  a local bare Git repository mounted read-only into the container, plus a signed push
//           notification (POST /hooks/git) for a new commit while the fetch interval is 10 minutes
// Networking: the container shares the host's network namespace (--network=host) and everything listens
// on and talks to 127.0.0.1: no traffic leaves this machine.
// Checks /healthz, /readyz, that every example is reconciled (synced in /status, live in the sandbox), that
// `podman healthcheck run` passes while govops listens on a non-default --listen, that `podman stop` ends
// with exit 0 within the grace period and the state file is in the volume. Prints the image size and the
// time from `podman run` to /readyz 200. Not part of `npm test`. Exit 0 when every check passed.
import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The shared build script sits in shared/ beside the clone (../shared), or two levels up from a worktree.
const BUILD =
  process.env.GOVOPS_CONTAINER_BUILD ??
  [join(ROOT, '..', 'shared'), join(ROOT, '..', '..', 'shared')].map((d) => join(d, 'tools', 'container-build.sh')).find((f) => existsSync(f)) ??
  join(ROOT, '..', 'shared', 'tools', 'container-build.sh');
const TAG = process.env.GOVOPS_IMAGE_TAG ?? 'localhost/govops:image-test';
const UID = 10001;
const GRACE_S = 30; // govops --grace (the default), as in the Kubernetes example
const STOP_TIMEOUT_S = 45; // the example's terminationGracePeriodSeconds
// This machine's container runtime needs these (see container-build.sh: runc with cgroupfs, explicit ulimits).
const HOST_QUIRKS = ['--runtime', 'runc', '--cgroup-manager=cgroupfs', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
// As the Kubernetes example runs it: a read-only root with nothing writable but the volumes it declares (podman's
// --read-only also makes /run, /var/tmp and /dev/shm writable unless --read-only-tmpfs=false; Kubernetes does not).
const HARDENED = ['--network=host', '--user', `${UID}:${UID}`, '--read-only', '--read-only-tmpfs=false', '--tmpfs', '/tmp', '--cap-drop=ALL', '--security-opt', 'no-new-privileges'];

const { exampleEnvNames, exampleEnv } = await import(join(ROOT, 'dist/daemon/dev.js'));
const { loadManifests } = await import(join(ROOT, 'dist/manifests/loader.js'));
const { ServiceClient } = await import(join(ROOT, 'dist/api/client.js'));

const results = [];
/** Records and prints one check; `detail` is printed when it failed. */
function check(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? '  ok  ' : '  FAIL'} ${name}${!ok && detail ? `: ${detail}` : ''}`);
  return ok;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Run by the image's node: how many of the records in /app/dist/code-cache V8 accepts, and which not (and why). */
const RECORDS_ACCEPTED = `
const fs = require('fs'), vm = require('vm'), Module = require('module'), crypto = require('crypto');
const root = '/app/';
const index = JSON.parse(fs.readFileSync(root + 'dist/code-cache/index.json', 'utf8'));
if (index.v8 !== process.versions.v8) { console.log('recorded by V8 ' + index.v8 + ', the image runs ' + process.versions.v8); process.exit(1); }
if (index.flags) require('v8').setFlagsFromString(index.flags); // the command's flags (src/cli/v8-flags.ts), as it runs
let ok = 0; const not = [];
for (const [rel, e] of Object.entries(index.files)) {
  let text;
  try { text = fs.readFileSync(root + rel, 'utf8'); } catch { not.push(rel + ' (missing)'); continue; }
  if (crypto.createHash('sha1').update(text).digest('hex') !== e.sha1) { not.push(rel + ' (changed)'); continue; }
  const s = new vm.Script(Module.wrap(text), { filename: root + rel, cachedData: fs.readFileSync(root + 'dist/code-cache/' + e.cache), importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  if (s.cachedDataRejected) not.push(rel + ' (rejected)'); else ok++;
}
console.log(not.length ? ok + ' accepted, ' + not.length + ' not: ' + not.slice(0, 5).join(', ') : ok + ' accepted, 0 not');
`;

/** podman, bounded in time; returns { code, stdout, stderr } with podman's systemd-less timer noise removed. */
function podman(args, timeoutMs = 120_000) {
  const r = spawnSync('podman', args, { encoding: 'utf8', timeout: timeoutMs });
  const stderr = (r.stderr ?? '').split('\n').filter((l) => l && !/unable to get systemd connection/.test(l)).join('\n');
  return { code: r.status, stdout: (r.stdout ?? '').trim(), stderr };
}

let gitConfig;
function git(cwd, args) {
  // Host-side git runs as root on a repository owned by uid 10001 (the container's user owns what it
  // reads): a global config of its own trusts it (safe.directory is read from protected config only, and
  // the local transport's receive-pack does not inherit -c or GIT_CONFIG_COUNT).
  const env = { ...process.env, GIT_CONFIG_GLOBAL: gitConfig, GIT_CONFIG_NOSYSTEM: '1' };
  const r = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

async function get(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    let body = text;
    try {
      body = JSON.parse(text);
    } catch {
      // text
    }
    return { status: res.status, body };
  } catch (err) {
    return { status: 0, body: String(err) };
  }
}

async function until(what, fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${seconds(timeoutMs)}`);
    await sleep(200);
  }
}

/** `govops sandbox` on 127.0.0.1, a free port, dev tokens, quick transitions. */
async function startSandbox() {
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli/govops.cjs'), 'sandbox', '--host', '127.0.0.1', '--port', '0', '--dev', '--transition', '300ms'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = await until('sandbox listening', () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], 20_000);
  const token = /admin token: (\S+)/.exec(out)?.[1];
  return { child, url, token, stop: () => child.kill('SIGTERM') };
}

/** Every expected manifest is synced in /status, and the sandbox holds exactly them: the webhooks by name,
 * the integrations (which have no name in the service) by type, each `enabled`. */
async function checkReconciled(label, base, sandbox, expected) {
  const status = (await get(`${base}/status`)).body;
  const byKey = new Map((status.resources ?? []).map((r) => [`${r.kind}/${r.name}`, r]));
  const notSynced = expected.filter((e) => byKey.get(`${e.kind}/${e.name}`)?.syncState !== 'synced').map((e) => `${e.kind}/${e.name}`);
  check(`${label}: all ${expected.length} manifests synced in /status`, notSynced.length === 0, notSynced.length ? `not: ${notSynced.join(', ')}` : '');
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.token });
  try {
    const [integrations, webhooks] = [await api.listIntegrations(), await api.listWebhooks()];
    const count = (types) => JSON.stringify(Object.entries(types.reduce((m, t) => ({ ...m, [t]: (m[t] ?? 0) + 1 }), {})).sort());
    const wantTypes = count(expected.filter((e) => e.kind === 'Integration').map((e) => e.type));
    const haveTypes = count(integrations.map((i) => i.type));
    const notEnabled = integrations.filter((i) => i.status !== 'enabled').map((i) => `${i.id}:${i.status}`);
    check(`${label}: the sandbox holds one enabled integration per manifest, by type`, wantTypes === haveTypes && notEnabled.length === 0, `want ${wantTypes}, have ${haveTypes} ${notEnabled.join(' ')}`);
    const wantHooks = expected.filter((e) => e.kind === 'Webhook').map((e) => e.name).sort().join(',');
    const haveHooks = webhooks.map((w) => w.name).sort().join(',');
    check(`${label}: the sandbox holds the manifests' webhooks`, wantHooks === haveHooks, `want ${wantHooks}, have ${haveHooks}`);
  } finally {
    await api.close();
  }
  return status;
}

const cleanups = [];
async function cleanup() {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch {
      // keep cleaning
    }
  }
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => void cleanup().then(() => process.exit(130)));

/**
 * One container run: start, wait for /readyz, run the mode's checks, health check, stop.
 * Returns the time from `podman run` to /readyz 200.
 */
async function runMode({ label, sandbox, args, mounts, during, expected, tmp }) {
  const name = `govops-image-test-${label.replace(/\W/g, '')}-${process.pid}`;
  const volume = `${name}-data`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const names = await exampleEnvNames(join(ROOT, 'examples'));
  const envFile = join(tmp, `${label.replace(/\W/g, '')}.env`);
  writeFileSync(envFile, Object.entries(exampleEnv(names, {})).map(([k, v]) => `${k}=${v}`).join('\n') + `\nGOVOPS_URL=${sandbox.url}\n`);
  const tokenFile = join(tmp, 'token');
  writeFileSync(tokenFile, `${sandbox.token}\n`, { mode: 0o444 });
  cleanups.push(() => podman(['rm', '-f', '-t', '0', name]), () => podman(['volume', 'rm', '-f', volume]));
  check(`${label}: state volume created`, podman(['volume', 'create', volume]).code === 0);
  const started = Date.now();
  const run = podman([
    'run', '-d', '--name', name, ...HOST_QUIRKS, ...HARDENED,
    '-v', `${volume}:/data`, '-v', `${tokenFile}:/run/govops/token:ro`, ...mounts, '--env-file', envFile,
    TAG, 'run', ...args, '--listen', `127.0.0.1:${port}`, '--token-file', '/run/govops/token', '--grace', `${GRACE_S}s`,
  ]);
  if (!check(`${label}: container started`, run.code === 0, run.stderr)) return undefined;
  let readyMs;
  try {
    await until('/readyz 200', async () => (await get(`${base}/readyz`)).status === 200, 120_000);
    readyMs = Date.now() - started;
    check(`${label}: ready (/readyz 200) ${seconds(readyMs)} after podman run`, true);
  } catch (err) {
    check(`${label}: /readyz 200`, false, `${err.message}; last answer ${JSON.stringify((await get(`${base}/readyz`)).body)}`);
    console.log(podman(['logs', '--tail', '40', name]).stdout);
    return undefined;
  }
  const healthz = await get(`${base}/healthz`);
  check(`${label}: /healthz 200`, healthz.status === 200, `got ${healthz.status}`);
  check(`${label}: /readyz 200`, (await get(`${base}/readyz`)).status === 200);
  await checkReconciled(label, base, sandbox, expected);
  const metrics = String((await get(`${base}/metrics`)).body);
  check(`${label}: /metrics has govops_reconcile_total{result="failed"} 0`, /govops_reconcile_total\{result="failed"\} 0\n/.test(metrics));
  if (during) await during({ base, name });

  const configured = podman(['inspect', name, '--format', '{{json .Config.Healthcheck}}']);
  check(`${label}: the image's HEALTHCHECK is kept`, /healthcheck/.test(configured.stdout), configured.stdout);
  const unhealthy = podman(['exec', name, 'govops', 'healthcheck', '--listen', `127.0.0.1:${await freePort()}`], 30_000);
  check(`${label}: govops healthcheck fails (exit 1) where nothing answers`, unhealthy.code === 1, `${unhealthy.code} ${unhealthy.stdout}`);
  const health = podman(['healthcheck', 'run', name], 30_000);
  check(`${label}: podman healthcheck run passes with --listen 127.0.0.1:${port} (image default GOVOPS_LISTEN=:8080)`, health.code === 0, `${health.code} ${health.stdout} ${health.stderr}`);

  const stopStart = Date.now();
  const stop = podman(['stop', '-t', String(STOP_TIMEOUT_S), name], (STOP_TIMEOUT_S + 30) * 1000);
  const stopMs = Date.now() - stopStart;
  const exit = podman(['inspect', name, '--format', '{{.State.ExitCode}}']).stdout;
  check(`${label}: podman stop: exit code 0 after ${seconds(stopMs)} (grace ${GRACE_S} s, stop timeout ${STOP_TIMEOUT_S} s)`, stop.code === 0 && exit === '0' && stopMs < GRACE_S * 1000, `exit ${exit} ${stop.stderr}`);
  const logs = podman(['logs', name]);
  check(`${label}: logged "govops run stopped"`, /govops run stopped/.test(logs.stdout + logs.stderr));
  check(`${label}: the dev token never appears in the logs`, !(logs.stdout + logs.stderr).includes(sandbox.token));
  const state = podman(['run', '--rm', ...HOST_QUIRKS, ...HARDENED, '--no-healthcheck', '-v', `${volume}:/data`, '--entrypoint', 'test', TAG, '-s', '/data/.govops/state.json']);
  check(`${label}: state file kept in the volume (/data/.govops/state.json)`, state.code === 0, state.stderr);
  return readyMs;
}

async function main() {
  if (process.getuid?.() !== 0) {
    console.error('test:image needs root (podman builds and runs the image as root here)');
    process.exit(2);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'govops-image-'));
  chmodSync(tmp, 0o755);
  cleanups.push(() => rmSync(tmp, { recursive: true, force: true }));

  console.log(`# build: ${BUILD} ${ROOT} ${TAG}`);
  const build = spawnSync('bash', [BUILD, ROOT, TAG], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 900_000 });
  for (const l of `${build.stderr}\n${build.stdout}`.split('\n')) if (/^container-build:|MB$/.test(l)) console.log(`  ${l}`);
  if (!check('image built', build.status === 0, build.status === 0 ? '' : build.stderr.slice(-2000))) return;
  const sizeMb = Number(podman(['image', 'inspect', TAG, '--format', '{{.Size}}']).stdout) / 1e6;
  const tools = podman(['run', '--rm', ...HOST_QUIRKS, ...HARDENED, '--no-healthcheck', '--entrypoint', 'sh', TAG, '-c', 'git --version && ssh -V 2>&1 && tini --version && node --version && ! command -v npm']);
  check(`image has git, openssh-client, tini and node, and no npm (${tools.stdout.replace(/\n/g, '; ')})`, tools.code === 0, tools.stderr);
  check(`image size ${sizeMb.toFixed(0)} MB < 300 MB`, sizeMb < 300);
  // the govops command (one CommonJS file for the root's help and version, main.cjs for the rest) on the image's Node
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const cli = podman(['run', '--rm', ...HOST_QUIRKS, ...HARDENED, '--no-healthcheck', TAG, '--version']);
  check(`govops --version in the image prints ${version}`, cli.code === 0 && cli.stdout.trim() === version, cli.stdout + cli.stderr);
  const help = podman(['run', '--rm', ...HOST_QUIRKS, ...HARDENED, '--no-healthcheck', TAG, 'validate', '--help']);
  // nothing on stderr: V8 prints "unrecognized flag" for a flag its version lacks (src/cli/v8-flags.ts, set by every command)
  check('govops validate --help in the image, nothing on stderr', help.code === 0 && help.stdout.includes('Usage: govops validate') && help.stderr.trim() === '', help.stdout + help.stderr);
  // the compiled code the build stage recorded (dist/code-cache: src/cli/code-cache.ts) is accepted by the image's Node:
  // each recorded file is there with the text it was recorded for, and V8 takes its record
  const records = podman(['run', '--rm', ...HOST_QUIRKS, ...HARDENED, '--no-healthcheck', '--entrypoint', 'node', TAG, '-e', RECORDS_ACCEPTED]);
  check(`the command's recorded compiled code is accepted by the image's Node (${records.stdout.trim()})`, records.code === 0 && / accepted, 0 not$/.test(records.stdout.trim()), records.stderr);

  const examples = await loadManifests([join(ROOT, 'examples')], { cwd: ROOT });
  const expected = examples.manifests.map(({ manifest: m }) => ({ kind: m.kind, name: m.metadata.name, type: m.spec.type }));
  check(`examples load (${expected.length} manifests)`, expected.length > 0 && examples.diagnostics.every((d) => d.severity !== 'error'));

  // --dir: the examples shipped in the image.
  console.log('# --dir /app/examples');
  const sandboxA = await startSandbox();
  cleanups.push(() => sandboxA.stop());
  const dirReady = await runMode({ label: '--dir', sandbox: sandboxA, args: ['--dir', '/app/examples', '--self-heal', '--prune', '--max-deletes', '5'], mounts: [], expected, tmp });
  sandboxA.stop();

  // --repo: a local bare repository holding the examples under manifests/, owned by the container's user.
  console.log('# --repo (local bare repository) + push notification');
  gitConfig = join(tmp, 'gitconfig');
  writeFileSync(gitConfig, '[safe]\n\tdirectory = *\n[user]\n\tname = image test\n\temail = image-test@example.com\n');
  const work = join(tmp, 'work');
  const bare = join(tmp, 'cfg.git');
  mkdirSync(join(work, 'manifests'), { recursive: true });
  for (const f of readdirSync(join(ROOT, 'examples')).filter((f) => /\.ya?ml$/.test(f))) cpSync(join(ROOT, 'examples', f), join(work, 'manifests', f));
  git(tmp, ['init', '-q', '--bare', '-b', 'main', bare]);
  git(work, ['init', '-q', '-b', 'main']);
  git(work, ['add', '-A']);
  git(work, ['commit', '-qm', 'examples']);
  git(work, ['push', '-q', bare, 'main']);
  const sha1 = git(work, ['rev-parse', 'HEAD']);
  spawnSync('chown', ['-R', `${UID}:${UID}`, bare]);
  chownSync(bare, UID, UID);
  const hookSecret = 'image-test-hook-secret';
  const hookFile = join(tmp, 'hook-secret');
  writeFileSync(hookFile, hookSecret, { mode: 0o444 });
  const sandboxB = await startSandbox();
  cleanups.push(() => sandboxB.stop());
  const repoReady = await runMode({
    label: '--repo',
    sandbox: sandboxB,
    // A 10-minute fetch interval: after the first fetch, only the push notification makes it look again.
    args: ['--repo', '/git/cfg.git', '--branch', 'main', '--path', 'manifests', '--interval', '10m', '--self-heal', '--prune',
      '--git-webhook-secret-file', '/run/govops/hook-secret'],
    mounts: ['-v', `${bare}:/git/cfg.git:ro`, '-v', `${hookFile}:/run/govops/hook-secret:ro`],
    expected,
    tmp,
    during: async ({ base, name }) => {
      const before = (await get(`${base}/status`)).body;
      check('--repo: the first revision applied is the repository\'s commit', before.revision?.lastApplied === sha1, `${before.revision?.lastApplied} vs ${sha1}`);
      writeFileSync(
        join(work, 'manifests', 'image-push-test.yaml'),
        'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: image-push-test\nspec:\n  url: https://hooks.example.com/image-test\n  global: false\n  notificationType: [healthCheckFailed]\n  actionType: triggered\n',
      );
      git(work, ['add', '-A']);
      git(work, ['commit', '-qm', 'add a webhook']);
      git(work, ['push', '-q', bare, 'main']);
      const sha2 = git(work, ['rev-parse', 'HEAD']);
      const body = JSON.stringify({ ref: 'refs/heads/main', after: sha2 });
      const res = await fetch(`${base}/hooks/git`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-hub-signature-256': `sha256=${createHmac('sha256', hookSecret).update(body).digest('hex')}`,
        },
        body,
      });
      const answer = await res.json().catch(() => ({}));
      check('--repo: signed push notification accepted (202)', res.status === 202 && answer.accepted === true, `${res.status} ${JSON.stringify(answer)}`);
      const applied = await until('new commit applied', async () => {
        const s = (await get(`${base}/status`)).body;
        return s.revision?.lastApplied === sha2 ? s : undefined;
      }, 60_000).catch(() => undefined);
      if (!check('--repo: the pushed commit is applied at once (fetch interval 10m)', Boolean(applied))) {
        console.log(JSON.stringify((await get(`${base}/status`)).body.revision), podman(['logs', '--tail', '30', name]).stdout);
      }
      await checkReconciled('--repo after the push', base, sandboxB, [...expected, { kind: 'Webhook', name: 'image-push-test' }]);
    },
  });
  sandboxB.stop();

  console.log('# summary');
  console.log(`image ${TAG}: ${sizeMb.toFixed(0)} MB`);
  console.log(`start to ready (podman run -> /readyz 200): --dir ${dirReady === undefined ? 'n/a' : seconds(dirReady)}, --repo ${repoReady === undefined ? 'n/a' : seconds(repoReady)}`);
}

try {
  await main();
} catch (err) {
  check('test:image ran to the end', false, err instanceof Error ? err.stack : String(err));
} finally {
  await cleanup();
}
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
