/**
 * The flags tuning how a plan is carried out, shared by `govops apply` and `govops run`: parallel slots and the
 * overall timeout (declared by each command, their help differs), status polling (src/apply/poller.ts) and
 * webhook batches (src/apply/webhook-batch.ts); `applyTuningFrom` makes the one `ApplyTuning` passed down whole.
 */
import type { Command } from 'commander';
import { UserError } from '../errors.js';
import { parseCount } from './flags.js';
import type { ApplyTuning } from '../reconcile/types.js';
import { parseTimerDuration } from '../util/duration.js';
import { parseSize } from '../util/size.js';

export interface ApplyTuningFlags {
  /** --concurrency and --timeout: left to the applier's defaults when not given. */
  concurrency?: string;
  timeout?: string;
  pollMin?: string;
  pollMax?: string;
  pollRate?: string;
  webhookBatchSize?: string;
  webhookBatchBytes?: string;
}

const DEFAULTS = { pollMin: '25ms', pollMax: '30s', pollRate: '50', webhookBatchSize: '500', webhookBatchBytes: '256KiB' } as const;

export function addApplyTuningOptions<C extends Command>(cmd: C): C {
  cmd
    .option('--poll-min <duration>', 'shortest interval between two status polls of one integration', DEFAULTS.pollMin)
    .option('--poll-max <duration>', 'longest interval between two status polls of one integration', DEFAULTS.pollMax)
    .option('--poll-rate <n>', 'status requests (and lists) per second at most, over all integrations', DEFAULTS.pollRate)
    .option('--webhook-batch-size <n>', 'webhooks created per request at most', DEFAULTS.webhookBatchSize)
    .option('--webhook-batch-bytes <size>', 'request body of one webhook batch at most, e.g. 256KiB, 1MiB', DEFAULTS.webhookBatchBytes);
  return cmd;
}

function positive(flag: string, text: string, parse: (t: string) => number): number {
  let n: number;
  try {
    n = parse(text);
  } catch (err) {
    const message = (err as Error).message;
    throw new UserError(/^\S+: must be at most/.test(message) ? `${flag} ${message}` : `${flag}: ${message}`);
  }
  if (!Number.isFinite(n) || n <= 0) throw new UserError(`${flag} must be greater than zero, got "${text}"`);
  return n;
}

export function applyTuningFrom(given: ApplyTuningFlags): ApplyTuning {
  const concurrency = parseCount('--concurrency', given.concurrency, 1);
  // 0 is no time at all (not "no limit"): every resource would be skipped, on every apply and every reconcile of run
  const timeoutMs = given.timeout === undefined ? undefined : positive('--timeout', given.timeout, parseTimerDuration);
  const flags = { ...DEFAULTS, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) } as Required<ApplyTuningFlags>;
  const pollIntervalMs = positive('--poll-min', flags.pollMin, parseTimerDuration);
  const pollMaxIntervalMs = positive('--poll-max', flags.pollMax, parseTimerDuration);
  if (pollMaxIntervalMs < pollIntervalMs) throw new UserError(`--poll-max (${flags.pollMax}) must not be shorter than --poll-min (${flags.pollMin})`);
  const pollRate = positive('--poll-rate', flags.pollRate, (t) => {
    if (!/^\d+(\.\d+)?$/.test(t.trim())) throw new Error(`must be a number of requests per second, got "${t}"`);
    return Number(t);
  });
  const maxItems = positive('--webhook-batch-size', flags.webhookBatchSize, (t) => {
    if (!/^\d+$/.test(t.trim())) throw new Error(`must be a whole number, got "${t}"`);
    return Number(t);
  });
  const maxBytes = positive('--webhook-batch-bytes', flags.webhookBatchBytes, parseSize);
  const tuning: ApplyTuning = { pollIntervalMs, pollMaxIntervalMs, pollRate, webhookBatch: { maxItems, maxBytes } };
  if (concurrency !== undefined) tuning.concurrency = concurrency;
  if (timeoutMs !== undefined) tuning.timeoutMs = timeoutMs;
  return tuning;
}
