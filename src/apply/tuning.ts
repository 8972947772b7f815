/**
 * How a plan is carried out (`govops apply` / `govops run` flags): concurrency, the overall timeout, status
 * polling and webhook batches. Passed whole from the settings to applyPlan; `resolveTuning` fills the defaults once.
 */
import { DEFAULT_BATCH_LIMITS, type BatchLimits } from './webhook-batch.js';

export interface ApplyTuning {
  /** Dry runs and writes under way at once at most (--concurrency; default 8). */
  concurrency?: number;
  /** Overall apply timeout in ms (--timeout; default 10 minutes). */
  timeoutMs?: number;
  /** Status polling (src/apply/poller.ts): shortest interval between two polls of one integration, ms (--poll-min; default 25). */
  pollIntervalMs?: number;
  /** Longest interval between two polls of one integration, ms (--poll-max; default 30 s). */
  pollMaxIntervalMs?: number;
  /** Poll requests (status and lists) per second at most (--poll-rate; default 50). */
  pollRate?: number;
  /** Polls due at once from which one GET /integrations answers for all (default 4; Infinity: never list). */
  pollListThreshold?: number;
  /** Webhook creates per POST at most: items and body bytes (--webhook-batch-size / --webhook-batch-bytes). */
  webhookBatch?: Partial<BatchLimits>;
}

/** ApplyTuning with every default filled in. */
export interface ResolvedApplyTuning {
  concurrency: number;
  timeoutMs: number;
  pollIntervalMs: number;
  pollMaxIntervalMs: number;
  pollRate: number;
  pollListThreshold: number;
  webhookBatch: Partial<BatchLimits>;
}

export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_POLL_MIN_MS = 25;
export const DEFAULT_POLL_MAX_MS = 30_000;
export const DEFAULT_POLL_RATE = 50;
export const DEFAULT_POLL_LIST_THRESHOLD = 4;
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** The tuning with its defaults (a concurrency below 1 is 1; the batch limits are bounded by WebhookBatch). */
export function resolveTuning(t: ApplyTuning = {}): ResolvedApplyTuning {
  return {
    concurrency: Math.max(1, t.concurrency ?? DEFAULT_CONCURRENCY),
    timeoutMs: t.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    pollIntervalMs: t.pollIntervalMs ?? DEFAULT_POLL_MIN_MS,
    pollMaxIntervalMs: t.pollMaxIntervalMs ?? DEFAULT_POLL_MAX_MS,
    pollRate: t.pollRate ?? DEFAULT_POLL_RATE,
    pollListThreshold: t.pollListThreshold ?? DEFAULT_POLL_LIST_THRESHOLD,
    webhookBatch: { ...DEFAULT_BATCH_LIMITS, ...t.webhookBatch },
  };
}
