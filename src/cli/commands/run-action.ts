/** What `govops run` does (loaded only when it runs; declared in run.ts). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import { applyTuningFrom } from '../apply-options.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom } from '../context.js';
import { UserError } from '../../errors.js';
import { parseAddress } from '../../util/address.js';
import { formatDuration, parseTimerDuration } from '../../util/duration.js';
import { registerSecrets } from '../../util/redact.js';
import { startRunning, type RunSettings, type RunningDaemon, type WebhookHealthSettings } from '../../daemon/run.js';
import { redactUrl } from '../../sources/redact.js';
import { parseRenderCommand, renderToolProblem, type RenderCommand } from '../../sources/render.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { planSettingsFrom } from '../settings.js';
import { notifyUrlLabel, notifyUrlSecrets, type NotifyTarget } from '../../daemon/notify.js';
import type { NotifySpec, RunFlags } from './run.js';
import { isPgLocation } from '../../state/location.js';
import { leaseSettingsProblem, type LeaseSettings } from '../../daemon/leader.js';

/** A duration flag; above 24.8 days it is refused (a Node timer would fire after about 1 ms). */
function duration(flag: string, text: string): number {
  try {
    return parseTimerDuration(text);
  } catch (err) {
    const message = (err as Error).message;
    throw new UserError(message.startsWith('invalid duration') ? `${flag}: ${message}` : `${flag} ${message}`);
  }
}

/** A duration flag with a lower bound; the error names the flag, the value given and what it is for. */
function atLeast(flag: string, text: string, minMs: number, what: string): number {
  const ms = duration(flag, text);
  if (ms < minMs) throw new UserError(`${flag} ${text}: must be at least ${formatDuration(minMs)}`, `${flag} is ${what}`);
  return ms;
}

function wholeNumber(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min) throw new UserError(`${flag} must be a whole number >= ${min}, got "${text}"`);
  return Number(text);
}

/** `--webhook-health-*` and `--auto-retry-*`: undefined when polling is off. */
export function webhookHealthFrom(flags: RunFlags): WebhookHealthSettings | undefined {
  if (!flags.webhookHealthInterval) {
    if (flags.autoRetryFailed) throw new UserError('--auto-retry-failed needs --webhook-health-interval', 'e.g. --webhook-health-interval 1m --auto-retry-failed');
    return undefined;
  }
  const intervalMs = atLeast('--webhook-health-interval', flags.webhookHealthInterval, 100, 'how often the delivery history is polled, e.g. 1m');
  const settings: WebhookHealthSettings = { intervalMs, overlapMs: duration('--webhook-health-overlap', flags.webhookHealthOverlap ?? '60s') };
  if (flags.autoRetryFailed) {
    settings.autoRetry = {
      maxAttempts: wholeNumber('--auto-retry-max', flags.autoRetryMax ?? '3', 1)!,
      backoffMs: duration('--auto-retry-backoff', flags.autoRetryBackoff ?? '1m'),
      maxBackoffMs: 3_600_000,
      perMinute: wholeNumber('--auto-retry-rate', flags.autoRetryRate ?? '10', 1)!,
    };
    settings.autoRetry.maxBackoffMs = Math.max(settings.autoRetry.maxBackoffMs, settings.autoRetry.backoffMs);
  }
  return settings;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Characters an HTTP header value cannot hold (undici's headerCharRegex). */
const HEADER_VALUE_INVALID = /[^\t\x20-\x7e\x80-\xff]/;
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'transfer-encoding', 'connection', 'user-agent']);
/** Headers of the connection itself, which undici refuses in every request (each event retried, never delivered). */
const CONNECTION_HEADERS = new Set(['expect', 'upgrade', 'keep-alive']);

