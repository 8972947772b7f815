/** `govops run`: the continuous reconciler (Git or directory source, HTTP endpoints, metrics). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Option, type Command } from 'commander';
import { addConnectionOptions, clientFromOptions, type ConnectionFlags } from '../connection.js';
import { contextFrom } from '../context.js';
import { UserError } from '../../errors.js';
import { parseAddress } from '../../util/address.js';
import { parseDuration } from '../../util/duration.js';
import { startRunning, type RunSettings } from '../../daemon/run.js';
import { redactUrl } from '../../sources/redact.js';

interface RunFlags extends ConnectionFlags {
  repo?: string;
  branch: string;
  path: string;
  dir?: string;
  interval: string;
  resync: string;
  selfHeal?: boolean;
  prune?: boolean;
  maxDeletes?: string;
  allowReplace?: boolean;
  concurrency: string;
  timeout: string;
  listen: string;
  state: string;
  gitWebhookSecret?: string;
  gitWebhookSecretFile?: string;
  grace: string;
  workdir?: string;
}

function duration(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new UserError(`${flag}: ${(err as Error).message}`);
  }
}

function wholeNumber(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min) throw new UserError(`${flag} must be a whole number >= ${min}, got "${text}"`);
  return Number(text);
}

export function settingsFrom(flags: RunFlags, env: NodeJS.ProcessEnv = process.env): RunSettings {
  if (!flags.repo && !flags.dir) throw new UserError('no source given', 'pass --repo URL (Git) or --dir PATH (a watched folder)');
  if (flags.repo && flags.dir) throw new UserError('--repo and --dir cannot be used together', 'pick one source');
  let listen;
  try {
    listen = parseAddress(flags.listen);
  } catch (err) {
    throw new UserError(`--listen: ${(err as Error).message}`);
  }
  let hookSecret = flags.gitWebhookSecret ?? env.GOVOPS_GIT_WEBHOOK_SECRET;
  if (flags.gitWebhookSecretFile) {
    try {
      hookSecret = readFileSync(flags.gitWebhookSecretFile, 'utf8').trim();
    } catch {
      throw new UserError(`cannot read --git-webhook-secret-file ${flags.gitWebhookSecretFile}`);
    }
  }
  const intervalMs = duration('--interval', flags.interval);
  const resyncMs = duration('--resync', flags.resync);
  if (intervalMs < 10 || resyncMs < 10) throw new UserError('--interval and --resync must be at least 10ms');
  return {
    repo: flags.repo,
    branch: flags.branch,
    path: flags.path,
    dir: flags.dir,
    intervalMs,
    resyncMs,
    selfHeal: Boolean(flags.selfHeal),
    prune: Boolean(flags.prune),
    allowReplace: Boolean(flags.allowReplace),
    maxDeletes: wholeNumber('--max-deletes', flags.maxDeletes, 0),
    concurrency: wholeNumber('--concurrency', flags.concurrency, 1),
    timeoutMs: duration('--timeout', flags.timeout),
    listen,
    statePath: flags.state,
    hookSecret: hookSecret || undefined,
    workdir: flags.workdir ?? join(dirname(flags.state), 'work'),
    env,
  };
}

export function register(program: Command): void {
  const cmd = program
    .command('run')
    .description('reconcile continuously from a Git repository or a watched folder; serves /healthz /readyz /metrics /status /hooks/git')
    .addOption(new Option('--repo <url>', 'Git repository to follow (https or ssh; token from GOVOPS_GIT_TOKEN)').env('GOVOPS_REPO'))
    .addOption(new Option('--branch <name>', 'branch to follow').env('GOVOPS_BRANCH').default('main'))
    .addOption(new Option('--path <path>', 'manifest folder inside the repository').env('GOVOPS_PATH').default('.'))
    .addOption(new Option('--dir <path>', 'folder to watch instead of Git (e.g. the git-sync volume)').env('GOVOPS_DIR'))
    .option('--interval <duration>', 'Git fetch interval (±10% jitter); directory rescan safety net', '60s')
    .option('--resync <duration>', 'drift check period (plans even without a new revision)', '5m')
    .option('--self-heal', 'apply drift found by the resync (default: only report it)')
    .option('--prune', 'delete resources govops owns that are no longer in the manifests')
    .option('--max-deletes <n>', 'reject a revision whose plan deletes more than n resources')
    .option('--allow-replace', 'allow delete + create when a non-editable attribute changes')
    .option('--concurrency <n>', 'resources applied in parallel', '8')
    .option('--timeout <duration>', 'overall apply timeout of one reconcile', '10m')
    .addOption(new Option('--listen <address>', 'HTTP endpoints address, HOST:PORT or :PORT').env('GOVOPS_LISTEN').default(':8080'))
    .addOption(new Option('--state <path>', 'govops state file').env('GOVOPS_STATE').default('.govops/state.json'))
    .option('--git-webhook-secret <secret>', 'secret of POST /hooks/git (prefer env GOVOPS_GIT_WEBHOOK_SECRET)')
    .option('--git-webhook-secret-file <path>', 'file holding the push notification secret')
    .option('--grace <duration>', 'on SIGTERM/SIGINT, time allowed for in-flight calls', '30s')
    .option('--workdir <path>', 'where the Git cache and revision folders live (default: next to the state file)');
  addConnectionOptions(cmd);
  cmd.addOption(new Option('--debounce <duration>', 'directory source quiet period').default('300ms').hideHelp());
  cmd.action(async (_opts: unknown, command: Command) => {
    const flags = command.opts<RunFlags & { debounce: string }>();
    const ctx = contextFrom(command, 1);
    const settings = settingsFrom(flags);
    settings.debounceMs = duration('--debounce', flags.debounce);
    const graceMs = duration('--grace', flags.grace);
    const logger = ctx.logger;
    const running = await startRunning(settings, logger, (onRequest) => clientFromOptions(flags, logger, { onRequest }));
    logger.info(
      {
        url: running.daemon.url,
        source: settings.repo ? redactUrl(settings.repo) : settings.dir,
        selfHeal: settings.selfHeal,
        prune: settings.prune,
      },
      'govops run started',
    );
    await new Promise<void>((resolve) => {
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals): void => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal, graceMs }, 'shutting down: no new work, waiting for in-flight calls');
        void running.shutdown(graceMs).then((finished) => {
          if (!finished) logger.warn({ graceMs }, 'grace period over: in-flight reconcile cut short');
          logger.info('govops run stopped');
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          resolve();
        });
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
    logger.flush?.();
    process.exitCode = 0;
    // Everything is closed; should a library still hold the event loop, do not hang the pod.
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
