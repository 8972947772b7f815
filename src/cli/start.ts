#!/usr/bin/env node
/**
 * `npm start`: an embedded sandbox (dev tokens, port 8088 or a free one) and the daemon watching
 * examples/ (state in .govops/), so a newcomer sees resources created, polled to `enabled`, and can
 * edit an example and watch it applied. Ctrl-C stops both.
 */
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '../api/client.js';
import { exampleEnvNames, persistentExampleEnv, portOrFree } from '../daemon/dev.js';
import { startRunning } from '../daemon/run.js';
import { createLogger } from '../log.js';
import { startSandbox } from '../sandbox/index.js';
import { redactText } from '../util/redact.js';
import { reportFatal } from './fatal.js';

const HOST = '127.0.0.1';

/** Preferred ports can be changed (0 = any free port); busy ones fall back to a free port. */
function envPort(name: string, fallback: number): number {
  const v = process.env[name];
  return v && /^\d{1,5}$/.test(v) && Number(v) <= 65535 ? Number(v) : fallback;
}

async function main(): Promise<void> {
  const examples = fileURLToPath(new URL('../../examples', import.meta.url));
  const home = join(process.cwd(), '.govops');
  await mkdir(home, { recursive: true });
  const tty = Boolean(process.stdout.isTTY);
  const logger = createLogger({ level: process.env.GOVOPS_LOG_LEVEL ?? 'info', pretty: tty && !process.env.NO_COLOR });

  const names = await exampleEnvNames(examples);
  const generated = await persistentExampleEnv(names, process.env, join(home, 'example-env.json'));
  Object.assign(process.env, generated);

  const sandbox = await startSandbox({
    port: await portOrFree(envPort('GOVOPS_START_SANDBOX_PORT', 8088), HOST),
    host: HOST,
    dev: true,
    transitionMs: 2000,
    dataFile: join(home, 'sandbox-data.json'),
    logger: logger.child({ component: 'sandbox' }),
  });
  const listenPort = await portOrFree(envPort('GOVOPS_START_PORT', 8080), HOST);
  let running;
  try {
    running = await startRunning(
      {
        dir: examples,
        branch: 'main',
        path: '.',
        intervalMs: 60_000,
        resyncMs: 30_000, // short, so a newcomer sees drift repaired quickly (the daemon default is 5m)
        selfHeal: true,
        prune: true,
        allowReplace: false,
        listen: { host: HOST, port: listenPort },
        statePath: join(home, 'state.json'),
        workdir: join(home, 'work'),
        env: process.env,
        webhookHealth: { intervalMs: 30_000 }, // delivery failures of the example webhooks show in /status
      },
      logger,
      (onRequest) => new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger, onRequest }),
    );
  } catch (err) {
    await sandbox.close();
    throw err;
  }
  const url = running.daemon.url;
  const shownExamples = relative(process.cwd(), examples) || '.';
  process.stdout.write(
    [
      '',
      'govops is running (Ctrl-C to stop)',
      `  daemon     ${url}   (watching ${shownExamples}/, self-heal and prune on, drift check every 30s)`,
      `  status     curl -s ${url}/status`,
      `  metrics    curl -s ${url}/metrics | grep ^govops_`,
      `  sandbox    ${sandbox.url}   (admin token: ${sandbox.adminToken})`,
      `             curl -s -H 'Authorization: ${sandbox.adminToken}' ${sandbox.url}/integrations`,
      `  webhooks   delivery health polled every 30s (/status: webhookHealth); history: GOVOPS_URL=${sandbox.url} GOVOPS_TOKEN=${sandbox.adminToken} npx govops webhooks history`,
      `  state      ${relative(process.cwd(), join(home, 'state.json'))}`,
      `  secrets    ${names.length} GOVOPS_SECRET_EXAMPLE_* variables: ${Object.keys(generated).length} dummy values (kept in ${relative(process.cwd(), join(home, 'example-env.json'))}), ${names.length - Object.keys(generated).length} from your environment`,
      `  try it     edit ${shownExamples}/lakehouse.yaml (e.g. httpPath) and save: it is applied within seconds`,
      '',
    ].join('\n') + '\n',
  );

  // Once the first reconcile is over, say how it went and where to look (the banner has scrolled away).
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

  await new Promise<void>((resolve) => {
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
  logger.info('govops and the sandbox stopped');
  process.exitCode = 0;
  setTimeout(() => process.exit(0), 2000).unref();
}

main().catch((err: unknown) => {
  process.exitCode = reportFatal(err);
});
