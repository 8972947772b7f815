/** Prometheus metrics of the daemon's webhook delivery-health polling (registered in the daemon's registry). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { RETRY_STOP_REASONS } from '../deliveries/retry.js';
import { WEBHOOK_ACTIONS } from '../service/events.js';

/** `webhook` label of records whose webhook govops does not manage (one series for all of them). */
export const UNMANAGED_LABEL = '(unmanaged)';

const KNOWN_EVENTS: ReadonlySet<string> = new Set(WEBHOOK_ACTIONS);

/** Event names the service sends that govops does not know are one series, `other` (bounded cardinality). */
export function eventLabel(name: string): string {
  return KNOWN_EVENTS.has(name) ? name : 'other';
}

/** Transport error codes a delivery may record (the interface names ESOCKETTIMEDOUT); others are `other`. */
const KNOWN_CODES: ReadonlySet<string> = new Set([
  'ESOCKETTIMEDOUT',
  'ETIMEDOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The `code` label of a failed delivery: a known transport error code, else `HTTP <status>` for a status of
 * 100-599, else `other`. The service's free text never becomes a label value (bounded cardinality).
 */
export function codeLabel(r: { responseCode?: string; statusCode: number }): string {
  if (r.responseCode !== undefined) return KNOWN_CODES.has(r.responseCode) ? r.responseCode : 'other';
  return Number.isInteger(r.statusCode) && r.statusCode >= 100 && r.statusCode <= 599 ? `HTTP ${r.statusCode}` : 'other';
}

/** Rounds of automatic retries stopped at a failure that holds for every retry (src/daemon/webhook-health.ts), by reason. */
function stopMetrics(registers: Registry[]): { stopped: Gauge<'reason'>; roundsStopped: Counter<'reason'> } {
  const stopped = new Gauge({
    name: 'govops_webhook_auto_retry_stopped',
    help: 'Whether the last round of automatic retries that sent one stopped at it, by reason (refused: 401/403, the token or its permission; unreachable: the connection not opened; rate_limited: a 429 past the client retries, the retry deferred): 1 until a round is not stopped, or no delivery is pending',
    labelNames: ['reason'],
    registers,
  });
  const roundsStopped = new Counter({
    name: 'govops_webhook_auto_retry_rounds_stopped_total',
    help: 'Rounds of automatic retries stopped at a retry request whose failure holds for every retry, by reason (the rest of the round not attempted, nothing spent)',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of RETRY_STOP_REASONS) {
    stopped.set({ reason }, 0);
    roundsStopped.inc({ reason }, 0);
  }
  return { stopped, roundsStopped };
}

export class WebhookHealthMetrics {
  readonly deliveries: Counter<'webhook' | 'event' | 'outcome'>;
  readonly failures: Counter<'webhook' | 'code'>;
  readonly lastFailure: Gauge<'webhook'>;
  readonly lastSuccess: Gauge<'webhook'>;
  readonly polls: Counter<'result'>;
  readonly pollRequests: Counter;
  readonly pollRecords: Counter;
  readonly pollDuration: Histogram;
  readonly stateUnreadable: Gauge;
  readonly autoRetries: Counter<'webhook' | 'result'>;
  readonly autoRetryExhausted: Counter<'webhook'>;
  readonly autoRetryPending: Gauge;
  readonly autoRetryStopped: Gauge<'reason'>;
  readonly autoRetryRoundsStopped: Counter<'reason'>;

  constructor(registry: Registry, autoRetry: boolean) {
    const registers = [registry];
    this.deliveries = new Counter({
      name: 'govops_webhook_deliveries_total',
      help: `Webhook deliveries recorded in the service's history since the first poll, by webhook (manifest name; ${UNMANAGED_LABEL} for others), event and outcome (delivered: 2xx, failed)`,
      labelNames: ['webhook', 'event', 'outcome'],
      registers,
    });
    this.failures = new Counter({
      name: 'govops_webhook_delivery_failures_total',
      help: 'Failed webhook deliveries since the first poll by webhook and code (a known transport error code such as ESOCKETTIMEDOUT, else HTTP <status>; other for anything else)',
      labelNames: ['webhook', 'code'],
      registers,
    });
    this.lastFailure = new Gauge({
      name: 'govops_webhook_last_failure_timestamp_seconds',
      help: 'createdAt (Unix time) of the newest failed delivery seen per managed webhook',
      labelNames: ['webhook'],
      registers,
    });
    this.lastSuccess = new Gauge({
      name: 'govops_webhook_last_success_timestamp_seconds',
      help: 'createdAt (Unix time) of the newest successful delivery seen per managed webhook',
      labelNames: ['webhook'],
      registers,
    });
    this.polls = new Counter({
      name: 'govops_webhook_health_polls_total',
      help: 'Polls of the webhook delivery history by result (ok, error)',
      labelNames: ['result'],
      registers,
    });
    this.pollRequests = new Counter({
      name: 'govops_webhook_health_requests_total',
      help: 'GET /webhooks/history requests made by the delivery-health polling',
      registers,
    });
    this.pollRecords = new Counter({
      name: 'govops_webhook_health_records_read_total',
      help: 'History records received by the delivery-health polling (repeats within the overlap window included)',
      registers,
    });
    this.pollDuration = new Histogram({
      name: 'govops_webhook_health_poll_duration_seconds',
      help: 'Duration of one delivery-health poll (history pages and automatic retries)',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.stateUnreadable = new Gauge({
      name: 'govops_webhook_health_state_unreadable',
      help: 'Whether the govops state could not be read at the last poll (1: the round was skipped, no retry sent; /status webhookHealth.stateError says why)',
      registers,
    });
    this.autoRetries = new Counter({
      name: 'govops_webhook_auto_retries_total',
      help: 'Automatic retries of failed deliveries by webhook and result (delivered, failed, gone: record or webhook deleted, error: the retry request failed; a round stopped is not counted here: govops_webhook_auto_retry_rounds_stopped_total)',
      labelNames: ['webhook', 'result'],
      registers: autoRetry ? registers : [],
    });
    this.autoRetryExhausted = new Counter({
      name: 'govops_webhook_auto_retry_exhausted_total',
      help: 'Deliveries given up after the per-delivery cap of automatic retries',
      labelNames: ['webhook'],
      registers: autoRetry ? registers : [],
    });
    this.autoRetryPending = new Gauge({
      name: 'govops_webhook_auto_retry_pending',
      help: 'Failed deliveries of managed webhooks waiting for an automatic retry',
      registers: autoRetry ? registers : [],
    });
    ({ stopped: this.autoRetryStopped, roundsStopped: this.autoRetryRoundsStopped } = stopMetrics(autoRetry ? registers : []));
    this.polls.inc({ result: 'ok' }, 0);
    this.polls.inc({ result: 'error' }, 0);
    this.pollRequests.inc(0);
    this.pollRecords.inc(0);
    this.stateUnreadable.set(0);
    if (autoRetry) this.autoRetryPending.set(0);
  }

  /**
   * Remove every series of a webhook govops no longer manages (deleted, renamed): any `webhook` label value but the
   * unmanaged one that is not in `managed`. Its deliveries count as unmanaged from then on, and a series left behind
   * would stay frozen forever (an alert on its last failure would never clear). Returns how many series went.
   */
  async forgetExcept(managed: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    const byWebhook = [this.deliveries, this.failures, this.lastFailure, this.lastSuccess, this.autoRetries, this.autoRetryExhausted];
    for (const metric of byWebhook as Array<Counter<string> | Gauge<string>>) {
      for (const { labels } of (await metric.get()).values) {
        const webhook = labels.webhook;
        if (webhook === undefined || webhook === UNMANAGED_LABEL || managed.has(String(webhook))) continue;
        metric.remove(labels as Record<string, string>);
        removed++;
      }
    }
    return removed;
  }
}
