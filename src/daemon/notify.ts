/**
 * Posting reconcile notifications (`govops run --notify-url URL`, repeatable): each event (notify-event.ts) is
 * POSTed as CloudEvents 1.0 structured JSON (`application/cloudevents+json`) to every URL, in order, with the
 * headers configured for that URL (a secret value read from a file, e.g. `Authorization=/run/secrets/token`).
 *
 * Delivery never holds up a reconcile: each URL has its own queue, worked through in the background. A failed
 * POST (no connection, a timeout, 408, 429, 5xx) is tried again with exponential backoff, a bounded number of
 * times, or after the receiver's `Retry-After` when it gives one (at most MAX_NOTIFY_RETRY_AFTER_MS); another 4xx is final. A repeat of the last event sent (same type, revision and results: the same drift
 * found at every resync, the same failure at every retry) is not sent again to a URL that got it or is getting it;
 * after a reconcile with nothing to tell (in sync), or to a URL that did not get it (failed, dropped), it is news again.
 * Events the stop leaves undelivered (queued, in flight, waiting to be tried again) are `dropped`, not `failed`. The body passes the one redactor,
 * and header values are registered with it: no secret leaves in an event, a log line or an error.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { sleep, systemClock, type Clock } from '../util/clock.js';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { requestUrl } from '../util/undici.js';
import { parseRetryAfter } from '../api/retry.js';
import { cutRedacted } from '../util/cut.js';
import { redactJsonText, redactJsonValue, redactText, registerSecrets } from '../util/redact.js';
import type { Attempt } from './loop.js';
import { eventFor, eventSignature, type CloudEvent } from './notify-event.js';

export interface NotifyTarget {
  url: string;
  /** Extra headers (values are secrets: never logged). */
  headers?: Record<string, string>;
}

export interface NotifierOptions {
  targets: NotifyTarget[];
  logger: Logger;
  registry?: Registry;
  /** The daemon runs with --observe. */
  observe: boolean;
  /** This replica's identity (`--identity`), the events' `govopsidentity` attribute. */
  identity?: string;
  /** What is reconciled (repository or folder), for the event data. */
  origin?: string;
  /** Tries of one POST (default 5). */
  attempts?: number;
  /** First backoff (default 1s), doubling, at most `maxBackoffMs` (default 30s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * The longest wait a receiver's `Retry-After` (on a 408, 425, 429 or 5xx: seconds or an HTTP date) sets before the
   * next try (default MAX_NOTIFY_RETRY_AFTER_MS); without a readable one, the backoff.
   */
  maxRetryAfterMs?: number;
  /** Timeout of one POST (default 10s). */
  timeoutMs?: number;
  /** Events waiting per URL at most; the oldest is dropped beyond it (default 100). */
  maxQueue?: number;
  userAgent?: string;
  /** Event times, retry backoffs and the shutdown grace (default the system's; its timers keep the process up). */
  clock?: Clock;
  /**
   * Whether this replica tells (default: always). With a PostgreSQL state, only the leader: a standby plans every
   * revision too, and its rejections, blocks and failures are the leader's to tell (once, not once per replica).
   */
  active?: () => boolean;
}

const RETRY_STATUSES = new Set([408, 425, 429]);

/**
 * The longest a receiver's `Retry-After` holds a URL's queue before the next try: 5 minutes. A receiver asking for
 * longer (an hour) is tried again then; the tries stay bounded (`attempts`), and the stop still ends the wait.
 */
export const MAX_NOTIFY_RETRY_AFTER_MS = 5 * 60_000;

/**
 * How a notification URL is shown (logs, /status): its origin only. The rest may be a secret (chat webhooks
 * carry their token in the path); the whole URL is registered with the redactor too.
 */
