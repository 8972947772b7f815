/**
 * `govops sandbox`: run the local sandbox service (see docs/sandbox.md).
 * This file only declares the command; the work is in sandbox-action.ts, loaded when it runs.
 */
import type { Command } from 'commander';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface SandboxFlags {
  port: string;
  host: string;
  transition: string;
  deliveryTimeout: string;
  adminToken?: string;
  userToken?: string;
  tokensFile?: string;
  data?: string;
  dev?: boolean;
  latency?: string;
  errorRate?: string;
  errorStatus: string;
  retryAfter?: string;
  dropRate?: string;
  conflictRate?: string;
  faultPath: string;
  faults?: string;
  stuckTransitions?: boolean | string;
  deliverTo: string;
  behaviour?: string;
}

export function register(program: Command): void {
  program
    .command('sandbox')
    .description(COMMAND_SUMMARIES.sandbox.description)
    .option('--port <port>', 'port to listen on (0 = a free port)', '8088')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--transition <duration>', 'how long creating/editing/deleting take', '2s')
    .option('--delivery-timeout <duration>', 'webhook receiver deadline', '10s')
    .option(
      '--deliver-to <hosts>',
      "webhook receivers deliveries may reach: comma list of host names, .suffixes, IPs, CIDRs, loopback, none; '*' = any",
      'loopback',
    )
    .option('--admin-token <token>', 'token with APPLICATION_ADMIN')
    .option('--user-token <token>', 'token of an ordinary user')
    .option('--tokens-file <file>', 'JSON file: [{ "token", "role": "admin"|"user", "userId", "name" }]')
    .option('--data <file>', 'persist state to FILE (atomically) and load it on start')
    .option('--dev', 'accept the fixed, documented dev tokens (local use only)')
    .option('--latency <duration>', 'fault: add this latency to every request')
    .option('--error-rate <rate>', 'fault: answer this fraction (0..1) of requests with --error-status')
    .option('--error-status <code>', 'fault: status of injected errors (e.g. 503, 429)', '503')
    .option('--retry-after <seconds>', 'fault: Retry-After header on injected errors')
    .option('--drop-rate <rate>', 'fault: drop this fraction (0..1) of connections')
    .option('--conflict-rate <rate>', 'fault: answer this fraction (0..1) of requests with 409')
    .option('--fault-path <pattern>', 'fault flags apply to this route pattern, path, prefix* or *', '*')
    .option('--faults <file>', 'JSON file with an array of fault rules (see docs/sandbox.md)')
    .option(
      '--behaviour <names>',
      // Written out (the sandbox's modules load only when it runs); test/sandbox/behaviours.test.ts keeps it complete.
      'server behaviours where the interface is silent (comma list): omit-defaults, echo-sent, null-unset, extra-fields, ' +
        'numeric-ids, string-ids, omit-masked, shuffle, validation-warning, skip-creating, skip-editing, no-data-sources, ' +
        'data-source-metadata, hard-delete, reuse-ids, other-mask, mask-more, lower-hosts, list-lag, 503-after-success, ' +
        '503-after-success-all, unknown-statuses, status-404-lag, no-activity-id, dry-run-200-failed (see docs/sandbox.md)',
    )
    .option('--stuck-transitions [statuses]', 'fault: transitions never finish (all, or a comma list of creating,editing,deleting)')
    .action(async (flags: SandboxFlags, command: Command) => {
      const { sandboxAction } = await import('./sandbox-action.js');
      await sandboxAction(flags, command);
    });
}
