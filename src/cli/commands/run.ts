/**
 * `govops run`: the continuous reconciler (Git or directory source, HTTP endpoints, metrics).
 * This file only declares the command; the work is in run-action.ts, loaded when it runs.
 */
import { InvalidArgumentError, Option, type Command } from '../commander.js';
import { addApplyTuningOptions, type ApplyTuningFlags } from '../apply-options.js';
import type { ManualStepsMode } from '../../plan/types.js';
import { addConnectionOptions, type ConnectionFlags } from '../connection-options.js';
import { manualStepsOption, noAdoptOption } from '../flags.js';
import { stateOption } from '../state-option.js';
import type { SecretFlags } from '../secret-options.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface RunFlags extends ConnectionFlags, SecretFlags, ApplyTuningFlags {
  repo?: string;
  branch: string;
  path: string;
  dir?: string;
  interval: string;
  resync: string;
  selfHeal?: boolean;
  prune?: boolean;
  maxDeletes?: string;
  allowEmpty?: boolean;
  allowReplace?: boolean;
  /** `--no-adopt` (commander's name): false when given. */
  adopt?: boolean;
  manualSteps?: ManualStepsMode;
  concurrency: string;
  timeout: string;
  listen: string;
  state: string;
  gitWebhookSecret?: string;
  gitWebhookSecretFile?: string;
  statusTokenFile?: string;
  grace: string;
  workdir?: string;
  webhookHealthInterval?: string;
  webhookHealthOverlap?: string;
  autoRetryFailed?: boolean;
  autoRetryMax?: string;
  autoRetryBackoff?: string;
  autoRetryRate?: string;
  observe?: boolean;
  render?: string;
  renderTimeout?: string;
  gitTimeout?: string;
  /** `--notify-url`, each with the `--notify-header-file` values given after it. */
  notifyUrl?: NotifySpec[];
  identity?: string;
  leaseDuration?: string;
  leaseRenewDeadline?: string;
  leaseRetryPeriod?: string;
}

/** One `--notify-url` and the `--notify-header-file NAME=FILE` given after it (before the next URL). */
export interface NotifySpec {
  url: string;
  headerFiles: string[];
}

