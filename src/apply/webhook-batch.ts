/**
 * New webhooks go to the service in batches (the interface creates "one or more" per request), each at
 * most `maxItems` webhooks and `maxBytes` of request body (the interface states no limit; a real service
 * has one). Each webhook's task joins; a batch is sent as soon as it is full, and the rest once every
 * expected member has joined or left (a replace whose delete failed leaves). A batch the service refuses
 * as too large (413) is split in half and the limit lowered for the batches after it.
 *
 * Intent first: every member of a batch is recorded as a pending create and saved before its POST. The
 * POST is sent once by the batch: the client retries it (network errors, 5xx, 429) and, after an answer that
 * may have been lost, finds the members already created by name before sending only the others again.
 */
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveWebhook } from '../api/types.js';
import { ApiError } from '../errors.js';
import type { DesiredWebhook, ResourceChange } from '../plan/types.js';
import type { Ledger } from './ledger.js';
import type { PollSettings } from './poll.js';
import { webhookIdentity } from '../service/kinds.js';
import { copyPlain } from '../util/copy.js';
import { appendTo } from '../util/multimap.js';
import { createWebhooks } from './webhooks.js';

export interface BatchLimits {
  /** Webhooks per POST at most. */
  maxItems: number;
  /** Bytes of request body per POST at most (a single larger webhook still goes alone). */
  maxBytes: number;
}

export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxItems: 500, maxBytes: 256 * 1024 };

/** `{"webhooks":[` + `]}` around the items. */
const ENVELOPE_BYTES = 15;

interface Member {
  change: Pick<ResourceChange, 'resourceKind' | 'name' | 'adopt' | 'renamedFrom'>;
  desired: DesiredWebhook;
  /** Its share of the request body (its JSON and a comma). */
  bytes: number;
  resolve(w: LiveWebhook): void;
  reject(err: unknown): void;
}

export interface BatchDeps {
  api: ServiceApi;
  ledger: Ledger;
  poll: PollSettings;
  logger: Logger;
  /** Run a service call in the apply's concurrency limit, ahead of queued work. */
  enqueue<T>(fn: () => Promise<T>): Promise<T>;
  /** Live webhook ids before the apply (the plan's list): never taken for one this apply created. */
  preexistingWebhooks?: ReadonlySet<string>;
  /**
   * The webhooks live before the apply (the plan's list): the ids that already have a member's identity (name and url)
   * are recorded with its intent, so the next run never takes one of them (another team's) for what the create made.
   */
  liveWebhooks?: readonly LiveWebhook[];
}

const tooLarge = (err: unknown): boolean => err instanceof ApiError && err.statusCode === 413;

export class WebhookBatch {
  private readonly waiting: Set<string>;
  /** Joined, not yet sent. */
  private ready: Member[] = [];
  private readyBytes = ENVELOPE_BYTES;
  private readonly limits: BatchLimits;
  /** Batches sent so far (the requests, including splits and re-sends). */
  posts = 0;
  /** Ids of the webhooks live before the apply, by identity (made at the first intent). */
  private byIdentity?: Map<string, string[]>;

  constructor(
    names: Iterable<string>,
    private readonly deps: BatchDeps,
    limits: Partial<BatchLimits> = {},
  ) {
    this.waiting = new Set(names);
    this.limits = {
      maxItems: Math.max(1, Math.floor(limits.maxItems ?? DEFAULT_BATCH_LIMITS.maxItems)),
      maxBytes: Math.max(1, Math.floor(limits.maxBytes ?? DEFAULT_BATCH_LIMITS.maxBytes)),
    };
  }

