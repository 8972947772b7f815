/**
 * New webhooks go to the service in one POST (the interface creates "one or more" per request). Each
 * webhook's task joins the batch; the batch is sent once every expected member has joined or left
 * (a replace whose delete failed leaves). Intent first: every member is recorded as a pending create
 * and saved before the POST. After a failure that may have created some of them, the batch is
 * reconciled name by name: the names now live (and owned by no state entry) are this batch's, only the
 * others are sent again.
 */
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveWebhook } from '../api/types.js';
import { classify } from '../errors.js';
import type { DesiredWebhook, ResourceChange } from '../plan/types.js';
import type { Ledger } from './ledger.js';
import { nextInterval, sleep, type PollSettings } from './poll.js';
import { createWebhooks } from './webhooks.js';

/** Sends of one batch (the first and the retries after transient failures). */
export const MAX_BATCH_SENDS = 3;

interface Member {
  change: Pick<ResourceChange, 'resourceKind' | 'name' | 'adopt' | 'renamedFrom'>;
  desired: DesiredWebhook;
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
}

export class WebhookBatch {
  private readonly waiting: Set<string>;
  private readonly members: Member[] = [];
  private started = false;

  constructor(
    names: Iterable<string>,
    private readonly deps: BatchDeps,
  ) {
    this.waiting = new Set(names);
  }

  /** Add a webhook to the batch; resolves with the live webhook once the batch created it. */
  join(change: Member['change'], desired: DesiredWebhook): Promise<LiveWebhook> {
    return new Promise<LiveWebhook>((resolve, reject) => {
      this.members.push({ change: { ...change, adopt: false, renamedFrom: undefined }, desired, resolve, reject });
      this.waiting.delete(change.name);
      this.maybeStart();
    });
  }

  /** A member that will not join (its task failed or was skipped first). */
  leave(name: string): void {
    if (this.waiting.delete(name)) this.maybeStart();
  }

  private maybeStart(): void {
    if (this.started || this.waiting.size > 0 || this.members.length === 0) return;
    this.started = true;
    const members = [...this.members];
    this.send(members).catch((err: unknown) => {
      for (const m of members) m.reject(err);
    });
  }

  private async send(members: Member[]): Promise<void> {
    const { api, ledger, poll } = this.deps;
    for (const m of members) ledger.intendCreate(m.change, m.desired, m.desired.body.name);
    await ledger.save();
    let todo = members;
    let backoff = poll.initialMs;
    for (let send = 1; todo.length > 0; send++) {
      if (send > 1) {
        await sleep(backoff, poll.signal);
        backoff = nextInterval(backoff, poll.maxMs);
        todo = await this.claimLive(todo);
        if (todo.length === 0) break;
      }
      const batch = todo;
      const results = await this.deps.enqueue(() => createWebhooks(api, batch.map((m) => structuredClone(m.desired.body))));
      const again: Member[] = [];
      batch.forEach((m, i) => {
        const r = results[i]!;
        if (r.ok) {
          ledger.recordLive(m.change, m.desired, r.webhook.id);
          m.resolve(r.webhook);
        } else if (classify(r.error).failureClass === 'transient' && send < MAX_BATCH_SENDS) {
          again.push(m);
        } else {
          if (r.definite) ledger.dropIntent(m.change);
          m.reject(r.error);
        }
      });
      await ledger.save();
      if (again.length) this.deps.logger.info({ names: again.map((m) => m.change.name), send }, 'webhook batch: sending again the ones not created');
      todo = again;
    }
  }

  /** After a failure that may have created some: the members now live by name are settled. Returns the rest. */
  private async claimLive(todo: Member[]): Promise<Member[]> {
    const { api, ledger } = this.deps;
    let live: LiveWebhook[];
    try {
      live = await api.listWebhooks();
    } catch (err) {
      for (const m of todo) m.reject(err);
      return [];
    }
    const owned = new Set(ledger.current.resources.filter((r) => r.kind === 'Webhook' && r.id !== '').map((r) => r.id));
    const rest: Member[] = [];
    for (const m of todo) {
      const hit = live.find((w) => w.name === m.desired.body.name && !owned.has(w.id));
      if (!hit) {
        rest.push(m);
        continue;
      }
      owned.add(hit.id);
      ledger.recordLive(m.change, m.desired, hit.id);
      m.resolve(hit);
    }
    if (rest.length < todo.length) await ledger.save();
    return rest;
  }
}
