// A sandbox in its own process, so a benchmark measures govops' CPU and memory alone. Not a benchmark
// itself (no `.bench.` in the name): imported by them.
//   const sb = await sandboxProcess({ transitionMs: 50 });  sb.url, sb.token, await sb.counts(), await sb.close()
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.env.GOVOPS_SANDBOX_CHILD === '1') {
  const { startSandbox } = await import('../dist/sandbox/index.js');
  const opts = JSON.parse(process.env.GOVOPS_SANDBOX_OPTIONS ?? '{}');
  const sandbox = await startSandbox({ port: 0, ...opts });
  process.on('message', async (m) => {
    if (m === 'counts') {
      const c = { total: 0, status: 0, lists: 0, dryRuns: 0, writes: 0, webhookPosts: 0 };
      for (const r of sandbox.requests()) {
        c.total++;
        if (r.method === 'GET' && r.path.endsWith('/status')) c.status++;
        else if (r.method === 'GET' && r.path === '/integrations') c.lists++;
        else if (r.method === 'POST' && r.path === '/webhooks') c.webhookPosts++;
        else if (r.method !== 'GET') r.query.dryRun === 'true' ? c.dryRuns++ : c.writes++;
      }
      process.send({ counts: c });
    } else if (m === 'clear') {
      sandbox.clearRequests();
      process.send({ cleared: true });
    } else if (m === 'close') {
      await sandbox.close();
      process.exit(0);
    }
  });
  // The bench that started it ended without closing it (an uncaught error, process.exit, a kill): end too, or
  // the sandbox keeps its port and memory with no one to close it.
  process.once('disconnect', () => process.exit(0));
  process.send({ url: sandbox.url, token: sandbox.adminToken });
}

export async function sandboxProcess(options = {}) {
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, GOVOPS_SANDBOX_CHILD: '1', GOVOPS_SANDBOX_OPTIONS: JSON.stringify(options) },
    execArgv: ['--max-old-space-size=4096'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let exited = false;
  const ended = new Promise((resolve) => child.once('exit', (code, signal) => ((exited = true), resolve({ code, signal }))));
  // the answer to a request, or an error once the child has ended without giving it (never a wait for ever)
  const next = (key) => new Promise((resolve, reject) => {
    const on = (m) => {
      if (m && key in m) {
        child.off('message', on);
        resolve(m);
      }
    };
    child.on('message', on);
    ended.then(({ code, signal }) => {
      child.off('message', on);
      reject(new Error(`the sandbox process ended (${signal ?? `exit ${code}`}) before answering ${key}`));
    });
  });
  const { url, token } = await next('url');
  return {
    url,
    token,
    pid: child.pid,
    counts: async () => {
      const p = next('counts');
      child.send('counts');
      return (await p).counts;
    },
    clear: async () => {
      const p = next('cleared');
      child.send('clear');
      await p;
    },
    close: async () => {
      if (!exited && child.connected) child.send('close');
      await ended;
    },
  };
}
