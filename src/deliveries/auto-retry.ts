/**
 * When the daemon retries failed deliveries by itself (`govops run --auto-retry-failed`): a pure
 * scheduler fed with the history records the health poller reads and with the results of its own
 * retries. It bounds what a dead receiver gets:
 * - per delivery (one event to one webhook, `deliveryKey`): at most `maxAttempts` automatic retries,
 *   spaced by exponential backoff (`backoffMs` doubling, at most `maxBackoffMs`);
 * - per webhook: after a failed retry its other deliveries wait out the same backoff, and only one of
 *   them is tried per round (a probe) until a retry gets through;
 * - overall: at most `perMinute` retries in any 60 s.
 * A delivery that gets through (by our retry, someone else's or a later record) is forgotten.
 */
import type { WebhookHistoryRecord } from '../api/types.js';
import { deliveryKey, isDelivered, recordKey, timeOf } from './records.js';

export interface AutoRetryPolicy {
  maxAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  perMinute: number;
}

export const DEFAULT_AUTO_RETRY: AutoRetryPolicy = { maxAttempts: 3, backoffMs: 60_000, maxBackoffMs: 3_600_000, perMinute: 10 };

/** Deliveries tracked at most (the oldest are dropped beyond it, and counted). */
const MAX_TRACKED = 10_000;

export interface PendingDelivery {
  key: string;
  webhookId: string;
  /** The newest failed record of the delivery: the one retried. */
  record: WebhookHistoryRecord;
  /** Automatic retries made so far. */
  attempts: number;
  /** Not before this time (ms). */
  nextAt: number;
  /** When `take` last took it (its rate-limit slot). */
  takenAt?: number;
}

interface WebhookGate {
  consecutiveFailures: number;
  nextAt: number;
}

export type RetryResult =
  | { kind: 'record'; record: WebhookHistoryRecord }
  /** The record or its webhook is gone (404): nothing to retry any more. */
  | { kind: 'gone' }
  | { kind: 'error' }
  /**
   * Not sent: this replica may not write now (the lease was lost during the round, the write gate refused it). Nothing
   * reached the service nor the receiver: the attempt and its rate-limit slot are given back, no backoff.
   */
  | { kind: 'unsent' }
  /**
   * The service refused the retry request itself (401/403: the token): the delivery was not retried, nothing reached
   * the receiver. The attempt is given back (the delivery's cap is not spent), its webhook is not held back; the
   * request did reach the service, so its rate-limit slot stays spent and the delivery waits its current backoff.
   */
  | { kind: 'refused' }
  /**
   * The service answered the retry request 429 past the client's own retries (it asked for fewer requests): nothing
   * reached the receiver. The attempt is given back, no backoff (the delivery is due at the next round), its webhook is
   * not held back; the request reached the service, so its rate-limit slot stays spent.
   */
  | { kind: 'deferred' };

export interface RetryVerdict {
  /** The delivery got through. */
  delivered: boolean;
  /** The cap is reached: no more automatic retries for this delivery. */
  exhausted: boolean;
  attempt: number;
  /** When the next retry may happen (ms), unless delivered or exhausted. */
  nextAt?: number;
}

export class AutoRetryScheduler {
  private readonly pending = new Map<string, PendingDelivery>();
  private readonly gates = new Map<string, WebhookGate>();
  /** Keys of the records our retries produced: the poller reads them later and they are not news. */
  private readonly ownRecords = new Set<string>();
  /** Deliveries that reached the cap: not retried again automatically (until one gets through). */
  private readonly gaveUp = new Set<string>();
  private readonly recent: number[] = [];
  exhausted = 0;
  dropped = 0;

  constructor(
    readonly policy: AutoRetryPolicy,
    /** A monotonic reading in ms (backoffs, the rate limit's minute): never the time of day, which NTP may set back. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /** Webhooks whose retries wait out a backoff after a failed one (at most MAX_TRACKED). */
  get gatedWebhooks(): number {
    return this.gates.size;
  }

  private backoff(n: number): number {
    return Math.min(this.policy.maxBackoffMs, this.policy.backoffMs * 2 ** Math.max(0, n - 1));
  }

  /**
   * A record read from the history. `managed`: its webhook is one govops manages (only those are
   * retried). Successes of any delivery clear it and reopen its webhook's gate.
   */
  observe(record: WebhookHistoryRecord, managed: boolean): void {
    const own = this.ownRecords.delete(recordKey(record));
    const key = deliveryKey(record);
    // a record of no delivery (no activity id, no payload) is not tracked: a retry of it that got through could not
    // be recognised. One that got through still reopens its webhook's gate.
    if (key === undefined) {
      if (isDelivered(record)) this.gates.delete(record.webhookId);
      return;
    }
    const known = this.pending.get(key);
    if (isDelivered(record)) {
      this.pending.delete(key);
      this.gaveUp.delete(key);
      this.gates.delete(record.webhookId);
      return;
    }
    // A record the service sent without its id cannot be retried (POST /webhooks/history/retry/ names no record).
    if (own || !managed || this.gaveUp.has(key) || record.id === '') return;
    if (known) {
      // A newer failure of the same delivery (e.g. a manual retry): retry that one, same count.
      if (timeOf(record) >= timeOf(known.record)) known.record = record;
      return;
    }
    this.pending.set(key, { key, webhookId: record.webhookId, record, attempts: 0, nextAt: this.now() + this.backoff(1) });
    if (this.pending.size > MAX_TRACKED) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.dropped++;
    }
  }