  /** Add a webhook to a batch; resolves with the live webhook once its batch created it. */
  join(change: Member['change'], desired: DesiredWebhook): Promise<LiveWebhook> {
    return new Promise<LiveWebhook>((resolve, reject) => {
      const bytes = Buffer.byteLength(JSON.stringify(desired.body), 'utf8') + 1;
      if (this.ready.length > 0 && this.readyBytes + bytes > this.limits.maxBytes) this.flush();
      this.ready.push({ change: { ...change, adopt: false, renamedFrom: undefined }, desired, bytes, resolve, reject });
      this.readyBytes += bytes;
      this.waiting.delete(change.name);
      if (this.ready.length >= this.limits.maxItems || this.readyBytes >= this.limits.maxBytes || this.waiting.size === 0) this.flush();
    });
  }

  /** A member that will not join (its task failed or was skipped first). */
  leave(name: string): void {
    if (this.waiting.delete(name) && this.waiting.size === 0) this.flush();
  }

  private flush(): void {
    if (this.ready.length === 0) return;
    const members = this.ready;
    this.ready = [];
    this.readyBytes = ENVELOPE_BYTES;
    this.send(members).catch((err: unknown) => {
      for (const m of members) m.reject(err);
    });
  }

  /**
   * One POST for the members (the client owns its retries and resolves a lost answer by name). A member the
   * service certainly did not create drops its intent; one whose outcome is unknown keeps it (the next run
   * finds it by name).
   */
  private async send(members: Member[]): Promise<void> {
    const { api, ledger } = this.deps;
    ledger.assertWritable();
    for (const m of members) ledger.intendCreate(m.change, m.desired, m.desired.body.name, this.preexistingOf(m.desired));
    await ledger.save();
    this.posts++;
    const results = await this.deps.enqueue(() => {
      ledger.assertWritable();
      // Ids live before the apply, and those the state records, are never this POST's own. Worked out only if the
      // answer is lost (a pass over the state per POST otherwise: 10,000 POSTs once 413s split the batches to one).
      const preexisting = (): ReadonlySet<string> => new Set([...(this.deps.preexistingWebhooks ?? []), ...ledger.ids('Webhook')]);
      return createWebhooks(api, members.map((m) => copyPlain(m.desired.body)), preexisting);
    });
    if (members.length > 1 && results.every((r) => !r.ok && tooLarge(r.error))) {
      await this.split(members);
      return;
    }
    members.forEach((m, i) => {
      const r = results[i]!;
      if (r.ok) ledger.recordLive(m.change, m.desired, r.webhook.id);
      else if (r.definite) ledger.dropIntent(m.change);
    });
    try {
      await ledger.save();
    } finally {
      members.forEach((m, i) => {
        const r = results[i]!;
        if (r.ok) m.resolve(r.webhook);
        else m.reject(r.error);
      });
    }
  }

  /** Ids of the webhooks live before the apply that have the identity (name and url) `d` will have. */
  private preexistingOf(d: DesiredWebhook): string[] {
    if (!this.byIdentity) {
      this.byIdentity = new Map();
      for (const w of this.deps.liveWebhooks ?? []) appendTo(this.byIdentity, webhookIdentity(w.name, w.url), w.id);
    }
    return this.byIdentity.size === 0 ? [] : (this.byIdentity.get(webhookIdentity(d.body.name, d.body.url)) ?? []);
  }

  /** The service refused the batch as too large (nothing was created): two halves, and smaller batches from now on. */
  private async split(batch: Member[]): Promise<void> {
    const half = Math.ceil(batch.length / 2);
    const bytes = batch.reduce((n, m) => n + m.bytes, ENVELOPE_BYTES);
    this.limits.maxItems = Math.max(1, Math.min(this.limits.maxItems, half));
    this.limits.maxBytes = Math.max(1, Math.min(this.limits.maxBytes, Math.floor(bytes / 2)));
    this.deps.logger.info({ items: batch.length, bytes, limits: { ...this.limits } }, 'webhook batch too large for the service (413): splitting it');
    const parts = [batch.slice(0, half), batch.slice(half)];
    await Promise.all(
      parts.map((part) =>
        this.send(part).catch((err: unknown) => {
          for (const m of part) m.reject(err);
        }),
      ),
    );
  }
}
