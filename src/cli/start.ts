#!/usr/bin/env node
/**
 * `npm start`: an embedded sandbox (dev tokens, port 8088 or a free one) and the daemon watching
 * examples/ (state in .govops/), so a newcomer sees resources created, polled to `enabled`, and can
 * edit an example and watch it applied. Ctrl-C stops both.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { ServiceClient } from '../api/client.js';
import {
  connectionEnv,
  exampleEnvNames,
  exportLine,
  persistentExampleEnv,
  startOnPort,
  writeEnvFile,
} from '../daemon/dev.js';
import { startRunning, type RunningDaemon } from '../daemon/run.js';
import { ErrorCode, UserError } from '../errors.js';
import { createLogger } from '../log.js';
import { startSandbox, type SandboxHandle } from '../sandbox/index.js';
import { acquireStateLock, type StateLock } from '../state/lock.js';
import { ensureDir } from '../util/fs.js';
import { redactText } from '../util/redact.js';
import { reportFatal } from './fatal.js';
import { dropOutputWhenReaderLeaves } from './closed-output.js';
import { resolveLogLevel } from './context.js';

const HOST = '127.0.0.1';
const SANDBOX_PORT = 8088;
const DAEMON_PORT = 8080;

/** Preferred ports can be changed (0 = any free port); busy ones fall back to a free port. */
function envPort(name: string, fallback: number): number {
  const v = process.env[name];
  return v && /^\d{1,5}$/.test(v) && Number(v) <= 65535 ? Number(v) : fallback;
}

/**
 * One `npm start` per clone: a second one would share the state file and the sandbox data. The lock is
 * the state lock's mechanism (a file created whole, stale when its process is gone); `start.json` says where the
 * running one is.
 */
async function lockClone(home: string): Promise<StateLock> {
  try {
    return await acquireStateLock(join(home, 'start'));
  } catch (err) {
    if (!(err instanceof UserError) || err.code !== ErrorCode.stateLocked) throw err;
    let where = '';
    try {
      const running = JSON.parse(await readFile(join(home, 'start.json'), 'utf8')) as { pid?: number; daemon?: string; sandbox?: string };
      where = ` (pid ${running.pid}: daemon ${running.daemon}, sandbox ${running.sandbox})`;
    } catch {
      // still starting: no addresses yet
    }
    throw new UserError(
      `npm start is already running in this folder${where}; a second one would share .govops/state.json and the sandbox data`,
      'use the running one (its banner has the lines to copy, also in .govops/env.sh), stop it with Ctrl-C in its terminal, or run npm start in another clone',
    );
  }
}

/** The examples folder, by the path the user knows (`examples`), so the log and /status name `examples/lakehouse.yaml`. */
function examplesFolder(): { path: string; shown: string } {
  const examplesPath = fileURLToPath(new URL('../../examples', import.meta.url));
  const shown = relative(process.cwd(), examplesPath) || '.';
  return { path: shown.startsWith('..') || isAbsolute(shown) ? examplesPath : shown, shown };
}

/** The daemon watching the examples, self-heal and prune on, against the embedded sandbox. */
function startDaemon(port: number, examples: string, home: string, sandbox: SandboxHandle, logger: Logger): Promise<RunningDaemon> {
  return startRunning(
    {
      dir: examples,
      branch: 'main',
      path: '.',
      intervalMs: 60_000,
      resyncMs: 30_000, // short, so a newcomer sees drift repaired quickly (the daemon default is 5m)
      selfHeal: true,
      plan: { prune: true, allowReplace: false, manualSteps: 'require' },
      listen: { host: HOST, port, loopbackOnly: true },
      statePath: join(home, 'state.json'),
      workdir: join(home, 'work'),
      env: process.env,
      webhookHealth: { intervalMs: 30_000 }, // delivery failures of the example webhooks show in /status
    },
    logger,
    (onRequest) => new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger, onRequest }),
  );
}

interface Banner {
  url: string;
  sandbox: SandboxHandle;
  shownExamples: string;
  examples: string;
  home: string;
  envFile: string;
  connection: ReturnType<typeof connectionEnv>;
  names: string[];
  generated: Record<string, string>;
  busy: string[];
}