export function notifyUrlLabel(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * What of a notification URL is registered with the redactor: the whole URL when it holds more than its origin (a
 * path, a query, a fragment, credentials: chat webhooks carry their token in the path), nothing when it is its origin
 * alone. Registered, such a URL hid the very origin it is shown by (`[redacted]/…` in the log and /status), and every
 * other text naming that host (a webhook manifest's url in a plan), while nothing in it is secret.
 */
export function notifyUrlSecrets(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [url];
  }
  const originOnly = u.pathname === '/' && u.search === '' && u.hash === '' && u.username === '' && u.password === '';
  return originOnly ? [] : [url];
}

/** Characters of one message or problem in an event at most: what a person reads, not a manifest quoted whole. */
export const MAX_EVENT_TEXT = 1000;

/**
 * The event's texts (redacted already) cut to MAX_EVENT_TEXT: a problem names its resource, and an invalid
 * manifest's name is as long as its file (1 MiB), so 20 problems made an event of ~20 MB, held per URL and queued
 * event (100) while a receiver is down.
 */
function cutTexts(e: CloudEvent): CloudEvent {
  const cut = (t: string): string => cutRedacted(t, MAX_EVENT_TEXT);
  const d = e.data;
  return {
    ...e,
    data: {
      ...d,
      message: cut(d.message),
      resources: d.resources.map((r) => (r.message === undefined ? r : { ...r, message: cut(r.message) })),
      ...(d.problems ? { problems: d.problems.map(cut) } : {}),
      ...(d.deletionGuard ? { deletionGuard: { ...d.deletionGuard, message: cut(d.deletionGuard.message) } } : {}),
    },
  };
}

interface Queued {
  event: CloudEvent;
  /** What makes it the same news as another event (eventSignature). */
  signature: string;
}

/**
 * Per-URL delivery queue, with its own memory of the last news: an event this URL did not get (failed after its
 * retries, or dropped) is forgotten, so the same news at the next reconcile is sent to it again.
 */
class Lane {
  private queue: Queued[] = [];
  private working?: Promise<void>;
  /** The signature of the last event queued here, unless its delivery failed. */
  private last?: string;
  constructor(
    readonly target: NotifyTarget,
    private readonly send: (target: NotifyTarget, event: CloudEvent) => Promise<boolean>,
    private readonly maxQueue: number,
    private readonly onDrop: (e: CloudEvent) => void,
  ) {}

  /** Queues the event unless it repeats the last one; false for a repeat. */
  push(q: Queued): boolean {
    if (q.signature === this.last) return false;
    this.last = q.signature;
    this.queue.push(q);
    while (this.queue.length > this.maxQueue) {
      const dropped = this.queue.shift()!;
      this.forget(dropped);
      this.onDrop(dropped.event);
    }
    this.working ??= this.work().finally(() => {
      this.working = undefined;
    });
    return true;
  }

  /** Nothing to tell (in sync): whatever was last sent is over. */
  reset(): void {
    this.last = undefined;
  }

  private forget(q: Queued): void {
    if (this.last === q.signature) this.last = undefined;
  }

  private async work(): Promise<void> {
    for (let q = this.queue.shift(); q; q = this.queue.shift()) {
      if (!(await this.send(this.target, q.event))) this.forget(q);
    }
  }

  idle(): Promise<void> {
    return this.working ?? Promise.resolve();
  }
}

export class Notifier {
  private readonly lanes: Lane[];
  private readonly stopping = new AbortController();
  private readonly source = `govops://${os.hostname()}`;
  private readonly total?: Counter<'result'>;

  private readonly clock: Clock;

  constructor(private readonly opts: NotifierOptions) {
    this.clock = opts.clock ?? systemClock;
    for (const t of opts.targets) registerSecrets(...notifyUrlSecrets(t.url), ...Object.values(t.headers ?? {}));
    if (opts.registry) {
      this.total = new Counter({
        name: 'govops_notifications_total',
        help: 'Reconcile notifications (--notify-url) by result: delivered, failed (after every retry), dropped (queue full, or still queued or being tried when govops stopped)',
        labelNames: ['result'],
        registers: [opts.registry],
      });
      for (const result of ['delivered', 'failed', 'dropped']) this.total.inc({ result }, 0);
    }
    this.lanes = opts.targets.map(
      (t) =>
        new Lane(t, (target, e) => this.deliver(target, e), opts.maxQueue ?? 100, (e) => {
          this.total?.inc({ result: 'dropped' });
          this.opts.logger.warn({ url: notifyUrlLabel(t.url), type: e.type, id: e.id }, 'notification dropped: too many waiting');
        }),
    );
  }

  /** After every reconcile attempt: queue its event, if it has one and it is not a repeat. */
  notify(a: Attempt): void {
    const event = eventFor(a, {
      id: randomUUID(),
      time: new Date(this.clock.now()).toISOString(),
      source: this.source,
      ...(this.opts.identity !== undefined ? { identity: this.opts.identity } : {}),
      observe: this.opts.observe,
      ...(this.opts.origin ? { origin: this.opts.origin } : {}),
    });
    // Nothing to tell (in sync): whatever was last sent is over, so the same failure or drift again is news.
    if (!event) {
      for (const lane of this.lanes) lane.reset();
      return;
    }
    // A standby tells nothing, but what it sees in sync (above) ends what it told while it led: leading again, the
    // same failure is a new outage, not a repeat.
    if (this.opts.active && !this.opts.active()) return;
    // Redacted now, with the secrets of the reconcile it reports: a queued event outlives their generation.
    const queued = { event: cutTexts(redactJsonValue(event)), signature: eventSignature(event) };
    let repeats = 0;
    for (const lane of this.lanes) if (!lane.push(queued)) repeats++;
    if (repeats > 0) this.opts.logger.debug({ type: event.type, revision: a.revision, urls: repeats }, 'notification not repeated: same as the last one sent');
  }

  /** Resolves when every queue is empty (tests). */
  async idle(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.idle()));
  }

  /** Shutdown: let deliveries in progress finish within `graceMs`, then stop retrying. */
  async stop(graceMs: number): Promise<void> {
    const gaveUp = new AbortController();
    await Promise.race([this.idle(), sleep(this.clock, graceMs, gaveUp.signal).catch(() => undefined)]);
    gaveUp.abort();
    this.stopping.abort();
    await this.idle();
  }

  /**
   * An event whose delivery the stop ended (still queued, in flight, or waiting to be tried again): `dropped`, as one
   * the full queue pushed out, not `failed` (the receiver refused it or was down through every try).
   */
  private droppedAtStop(log: Logger, attempts: number): false {
    this.total?.inc({ result: 'dropped' });
    log.warn({ attempts }, 'notification dropped: govops is stopping');
    return false;
  }

  /** True when the event was delivered. */
  private async deliver(target: NotifyTarget, event: CloudEvent): Promise<boolean> {
    const attempts = this.opts.attempts ?? 5;
    let backoff = this.opts.backoffMs ?? 1000;
    const body = redactJsonText(JSON.stringify(event));
    const log = this.opts.logger.child({ url: notifyUrlLabel(target.url), type: event.type, id: event.id });
    // still queued when govops stops: not sent at all
    if (this.stopping.signal.aborted) return this.droppedAtStop(log, 0);
    for (let attempt = 1; ; attempt++) {
      let retry: boolean;
      let why: string;
      /** The receiver's Retry-After, in ms (capped); undefined: none, or unreadable. */
      let asked: number | undefined;
      try {
        const res = await requestUrl(target.url, {
          method: 'POST',
          headers: {
            ...(target.headers ?? {}),
            'content-type': 'application/cloudevents+json; charset=utf-8',
            'user-agent': this.opts.userAgent ?? 'govops',
          },
          body,
          headersTimeout: this.opts.timeoutMs ?? 10_000,
          bodyTimeout: this.opts.timeoutMs ?? 10_000,
          signal: this.stopping.signal,
        });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) {
          this.total?.inc({ result: 'delivered' });
          log.debug({ status: res.statusCode, attempt }, 'notification delivered');
          return true;
        }
        retry = res.statusCode >= 500 || RETRY_STATUSES.has(res.statusCode);
        why = `HTTP ${res.statusCode}`;
        // the time of day from the injected clock: an HTTP date's delay
        if (retry) asked = parseRetryAfter(res.headers['retry-after'], this.clock.now(), this.opts.maxRetryAfterMs ?? MAX_NOTIFY_RETRY_AFTER_MS);
      } catch (err) {
        // cut short by the stop (in flight, or after a retry's wait the stop ended): not the receiver's failure
        if (this.stopping.signal.aborted) return this.droppedAtStop(log, attempt - 1);
        retry = true;
        why = redactText(err instanceof Error ? err.message : String(err));
      }
      if (retry && attempt < attempts && this.stopping.signal.aborted) return this.droppedAtStop(log, attempt);
      if (!retry || attempt >= attempts) {
        this.total?.inc({ result: 'failed' });
        log.warn({ attempt, error: why }, 'notification not delivered');
        return false;
      }
      // the receiver's Retry-After when it gave one (a 429's rate limit, a 503's downtime), else the backoff
      const wait = asked ?? backoff;
      log.info({ attempt, error: why, retryInMs: wait, ...(asked !== undefined ? { retryAfter: true } : {}) }, 'notification failed; retrying');
      await sleep(this.clock, wait, this.stopping.signal).catch(() => undefined); // shutdown ends the wait
      backoff = Math.min(backoff * 2, this.opts.maxBackoffMs ?? 30_000);
    }
  }
}
