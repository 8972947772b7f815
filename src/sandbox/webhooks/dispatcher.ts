/**
 * Runs deliveries concurrently (bounded), records each outcome in the history, and tracks what is
 * in flight for idle() and close(). API requests never wait on it, except retry, which returns
 * the new record.
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Logger } from '../../log.js';
import { deliver, failureOutcome, type DeliveryOutcome, type DeliveryTimers } from './delivery.js';
import { BLOCKED_CODE, checkHost, lookupFor, parseDeliveryHosts, type DeliveryPolicy } from './hosts.js';
import { rawBodyOf } from './payload.js';
import type { Caller } from '../http.js';
import { page, selectHistory, selectionKey, type HistoryQuery } from './history.js';
import type { DeliveryRequest, HistoryRecord, StoredWebhook } from './types.js';

/** Simultaneous outbound connections. */
export const DELIVERY_CONCURRENCY = 64;

/** Selections kept between pages: a reader going through them page by page is not filtered and sorted again. */
const KEPT_SELECTIONS = 8;

export class HistoryStore {
  records: HistoryRecord[] = [];
  private readonly byId = new Map<number, HistoryRecord>();
  /** Selections of the records as they are now (records never change once added): dropped at any addition. */
  private readonly selections = new Map<string, HistoryRecord[]>();
  nextId = 1;

  add(r: HistoryRecord): void {
    this.records.push(r);
    this.byId.set(r.id, r);
    this.selections.clear();
  }

  /**
   * A page of what a query selects. Offset paging through R records filtered and sorted them all for each page
   * (100,000 records read 100 at a time: 15 s); a reader's next page now reuses the selection.
   */
  query(caller: Pick<Caller, 'role' | 'userId'>, q: HistoryQuery): { count: number; records: HistoryRecord[] } {
    const key = selectionKey(caller, q);
    let hits = this.selections.get(key);
    if (!hits) {
      hits = selectHistory(this.records, caller, q);
      if (this.selections.size >= KEPT_SELECTIONS) this.selections.delete(this.selections.keys().next().value!);
      this.selections.set(key, hits);
    }
    return page(hits, q);
  }
  get(id: number): HistoryRecord | undefined {
    return this.byId.get(id);
  }
  clear(): void {
    this.records = [];
    this.byId.clear();
    this.selections.clear();
    this.nextId = 1;
  }
  load(records: HistoryRecord[], nextId: number): void {
    this.clear();
    for (const r of [...records].sort((a, b) => a.id - b.id)) this.add(r);
    this.nextId = records.reduce((m, r) => Math.max(m, r.id + 1), Math.max(nextId, 1));
  }
}

/** A FIFO limit on concurrent tasks (O(1) per task, unlike a priority queue). */
export class Limiter {
  private active = 0;
  private waiting: Array<() => void> = [];
  private head = 0;

