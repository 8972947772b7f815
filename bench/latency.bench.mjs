// Latency from a change to the start of its apply: (a) a commit + push notification (Git source),
// (b) a file save in a watched folder (directory source). Target: < 2 s. Uses the built dist/.
// For (a) also from the signed push hook alone (the commit already pushed) to the first write: issue #26,
// median of 10 (ROUNDS), target < 100 ms.
// "reconcile start": the loop picked the revision; "first write": the first mutating request
// (the apply's dry run) reached the service (sandbox, in-process, transitionMs 50).
import './no-extra-ca.mjs';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRunning } from '../dist/daemon/run.js';
import { ServiceClient } from '../dist/api/client.js';
import { startSandbox } from '../dist/sandbox/index.js';
import { silentLogger } from '../dist/log.js';
import { signedPush } from './push-hook.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const SECRET = 'bench-secret';
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@example.com' };
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

const manifest = (path) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: lake
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://lake.example.com
    httpPath: ${path}
    token: { fromEnv: GOVOPS_SECRET_BENCH_LAKE_TOKEN }
`;

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const med = s[Math.floor(s.length / 2)];
  return `median ${med.toFixed(0)} ms, min ${s[0].toFixed(0)} ms, max ${s.at(-1).toFixed(0)} ms (n=${s.length})`;
}

async function waitFor(check, timeoutMs = 15000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function measure(name, { settings, prepare, change }) {
  const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
  const running = await startRunning(
    { ...settings, env: { ...process.env, GOVOPS_SECRET_BENCH_LAKE_TOKEN: 'bench-token' } },
    silentLogger(),
    (onRequest) => new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest }),
  );
  const { daemon } = running;
  await waitFor(() => daemon.loop.snapshot().lastApplied);
  await daemon.loop.idle();
  const toStart = [];
  const toWrite = [];
  const fromTrigger = [];
  for (let i = 1; i <= ROUNDS; i++) {
    sandbox.clearRequests();
    const started = daemon.nextStart();
    const t0 = performance.now();
    await prepare?.(i);
    const t1 = performance.now();
    await change(i, daemon.url);
    await started;
    toStart.push(performance.now() - t0);
    await waitFor(() => sandbox.requests().some((r) => r.method === 'PUT' || r.method === 'POST'));
    toWrite.push(performance.now() - t0);
    if (prepare) fromTrigger.push(performance.now() - t1);
    await waitFor(() => daemon.loop.snapshot().lastApplied?.revision === daemon.loop.snapshot().lastAttempt?.revision);
    await daemon.loop.idle();
  }
  await running.shutdown(5000);
  await sandbox.close();
  console.log(`${name}: to reconcile start ${stats(toStart)}`);
  console.log(`${name}: to first write   ${stats(toWrite)}  ${Math.max(...toWrite) < 2000 ? 'OK (< 2 s)' : 'OVER 2 s'}`);
  if (fromTrigger.length) {
    const med = [...fromTrigger].sort((a, b) => a - b)[Math.floor(fromTrigger.length / 2)];
    console.log(`signed push hook -> first write: ${stats(fromTrigger)}  (target: median < 100 ms: ${med < 100 ? 'OK' : 'OVER'})`);
  }
}

const base = await mkdtemp(join(tmpdir(), 'govops-bench-'));
try {
  // (a) Git: commit + push notification; the interval is long, so only the notification triggers a fetch.
  const bare = join(base, 'remote.git');
  const work = join(base, 'work');
  git(base, 'init', '-q', '--bare', '--initial-branch=main', bare);
  git(base, 'init', '-q', '--initial-branch=main', work);
  git(work, 'remote', 'add', 'origin', bare);
  const commit = async (path) => {
    await writeFile(join(work, 'lake.yaml'), manifest(path));
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', path);
    git(work, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
    return git(work, 'rev-parse', 'HEAD');
  };
  await commit('/sql/0');
  let pushed; // the commit of this round's push, named in its notification (each round is its own delivery)
  const common = {
    branch: 'main', path: '.', intervalMs: 600_000, resyncMs: 600_000, selfHeal: false,
    plan: { prune: false, allowReplace: false }, listen: { host: '127.0.0.1', port: 0 }, hookSecret: SECRET,
  };
  await measure('commit+push+notification (git)', {
    settings: { ...common, repo: bare, statePath: join(base, 'git-state', 'state.json'), workdir: join(base, 'git-state', 'work') },
    prepare: async (i) => (pushed = await commit(`/sql/${i}`)),
    change: async (i, url) => {
      const { body, headers } = signedPush(SECRET, { ref: 'refs/heads/main', after: pushed });
      const res = await fetch(`${url}/hooks/git`, { method: 'POST', body, headers });
      if (res.status !== 202) throw new Error(`hook ${res.status}: ${await res.text()}`);
    },
  });

  // (b) Directory: a file save (debounce 300 ms, the default).
  const dir = join(base, 'dir');
  await mkdir(dir);
  await writeFile(join(dir, 'lake.yaml'), manifest('/sql/0'));
  await measure('file save (dir)', {
    settings: { ...common, dir, statePath: join(base, 'dir-state', 'state.json'), workdir: join(base, 'dir-state', 'work') },
    change: async (i) => writeFile(join(dir, 'lake.yaml'), manifest(`/sql/${i}`)),
  });
} finally {
  await rm(base, { recursive: true, force: true });
}
