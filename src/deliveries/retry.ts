/** Retrying deliveries by history id (POST /webhooks/history/retry/{id}) with bounded concurrency. */
import PQueue from 'p-queue';
import type { ServiceApi } from '../api/client-types.js';
import type { WebhookHistoryRecord } from '../api/types.js';
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
