/**
 * `govops webhooks history|retry|events|list`: delivery operations on the service's webhooks
 * (interface 4.3, 2.13, part 6). This file only declares the commands; the work is in
 * webhooks-action.ts, loaded when one of them runs.
 */
import { Option, type Command } from '../commander.js';
import { stateOption } from '../state-option.js';
import { addConnectionOptions, type ConnectionFlags } from '../connection-options.js';
import { addSecretOptions, type SecretFlags } from '../secret-options.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface WebhooksFlags extends ConnectionFlags {
  state: string;
}

/** `webhooks list` reads manifests: in the operator's secret scope, as validate and plan do. */
export interface ListFlags extends WebhooksFlags, SecretFlags {}

export interface HistoryFlags extends WebhooksFlags {
  failed?: boolean;
  succeeded?: boolean;
  type?: string;
  since?: string;
  limit: string;
  global: boolean;
  personal: boolean;
}

export interface RetryFlags extends WebhooksFlags {
  failed?: boolean;
  since?: string;
  max?: string;
  concurrency: string;
  dryRun?: boolean;
  allWebhooks?: boolean;
}

export const DEFAULT_HISTORY_LIMIT = '20';
export const DEFAULT_RETRY_SINCE = '24h';
export const DEFAULT_RETRY_MAX = '50';

const webhookStateOption = (): Option => stateOption('govops state file (which webhooks govops manages)');

export function register(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description(COMMAND_SUMMARIES.webhooks.description);

  const history = webhooks
    .command('history')
    .description('list delivery records, newest first (GET /webhooks/history); NAME: only that webhook')
    .argument('[name]', 'webhook name (in the service, or metadata.name of its manifest)')
    .option('--failed', 'only failed deliveries')
    .addOption(new Option('--succeeded', 'only successful deliveries').conflicts('failed'))
    .option('--type <event>', 'only deliveries of this event (e.g. healthCheckFailed)')
    .option('--since <when>', 'only deliveries since this long ago (30m, 24h, 7d) or this ISO time')
    .option('--limit <n>', 'records to show at most (one request for up to 100 when no NAME is given)', DEFAULT_HISTORY_LIMIT)
    .option('--no-global', 'leave out records of global webhooks')
    .option('--no-personal', "leave out records of the caller's own personal webhooks")
    .addOption(webhookStateOption());
  addConnectionOptions(history).action(async (name: string | undefined, flags: HistoryFlags, command: Command) => {
    const { historyAction } = await import('./webhooks-action.js');
    await historyAction(name, flags, command);
  });

  const retry = webhooks
    .command('retry')
    .description('retry deliveries by history id, or with --failed every failed delivery (of NAME, else of the webhooks govops manages)')
    .argument('[targets...]', 'history ids; with --failed: at most one webhook NAME')
    .option('--failed', 'select the deliveries whose latest attempt failed (each delivery once, oldest first)')
    .option('--since <when>', `with --failed: deliveries since this long ago or ISO time (default ${DEFAULT_RETRY_SINCE})`)
    .option('--max <n>', `with --failed: retry at most n deliveries (default ${DEFAULT_RETRY_MAX})`)
    .option('--all-webhooks', 'with --failed: every webhook the token sees (with NAME: every one of that name), not only those govops manages')
    .option('--concurrency <n>', 'retries in flight at once', '4')
    .option('--dry-run', 'list what would be retried; retry nothing')
    .addOption(webhookStateOption());
  addConnectionOptions(retry).action(async (targets: string[], flags: RetryFlags, command: Command) => {
    const { retryAction } = await import('./webhooks-action.js');
    await retryAction(targets, flags, command);
  });

  const events = webhooks
    .command('events')
    .description('the event names the service accepts (GET /webhooks/actions), compared with the ones validate knows');
  addConnectionOptions(events).action(async (flags: ConnectionFlags, command: Command) => {
    const { eventsAction } = await import('./webhooks-action.js');
    await eventsAction(flags, command);
  });

  const list = webhooks
    .command('list')
    .description('live webhooks with their manifest and owner (managed, adopted, unmanaged)')
    .argument('[paths...]', 'manifest files or folders, or - for a multi-document YAML stream on standard input (default: .)')
    .addOption(webhookStateOption());
  addSecretOptions(list);
  addConnectionOptions(list).action(async (paths: string[], flags: ListFlags, command: Command) => {
    const { listAction } = await import('./webhooks-action.js');
    await listAction(paths, flags, command);
  });
}