/** `--notify-url` / `--notify-header-file`: checked URLs and header values read from their files (secrets). */
export function notifyTargetsFrom(specs: readonly NotifySpec[] | undefined): NotifyTarget[] {
  return (specs ?? []).map((spec) => {
    let url: URL;
    try {
      url = new URL(spec.url);
    } catch {
      throw new UserError('a --notify-url is not a URL', 'e.g. --notify-url https://hooks.example.com/govops');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UserError(`--notify-url must be http or https, got ${url.protocol}`);
    const headers: Record<string, string> = {};
    for (const hf of spec.headerFiles) {
      const eq = hf.indexOf('=');
      const name = eq > 0 ? hf.slice(0, eq).trim() : '';
      const file = eq > 0 ? hf.slice(eq + 1).trim() : '';
      if (!HEADER_NAME.test(name) || !file) throw new UserError(`--notify-header-file ${JSON.stringify(hf)}: expected NAME=FILE`, 'e.g. --notify-header-file Authorization=/run/secrets/notify-token');
      if (RESERVED_HEADERS.has(name.toLowerCase())) throw new UserError(`--notify-header-file: the ${name} header is set by govops`);
      if (CONNECTION_HEADERS.has(name.toLowerCase())) throw new UserError(`--notify-header-file: the ${name} header cannot be sent with a notification (it is the connection's, not the request's)`);
      let value: string;
      try {
        value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      } catch (err) {
        throw new UserError(`--notify-header-file ${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      if (/[\r\n]/.test(value) || value === '') throw new UserError(`--notify-header-file ${name}: ${file} must hold one non-empty line`);
      // What an HTTP header value may hold (RFC 9110 field-value, as undici checks it at every request): refused at
      // start, not at every event (a failure retried five times per event, for as long as the daemon runs).
      if (HEADER_VALUE_INVALID.test(value)) {
        throw new UserError(
          `--notify-header-file ${name}: ${file} holds a character an HTTP header cannot carry${value.startsWith('\ufeff') ? ' (a byte-order mark: the file was saved as "UTF-8 with BOM")' : ' (a control character, or one beyond Latin-1)'}`,
          'write the value as plain ASCII text',
        );
      }
      registerSecrets(value);
      headers[name] = value;
    }
    registerSecrets(...notifyUrlSecrets(spec.url)); // a chat webhook URL carries its token: never printed
    if (url.username || url.password) {
      // https://user:pass@host/...: sent as Basic authentication, as curl sends it (the request itself carries no userinfo)
      const label = notifyUrlLabel(spec.url);
      if (Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
        throw new UserError(`--notify-url ${label}: credentials in the URL and an Authorization --notify-header-file`, 'give one of them');
      }
      let user: string;
      let password: string;
      try {
        user = decodeURIComponent(url.username);
        password = decodeURIComponent(url.password);
      } catch {
        throw new UserError(`--notify-url ${label}: the credentials in the URL are not valid percent-encoding`, 'encode them as URL userinfo (@ as %40), or use --notify-header-file Authorization=FILE');
      }
      const basic = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
      registerSecrets(password, basic);
      headers.Authorization = basic;
      url.username = '';
      url.password = '';
      registerSecrets(...notifyUrlSecrets(url.toString()));
      return { url: url.toString(), headers };
    }
    return { url: spec.url, headers };
  });
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
  // Trimmed as the file is: a Kubernetes Secret made from a file ends in a newline, which the Git host does not sign
  // with (every push notification was refused). Set to spaces only: the operator meant a secret.
  const hookFrom = flags.gitWebhookSecret !== undefined ? '--git-webhook-secret' : 'GOVOPS_GIT_WEBHOOK_SECRET';
  const hookGiven = flags.gitWebhookSecret ?? env.GOVOPS_GIT_WEBHOOK_SECRET;
  let hookSecret = hookGiven?.trim();
  if (hookSecret === '' && hookGiven !== '' && !flags.gitWebhookSecretFile) throw new UserError(`${hookFrom} holds only spaces`, 'set the secret the Git host signs push notifications with, or unset it');
  if (flags.gitWebhookSecretFile) {
    try {
      hookSecret = readFileSync(flags.gitWebhookSecretFile, 'utf8').trim();
    } catch {
      throw new UserError(`cannot read --git-webhook-secret-file ${flags.gitWebhookSecretFile}`);
    }
    if (hookSecret === '') throw new UserError(`--git-webhook-secret-file ${flags.gitWebhookSecretFile} is empty`, 'write the secret the Git host signs push notifications with into it');
  }
  registerSecrets(hookSecret);
  let statusToken = env.GOVOPS_STATUS_TOKEN?.trim();
  // set but blank: the operator meant a token; /status left open by a stray space would be a silent hole
  if (statusToken === '' && env.GOVOPS_STATUS_TOKEN !== '') throw new UserError('GOVOPS_STATUS_TOKEN holds only spaces', 'set the token /status should require, or unset the variable');
  if (flags.statusTokenFile) {
    try {
      statusToken = readFileSync(flags.statusTokenFile, 'utf8').trim();
    } catch {
      throw new UserError(`cannot read --status-token-file ${flags.statusTokenFile}`);
    }
    if (statusToken === '') throw new UserError(`--status-token-file ${flags.statusTokenFile} is empty`, 'write the token /status should require into it');
  }
  // A bearer token is one word: with a space or line break inside, no request could ever be let in to /status.
  if (statusToken && /\s/.test(statusToken)) {
    throw new UserError(`${flags.statusTokenFile ? `--status-token-file ${flags.statusTokenFile}` : 'GOVOPS_STATUS_TOKEN'} holds whitespace inside the token`, 'the token is one word (a request sends Authorization: Bearer <token>): remove the space or line break');
  }
  registerSecrets(statusToken);
  const intervalMs = atLeast('--interval', flags.interval, 10, 'how often the source is checked for a new revision, e.g. 60s');
  const gitTimeoutMs = atLeast('--git-timeout', flags.gitTimeout ?? '120s', 1, 'how long one git command may take, e.g. 10m');
  const resyncMs = atLeast('--resync', flags.resync, 10, 'the drift check period, e.g. 5m');
  const webhookHealth = webhookHealthFrom(flags);
  if (flags.observe && flags.selfHeal) throw new UserError('--observe never writes: it cannot be combined with --self-heal');
  if (flags.observe && webhookHealth?.autoRetry) throw new UserError('--observe never writes: it cannot be combined with --auto-retry-failed');
  const notify = notifyTargetsFrom(flags.notifyUrl);
  return {
    repo: flags.repo,
    branch: flags.branch,
    path: flags.path,
    dir: flags.dir,
    intervalMs,
    gitTimeoutMs,
    resyncMs,
    selfHeal: Boolean(flags.selfHeal),
    plan: planSettingsFrom(flags),
    tuning: applyTuningFrom(flags),
    listen,
    statePath: flags.state,
    hookSecret: hookSecret || undefined,
    ...(statusToken ? { statusToken } : {}),
    workdir: flags.workdir ?? join(isPgLocation(flags.state) ? '.govops' : dirname(flags.state), 'work'),
    env,
    secretScope: secretScopeFromFlags(flags, env),
    ...(webhookHealth ? { webhookHealth } : {}),
    ...(flags.observe ? { observe: true } : {}),
    ...renderFrom(flags, env),
    ...(notify.length ? { notify } : {}),
    ...(flags.identity ? { identity: flags.identity } : {}),
    ...(isPgLocation(flags.state) ? { lease: leaseFrom(flags) } : {}),
  };
}

/** `--render` as an argv (no shell) with its timeout. */
function renderFrom(flags: RunFlags, env: NodeJS.ProcessEnv): { render?: RenderCommand } {
  if (flags.render === undefined || flags.render.trim() === '') return {};
  let argv: string[];
  try {
    argv = parseRenderCommand(flags.render);
  } catch (err) {
    throw new UserError(`--render: ${(err as Error).message}`, "e.g. --render 'kustomize build overlays/prod'");
  }
  const problem = renderToolProblem(argv[0]!, env);
  if (problem !== undefined) {
    throw new UserError(`--render: ${problem}`, "install the render tool in the image (govops' image has no kustomize: docs/environments.md), or name it by its absolute path; 'kubectl kustomize DIR' where only kubectl is installed");
  }
  return { render: { argv, timeoutMs: atLeast('--render-timeout', flags.renderTimeout ?? '60s', 1, 'how long the render may take, e.g. 60s') } };
}

/** --lease-duration, --lease-renew-deadline, --lease-retry-period (leader election with a PostgreSQL state). */
function leaseFrom(flags: RunFlags): LeaseSettings {
  const lease = {
    durationMs: duration('--lease-duration', flags.leaseDuration ?? '15s'),
    renewDeadlineMs: duration('--lease-renew-deadline', flags.leaseRenewDeadline ?? '10s'),
    retryPeriodMs: duration('--lease-retry-period', flags.leaseRetryPeriod ?? '2s'),
  };
  const problem = leaseSettingsProblem(lease);
  if (problem) throw new UserError(problem, 'the defaults are 15s / 10s / 2s (client-go\'s)');
  return lease;
}

/** The daemon's address could not be taken: say which, why, and which flag picks another. */
export function listenError(err: unknown, listen: { host: string; port: number }): UserError | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${listen.host}:${listen.port}`;
  const hint = 'choose another address with --listen HOST:PORT or :PORT (env GOVOPS_LISTEN), e.g. --listen :8081';
  if (code === 'EADDRINUSE') return new UserError(`cannot listen on ${where}: the address is already in use (another govops run, or another program)`, hint);
  if (code === 'EACCES') return new UserError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges)`, hint);
  if (code === 'EADDRNOTAVAIL') return new UserError(`cannot listen on ${where}: no network interface has this address`, hint);
  return undefined;
}

/** `--grace`: how long a stop waits for in-flight calls. */
export function graceFrom(flags: { grace: string }): number {
  return duration('--grace', flags.grace);
}

export async function runAction(command: Command): Promise<void> {
  const flags = command.opts<RunFlags & { debounce: string }>();
  const ctx = contextFrom(command, 1);
  const settings = settingsFrom(flags);
  settings.debounceMs = duration('--debounce', flags.debounce);
  const graceMs = graceFrom(flags);
  settings.graceMs = graceMs;
  const logger = ctx.logger;
  // Installed before start-up: SIGTERM while the first clone runs (or the lease is first asked for) stops it, and
  // the process exits 0 as after any stop, instead of being killed by the signal (exit 143).
  const stopping = new AbortController();
  let onStopped: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (onStopped = resolve));
  let running: RunningDaemon | undefined;
  const shutDown = (daemon: RunningDaemon): void =>
    void daemon.shutdown(graceMs).then((finished) => {
      if (!finished) logger.warn({ graceMs }, 'grace period over: in-flight reconcile cut short');
      onStopped?.();
    });
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping.signal.aborted) {
      // A second signal (Ctrl-C again), as in apply: the calls in flight are aborted now, not at 80% of --grace.
      if (running) {
        logger.warn({ signal }, 'second signal: aborting the calls in flight');
        running.forceShutdown();
      }
      return;
    }
    stopping.abort();
    logger.info({ signal, graceMs }, 'shutting down: no new work, waiting for in-flight calls');
    // During start-up, start-up ends itself (startRunning rejects with a CancelledError, or resolves: see below).
    if (running) shutDown(running);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    try {
      running = await startRunning(
        settings,
        logger,
        (onRequest, extras) => clientFromOptions(flags, logger, { onRequest, connections: (settings.tuning?.concurrency ?? 8) + 8, ...extras }),
        undefined,
        stopping.signal,
      );
    } catch (err) {
      if (stopping.signal.aborted) {
        logger.info('govops run stopped during start-up');
        return finish(logger);
      }
      throw listenError(err, settings.listen) ?? err;
    }
    // A signal after start-up's last check and before this line: start-up finished, so stop what it started.
    if (stopping.signal.aborted) shutDown(running);
    logger.info(
      {
        url: running.daemon.url,
        source: settings.repo ? redactUrl(settings.repo) : settings.dir,
        selfHeal: settings.selfHeal,
        prune: settings.plan.prune,
        observe: settings.observe === true,
        notify: (settings.notify ?? []).map((t) => notifyUrlLabel(t.url)),
      },
      'govops run started',
    );
    await stopped;
    logger.info('govops run stopped');
    finish(logger);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** Exit 0 once the logs are written (and at the latest in 2 s). */
function finish(logger: Logger): void {
  logger.flush?.();
  process.exitCode = 0;
  // Everything is closed; should a library still hold the event loop, do not hang the pod.
  setTimeout(() => process.exit(0), 2000).unref();
}