/** What is running, and the lines to copy into another terminal. */
function banner(b: Banner): string {
  const shownEnv = relative(process.cwd(), b.envFile);
  const fromEnv = b.names.length - Object.keys(b.generated).length;
  return [
    '',
    'govops is running (Ctrl-C to stop)',
    `  daemon     ${b.url}   (watching ${b.shownExamples}/, self-heal and prune on, drift check every 30s)`,
    `  sandbox    ${b.sandbox.url}   (admin token: ${b.sandbox.adminToken})`,
    ...b.busy.map((x) => `  note       ${x}`),
    `  state      ${relative(process.cwd(), join(b.home, 'state.json'))}`,
    `  secrets    ${b.names.length} GOVOPS_SECRET_EXAMPLE_* variables: ${Object.keys(b.generated).length} dummy values (kept in ${relative(process.cwd(), join(b.home, 'example-env.json'))}), ${fromEnv} from your environment`,
    `  webhooks   delivery health polled every 30s (/status: webhookHealth)`,
    `  try it     edit ${b.shownExamples}/lakehouse.yaml (e.g. httpPath) and save: the daemon sees it within seconds`,
    '',
    `In another terminal, in this folder, copy these lines (they are for this run${b.busy.length ? ': not the default ports' : ''}):`,
    `  . ${shownEnv}        # the line below, plus the example secrets${fromEnv ? ` (set your own ${fromEnv} there too)` : ''}`,
    `  ${exportLine(b.connection)}`,
    `  curl -s ${b.url}/status | grep -E '"(latest|result|name|syncState)":'   # revision, last reconcile, per-resource state`,
    `  curl -s ${b.url}/metrics | grep ^govops_`,
    `  curl -s -H 'Authorization: ${b.sandbox.adminToken}' ${b.sandbox.url}/integrations`,
    `  npx govops plan ${b.examples}`,
    '',
  ].join('\n') + '\n';
}

/** Once the first reconcile is over, say how it went and where to look (the banner has scrolled away). */
function announceFirstReconcile(running: RunningDaemon, url: string): void {
  void running.daemon.loop.idle().then(() => {
    const s = running.daemon.loop.snapshot();
    const a = s.lastAttempt;
    if (!a) return;
    const count = running.daemon.status().resources as unknown[];
    process.stdout.write(redactText(
      `\ngovops: first reconcile ${a.verdict} (${count.length} resources, ${a.durationSec.toFixed(1)}s)` +
        `${a.error ? `: ${a.error}` : ''}; status: curl -s ${url}/status\n\n`,
    ));
  });
}

/** Until SIGINT or SIGTERM: then the daemon and the sandbox are stopped. */
function untilStopped(running: RunningDaemon, sandbox: SandboxHandle, logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping govops and the sandbox');
      void running
        .shutdown(10_000)
        .then(() => sandbox.close())
        .then(resolve, resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

async function main(): Promise<void> {
  const { path: examples, shown: shownExamples } = examplesFolder();
  const home = join(process.cwd(), '.govops');
  await ensureDir(home, { what: "npm start's folder", hint: 'run npm start in a folder you can write (the clone of govops)' });
  const lock = await lockClone(home);
  const tty = Boolean(process.stdout.isTTY);
  const logger = createLogger({ level: resolveLogLevel(undefined, process.env.GOVOPS_LOG_LEVEL, 'run'), pretty: tty && !process.env.NO_COLOR });

  const names = await exampleEnvNames(examples);
  const generated = await persistentExampleEnv(names, process.env, join(home, 'example-env.json'));
  Object.assign(process.env, generated);

  const sandboxPort = envPort('GOVOPS_START_SANDBOX_PORT', SANDBOX_PORT);
  const started = await startOnPort(sandboxPort, (port) =>
    startSandbox({ port, host: HOST, dev: true, transitionMs: 2000, dataFile: join(home, 'sandbox-data.json'), logger: logger.child({ component: 'sandbox' }) }),
  );
  const sandbox = started.value;
  const daemonPort = envPort('GOVOPS_START_PORT', DAEMON_PORT);
  let daemon;
  try {
    daemon = await startOnPort(daemonPort, (port) => startDaemon(port, examples, home, sandbox, logger));
  } catch (err) {
    await sandbox.close();
    await lock.release();
    throw err;
  }
  const running = daemon.value;
  const url = running.daemon.url;
  const connection = connectionEnv(sandbox.url, sandbox.adminToken, url);
  const envFile = join(home, 'env.sh');
  await writeEnvFile(envFile, connection, generated);
  await writeFile(join(home, 'start.json'), `${JSON.stringify({ pid: process.pid, daemon: url, sandbox: sandbox.url })}\n`);
  const busy = [
    ...(started.busy ? [`port ${sandboxPort} was busy (another program or another govops): the sandbox is on ${sandbox.url}`] : []),
    ...(daemon.busy ? [`port ${daemonPort} was busy (another program or another govops): the daemon is on ${url}`] : []),
  ];
  // The signal handlers first: a SIGTERM sent on reading the banner (a script, a test) found the default action still
  // in place when the process was descheduled between the two, and killed it (no cleanup, exit by the signal).
  const stopped = untilStopped(running, sandbox, logger);
  process.stdout.write(banner({ url, sandbox, shownExamples, examples, home, envFile, connection, names, generated, busy }));
  announceFirstReconcile(running, url);
  await stopped;
  // The addresses of this run are gone: a stale env.sh would point a later terminal at whoever takes the ports.
  await rm(envFile, { force: true });
  await rm(join(home, 'start.json'), { force: true });
  await lock.release();
  logger.info('govops and the sandbox stopped');
  process.exitCode = 0;
  setTimeout(() => process.exit(0), 2000).unref();
}

// An error nothing caught ends the process with exit code 1, reported through the redactor (as in main.ts).
const crash = (err: unknown): void => {
  reportFatal(err);
  process.exit(1);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);
dropOutputWhenReaderLeaves(crash);

main().catch((err: unknown) => {
  process.exitCode = reportFatal(err);
});
