/** Retrying deliveries by history id (POST /webhooks/history/retry/{id}) with bounded concurrency. */
import PQueue from 'p-queue';
import type { ServiceApi } from '../api/client-types.js';
import type { WebhookHistoryRecord } from '../api/types.js';
import { ApiError, ErrorCode, TransportError } from '../errors.js';
import { isDelivered } from './records.js';

export interface RetryOutcome {
  /** The history id retried. */
  historyId: string;
  /** The resulting record (a new delivery). */
  record?: WebhookHistoryRecord;
  /** Why the retry request itself failed. */
  error?: Error;
  /** The retry was delivered (2xx). */
  ok: boolean;
}

/**
 * Why a retry request's failure holds for every other retry too, so a run of them stops there: the service refused
 * the token or its permission (`refused`: 401/403), could not be reached (`unreachable`: the connection not opened,
 * after the client's retries, nothing sent) or asked for fewer requests (`rate_limited`: a 429 the client's retries
 * did not get past, nothing delivered). Undefined for a failure of that one retry.
 */
export type RetryStopReason = 'refused' | 'unreachable' | 'rate_limited';

export const RETRY_STOP_REASONS: readonly RetryStopReason[] = ['refused', 'unreachable', 'rate_limited'];

export function retryStopReason(err: unknown): RetryStopReason | undefined {
  if (err instanceof ApiError && (err.statusCode === 401 || err.statusCode === 403)) return 'refused';
  if (err instanceof TransportError && err.code === ErrorCode.connectFailed) return 'unreachable';
  if (err instanceof ApiError && err.statusCode === 429) return 'rate_limited';
  return undefined;
}

/** What to do about a 403 on a retry: the token is known, it may not retry these deliveries. */
export const RETRY_FORBIDDEN_HINT =
  'the token is valid but lacks the permission to retry these deliveries: use the token of the webhook\'s owner or an ' +
  'administrator\'s (interface 5.3: administrators may retry any record) in GOVOPS_TOKEN (or --token-file)';

/** What to do about a 401 on a retry: the service does not know the token (any more). */
export const RETRY_UNAUTHORIZED_HINT =
  'the service does not accept the token (revoked, expired, or not one of this service\'s): check GOVOPS_TOKEN (or --token-file)';

/**
 * Each id once, in the order given. History ids are integers (interface 4.3): `041` and `41` are one record, written
 * without the leading zeros (the service reads both as 41, and a retry is a new delivery each time).
 */
export function uniqueIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => (/^\d+$/.test(id) ? id.replace(/^0+(?=\d)/, '') : id)))];
}

/**
 * Retry each id once (duplicates dropped), at most `concurrency` at a time. Results come back in
 * the order of `ids`; `onResult` sees each as it finishes. After an abort nothing new starts.
 */
export async function retryDeliveries(
  api: Pick<ServiceApi, 'retryWebhookDelivery'>,
  ids: readonly string[],
  options: { concurrency?: number; signal?: AbortSignal; onResult?: (o: RetryOutcome) => void } = {},
): Promise<RetryOutcome[]> {
  const queue = new PQueue({ concurrency: Math.max(1, options.concurrency ?? 4) });
  const unique = uniqueIds(ids);
  const results = await Promise.all(
    unique.map((historyId) =>
      queue.add(async (): Promise<RetryOutcome | undefined> => {
        if (options.signal?.aborted) return undefined;
        let outcome: RetryOutcome;
        try {
          const record = await api.retryWebhookDelivery(historyId);
          outcome = { historyId, record, ok: isDelivered(record) };
        } catch (err) {
          outcome = { historyId, error: err instanceof Error ? err : new Error(String(err)), ok: false };
        }
        options.onResult?.(outcome);
        return outcome;
      }),
    ),
  );
  return results.filter((r): r is RetryOutcome => r !== undefined);
}