export function register(program: Command): void {
  // --notify-header-file belongs to the --notify-url before it: both fill this list, in argv order.
  const notify: NotifySpec[] = [];
  const cmd = program
    .command('run')
    .description(COMMAND_SUMMARIES.run.description)
    .addOption(new Option('--repo <url>', 'Git repository to follow (https or ssh; token from GOVOPS_GIT_TOKEN)').env('GOVOPS_REPO'))
    .addOption(new Option('--branch <name>', 'branch to follow').env('GOVOPS_BRANCH').default('main'))
    .addOption(new Option('--path <path>', 'manifest folder inside the repository').env('GOVOPS_PATH').default('.'))
    .addOption(new Option('--dir <path>', 'folder to watch instead of Git (e.g. the git-sync volume)').env('GOVOPS_DIR'))
    .option('--interval <duration>', 'Git fetch interval (±10% jitter); directory rescan safety net', '60s')
    .option('--git-timeout <duration>', 'each git command of the Git source (a fetch, a checkout) is killed after this long; raise it for a repository whose first fetch takes longer', '120s')
    .option('--resync <duration>', 'drift check period (plans even without a new revision)', '5m')
    .option('--self-heal', 'apply drift found by the resync (default: only report it)')
    .option('--prune', 'delete resources govops owns that are no longer in the manifests')
    .option(
      '--max-deletes <n>',
      'allow at most N deletes and replaces per revision (default: deletes of at most 25% of the managed resources); over it, none is done and the rest of the revision is applied',
    )
    .option('--allow-empty', 'let an empty manifest set prune (refused by default: it usually means a broken checkout)')
    .option('--allow-replace', 'allow delete + create when a non-editable attribute changes')
    .addOption(noAdoptOption())
    .addOption(manualStepsOption())
    .option('--concurrency <n>', 'resources applied in parallel', '8')
    .option('--timeout <duration>', 'overall apply timeout of one reconcile', '10m')
    .addOption(new Option('--listen <address>', 'HTTP endpoints address, HOST:PORT or :PORT').env('GOVOPS_LISTEN').default(':8080'))
    .addOption(stateOption())
    .option('--git-webhook-secret <secret>', 'secret of POST /hooks/git (prefer env GOVOPS_GIT_WEBHOOK_SECRET)')
    .option('--git-webhook-secret-file <path>', 'file holding the push notification secret')
    .option(
      '--status-token-file <path>',
      'file holding a bearer token GET /status then requires (Authorization: Bearer TOKEN; or env GOVOPS_STATUS_TOKEN); /healthz, /readyz and /metrics stay open',
    )
    .option('--grace <duration>', 'on SIGTERM/SIGINT, time allowed to finish the calls in flight and save the state', '30s')
    .addOption(new Option('--identity <name>', "this replica's name in the leader lease, the User-Agent and notifications (default: host name + random suffix)").env('GOVOPS_IDENTITY'))
    .option('--lease-duration <duration>', 'PostgreSQL state: how long a leader lease lasts without renewal', '15s')
    .option('--lease-renew-deadline <duration>', 'PostgreSQL state: a leader that could not renew within this stops writing (shorter than the lease)', '10s')
    .option('--lease-retry-period <duration>', 'PostgreSQL state: how often the lease is renewed or tried', '2s')
    .option('--workdir <path>', 'where the Git cache and revision folders live (default: next to the state file)')
    .addOption(
      new Option('--webhook-health-interval <duration>', 'poll the webhook delivery history this often (new records only): metrics, failures in /status (default: off)').env(
        'GOVOPS_WEBHOOK_HEALTH_INTERVAL',
      ),
    )
    .option('--webhook-health-overlap <duration>', 'how late a delivery record may appear after newer ones and still be counted', '60s')
    .addOption(
      new Option('--auto-retry-failed', 'retry failed deliveries of managed webhooks automatically (needs --webhook-health-interval)').env('GOVOPS_AUTO_RETRY_FAILED'),
    )
    .option('--auto-retry-max <n>', 'automatic retries of one delivery at most', '3')
    .option('--auto-retry-backoff <duration>', 'wait before an automatic retry, doubling after each failure (at most 1h)', '1m')
    .option('--auto-retry-rate <n>', 'automatic retries per minute at most, over all webhooks', '10')
    .addOption(new Option('--render <command>', "each revision's manifests are this command's output, run in the revision's manifest folder (e.g. 'kustomize build overlays/prod'; no shell: words split on spaces, quotes group)").env('GOVOPS_RENDER'))
    .option('--render-timeout <duration>', 'the render command is killed after this long and the revision rejected', '60s')
    .option('--observe', 'plan every revision and resync and report drift and pending changes (logs, /status, metrics) without ever writing')
    .option('--notify-url <url>', 'POST a CloudEvents 1.0 event for each reconcile that applied changes, failed, was rejected or blocked, or found drift (repeatable)', (url: string) => {
      notify.push({ url, headerFiles: [] });
      return notify;
    })
    .option('--notify-header-file <NAME=FILE>', 'a header for the --notify-url before it, its value read from FILE (a secret, e.g. Authorization=/run/secrets/notify-token; repeatable)', (spec: string) => {
      const last = notify[notify.length - 1];
      if (!last) throw new InvalidArgumentError('give the --notify-url it belongs to first');
      last.headerFiles.push(spec);
      return notify;
    });
  cmd
    .addOption(new Option('--secrets-dir <dir>', 'the only folder fromFile references are read from, by relative path (default: the repository or watched folder)').env('GOVOPS_SECRETS_DIR'))
    .addOption(new Option('--secret-env-prefix <prefix>', 'fromEnv references may read only variables starting with this (default GOVOPS_SECRET_)').env('GOVOPS_SECRET_ENV_PREFIX'));
  addApplyTuningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.addOption(new Option('--debounce <duration>', 'directory source quiet period').default('300ms').hideHelp());
  cmd.action(async (_opts: unknown, command: Command) => {
    const { runAction } = await import('./run-action.js');
    await runAction(command);
  });
}