  /**
   * Drop the pending deliveries (and backoff gates) of webhooks not in `managed`: a webhook govops stopped managing
   * (`state forget`, its manifest deleted) is somebody else's, and its failures are not retried any more. Returns how
   * many pending deliveries went.
   */
  keepOnly(managed: { has(webhookId: string): boolean }): number {
    let dropped = 0;
    for (const [key, p] of this.pending) {
      if (managed.has(p.webhookId)) continue;
      this.pending.delete(key);
      dropped++;
    }
    for (const id of this.gates.keys()) if (!managed.has(id)) this.gates.delete(id);
    return dropped;
  }

  /** Retries in the last minute. */
  private used(now: number): number {
    while (this.recent.length > 0 && this.recent[0]! <= now - 60_000) this.recent.shift();
    return this.recent.length;
  }

  /**
   * The deliveries to retry now (oldest first), counted against the rate limit and their cap. Call
   * `settle` with each one's result.
   */
  take(): PendingDelivery[] {
    const now = this.now();
    let budget = this.policy.perMinute - this.used(now);
    const out: PendingDelivery[] = [];
    const probed = new Set<string>();
    const due = [...this.pending.values()].filter((p) => p.nextAt <= now).sort((a, b) => timeOf(a.record) - timeOf(b.record));
    for (const p of due) {
      if (budget <= 0) break;
      const gate = this.gates.get(p.webhookId);
      if (gate && gate.nextAt > now) continue;
      if (gate && gate.consecutiveFailures > 0) {
        if (probed.has(p.webhookId)) continue;
        probed.add(p.webhookId);
      }
      p.attempts++;
      p.nextAt = Number.POSITIVE_INFINITY; // in flight
      p.takenAt = now;
      this.recent.push(now);
      budget--;
      out.push(p);
    }
    return out;
  }

  /** The result of retrying `p` (taken by `take`). */
  settle(p: PendingDelivery, result: RetryResult): RetryVerdict {
    const now = this.now();
    if (result.kind === 'unsent') {
      p.attempts--;
      p.nextAt = now;
      const slot = this.recent.lastIndexOf(p.takenAt ?? now);
      if (slot >= 0) this.recent.splice(slot, 1);
      return { delivered: false, exhausted: false, attempt: p.attempts };
    }
    if (result.kind === 'refused' || result.kind === 'deferred') {
      p.attempts--;
      p.nextAt = result.kind === 'deferred' ? now : now + this.backoff(p.attempts + 1);
      return { delivered: false, exhausted: false, attempt: p.attempts, nextAt: p.nextAt };
    }
    if (result.kind === 'record') this.ownRecords.add(recordKey(result.record));
    if (this.ownRecords.size > MAX_TRACKED) this.ownRecords.delete(this.ownRecords.values().next().value as string);
    if (result.kind === 'gone' || (result.kind === 'record' && isDelivered(result.record))) {
      this.pending.delete(p.key);
      if (result.kind === 'record') this.gates.delete(p.webhookId);
      return { delivered: result.kind === 'record', exhausted: false, attempt: p.attempts };
    }
    if (result.kind === 'record') p.record = result.record;
    // The webhook's other deliveries wait out the same backoff, then go one at a time until one gets through.
    const gate = this.gates.get(p.webhookId) ?? { consecutiveFailures: 0, nextAt: 0 };
    gate.consecutiveFailures++;
    gate.nextAt = Math.max(gate.nextAt, now + this.backoff(p.attempts + 1));
    this.gates.delete(p.webhookId); // re-inserted: the newest last, so the oldest goes first past the cap
    this.gates.set(p.webhookId, gate);
    // A gate is cleared by a delivery that gets through; a webhook deleted meanwhile never has one: capped as the rest.
    if (this.gates.size > MAX_TRACKED) this.gates.delete(this.gates.keys().next().value as string);
    if (p.attempts >= this.policy.maxAttempts) {
      this.pending.delete(p.key);
      this.gaveUp.add(p.key);
      if (this.gaveUp.size > MAX_TRACKED) this.gaveUp.delete(this.gaveUp.values().next().value as string);
      this.exhausted++;
      return { delivered: false, exhausted: true, attempt: p.attempts };
    }
    p.nextAt = now + this.backoff(p.attempts + 1);
    return { delivered: false, exhausted: false, attempt: p.attempts, nextAt: p.nextAt };
  }
}