  constructor(private readonly max: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private release(): void {
    if (this.head < this.waiting.length) {
      // Hand the slot over directly (active stays the same).
      const next = this.waiting[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      next();
    } else this.active--;
  }
}

export interface Job {
  webhook: StoredWebhook;
  request: DeliveryRequest;
  notificationType: string;
  webhooksActivityId: number;
}

/** Which receivers deliveries may reach, and how allowed names are resolved (see hosts.ts). */
export interface DeliveryGuard {
  policy: DeliveryPolicy;
  /** Resolver for allowed names other than `localhost` (default: the system resolver). */
  lookup?: LookupFunction;
  /** Timers of the delivery deadline (default: the system's). */
  timers?: DeliveryTimers;
}

export class Dispatcher {
  /** Hosts already reported as blocked at info level (later blocks log at debug). */
  private readonly reportedBlocked = new Set<string>();
  private readonly limiter = new Limiter(DELIVERY_CONCURRENCY);
  private readonly pending = new Set<Promise<unknown>>();
  private abort = Dispatcher.controller();
  /** Keep-alive connections to receivers, shared by all deliveries. */
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: DELIVERY_CONCURRENCY }),
    https: new https.Agent({ keepAlive: true, maxSockets: DELIVERY_CONCURRENCY }),
  };

  private static controller(): AbortController {
    const c = new AbortController();
    setMaxListeners(0, c.signal); // one listener per delivery in flight
    return c;
  }

  constructor(
    private readonly history: HistoryStore,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly now: () => Date,
    private readonly onRecord?: () => void,
    private readonly guard: DeliveryGuard = { policy: parseDeliveryHosts() },
  ) {}

  /**
   * Deliver unless the policy blocks the URL's host. A blocked delivery makes no lookup and no
   * connection; it is recorded like a transport failure: 500, `{ body: { code: 'EBLOCKED', connect: false } }`.
   */
  private async attempt(job: Job, id: number, signal: AbortSignal): Promise<DeliveryOutcome> {
    const { webhook } = job;
    let hostname: string | undefined;
    try {
      hostname = new URL(webhook.url).hostname;
    } catch {
      hostname = undefined; // deliver() records EINVALIDURL without any network use
    }
    const verdict = hostname === undefined ? undefined : checkHost(this.guard.policy, hostname);
    if (verdict && !verdict.allowed) {
      const first = !this.reportedBlocked.has(verdict.host);
      this.reportedBlocked.add(verdict.host);
      this.logger[first ? 'info' : 'debug'](
        { webhookId: webhook.id, historyId: id, host: verdict.host },
        `webhook delivery to ${verdict.host} blocked: the sandbox delivers only to allowed hosts (--deliver-to)`,
      );
      return failureOutcome(BLOCKED_CODE, false);
    }
    const lookup = verdict ? lookupFor(verdict, this.guard.lookup) : undefined;
    return deliver({
      url: webhook.url,
      rawBody: rawBodyOf(job.request),
      secret: webhook.secret,
      timeoutMs: this.timeoutMs,
      headers: {
        'x-webhook-event': job.notificationType,
        'x-webhook-activity-id': String(job.webhooksActivityId),
        'x-webhook-history-id': String(id),
      },
      signal,
      agents: this.agents,
      ...(lookup ? { lookup } : {}),
      ...(this.guard.timers ? { timers: this.guard.timers } : {}),
    });
  }

  /** Queue a delivery; resolves with its record (undefined if aborted by close/reset). */
  enqueue(job: Job): Promise<HistoryRecord | undefined> {
    const signal = this.abort.signal;
    return this.track(this.limiter.run(() => this.run(job, signal)));
  }

  /** Deliver now, outside the queue (retry answers with the record). */
  runNow(job: Job): Promise<HistoryRecord | undefined> {
    return this.track(this.run(job, this.abort.signal));
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const done = (): void => void this.pending.delete(p);
    p.then(done, done);
    return p;
  }

  private async run(job: Job, signal: AbortSignal): Promise<HistoryRecord | undefined> {
    if (signal.aborted) return undefined;
    const id = this.history.nextId++;
    const createdAt = this.now().toISOString();
    const { webhook } = job;
    const outcome = await this.attempt(job, id, signal);
    if (outcome.aborted || signal.aborted) return undefined;
    const record: HistoryRecord = {
      id,
      request: job.request,
      response: outcome.response,
      statusCode: outcome.statusCode,
      notificationType: job.notificationType,
      webhooksActivityId: job.webhooksActivityId,
      createdAt,
      updatedAt: this.now().toISOString(),
      webhooksId: webhook.id,
      url: webhook.url,
      name: webhook.name,
      actionType: webhook.actionType,
      createdBy: webhook.createdBy,
      global: webhook.global,
    };
    this.history.add(record);
    this.onRecord?.();
    this.logger.debug(
      { webhookId: webhook.id, historyId: id, event: job.notificationType, statusCode: outcome.statusCode },
      'webhook delivery recorded',
    );
    return record;
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * Abort everything in flight and queued (nothing of it is recorded); deliveries started later run
   * normally. Queued jobs still run, see their aborted signal and return at once.
   */
  abortNow(): void {
    this.abort.abort();
    this.abort = Dispatcher.controller();
  }

  /** Abort everything and close pooled connections (shutdown). */
  async abortAll(): Promise<void> {
    this.abortNow();
    await this.idle();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
