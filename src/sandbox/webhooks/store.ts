/**
 * In-memory webhook store: ids, visibility (admins all, users their own), wire views.
 * Webhooks never change after creation, so wire views are computed once and cached.
 */
import { urlWithLowerHost } from '../../service/kinds.js';
import type { Behaviours } from '../behaviours.js';
import type { Caller } from '../http.js';
import type { StoredWebhook } from './types.js';
import type { ValidWebhookItem } from './validate.js';

/** GET /webhooks and GET /webhooks/{id} (interface 4.3: id, name, url, notificationType, global, createdBy). */
export interface WebhookView {
  id: number;
  name: string;
  url: string;
  notificationType: string[];
  global: boolean;
  createdBy: number;
}

/** Items of POST createdWebhooks and the DELETE body (interface 4.3). */
export interface WebhookSummary {
  id: number;
  url: string;
  name: string;
  global: boolean;
  actionType: string | null;
  createdBy: number;
  createdAt: string;
  updatedAt: string;
}

export function viewOf(w: StoredWebhook): WebhookView {
  return { id: w.id, name: w.name, url: w.url, notificationType: [...w.notificationType], global: w.global, createdBy: w.createdBy };
}

export function summaryOf(w: StoredWebhook): WebhookSummary {
  return {
    id: w.id,
    url: w.url,
    name: w.name,
    global: w.global,
    actionType: w.actionType,
    createdBy: w.createdBy,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

export function canSee(caller: Pick<Caller, 'role' | 'userId'>, w: { createdBy: number }): boolean {
  return caller.role === 'admin' || w.createdBy === caller.userId;
}

export class WebhookStore {
  private readonly byId = new Map<number, StoredWebhook>();
  private readonly views = new Map<number, WebhookView>();
  private readonly byOwner = new Map<number, Set<number>>();
  /** Ids by each notification type they list, and each id's place in the order of `all()`: an event finds its
   * subscribers without a pass over every webhook (10,000 data-source events x 10,000 webhooks in a bench). */
  private readonly byNotification = new Map<string, Set<number>>();
  private readonly place = new Map<number, number>();
  private places = 0;
  nextId = 1;
  /** Serialised administrator list, rebuilt after a change (GET /webhooks fast path). */
  private allJson: string | undefined;
  /** Behaviour list-lag: ids created since the previous list (left out of the next one). */
  private readonly lagging = new Set<number>();

  /** `behaviours`: reuse-ids, lower-hosts and list-lag act here. */
  constructor(private readonly behaviours?: Behaviours) {}

  private allocateId(): number {
    if (!this.behaviours?.has('reuse-ids')) return this.nextId++;
    // reuse-ids: the smallest id no webhook has (a deleted one's is given again)
    let id = 1;
    while (this.byId.has(id)) id++;
    this.nextId = Math.max(this.nextId, id + 1);
    return id;
  }

  create(item: ValidWebhookItem, createdBy: number, at: string): StoredWebhook {
    const w: StoredWebhook = {
      id: this.allocateId(),
      url: this.behaviours?.has('lower-hosts') ? urlWithLowerHost(item.url) : item.url,
      name: item.name,
      global: item.global,
      notificationType: [...item.notificationType],
      actionType: item.actionType,
      createdBy,
      createdAt: at,
      updatedAt: at,
    };
    if (item.secret !== undefined) w.secret = item.secret;
    this.insert(w);
    if (this.behaviours?.has('list-lag')) this.lagging.add(w.id);
    return w;
  }

  private insert(w: StoredWebhook): void {
    this.allJson = undefined;
    this.byId.set(w.id, w);
    this.views.set(w.id, viewOf(w));
    let owned = this.byOwner.get(w.createdBy);
    if (!owned) this.byOwner.set(w.createdBy, (owned = new Set()));
    owned.add(w.id);
    this.place.set(w.id, this.places++);
    for (const type of w.notificationType) {
      let ids = this.byNotification.get(type);
      if (!ids) this.byNotification.set(type, (ids = new Set()));
      ids.add(w.id);
    }
  }

  get(id: number): StoredWebhook | undefined {
    return this.byId.get(id);
  }

  delete(id: number): StoredWebhook | undefined {
    const w = this.byId.get(id);
    if (!w) return undefined;
    this.allJson = undefined;
    this.byId.delete(id);
    this.views.delete(id);
    this.byOwner.get(w.createdBy)?.delete(id);
    this.place.delete(id);
    for (const type of w.notificationType) this.byNotification.get(type)?.delete(id);
    return w;
  }

  /** The webhooks that list `type` or `all` (every notification), in the order of `all()`. */
  listing(type: string, all: string): StoredWebhook[] {
    const direct = this.byNotification.get(type);
    const every = type === all ? undefined : this.byNotification.get(all);
    let ids: number[];
    if (!every?.size) ids = [...(direct ?? [])];
    else if (!direct?.size) ids = [...every];
    else ids = [...new Set([...direct, ...every])].sort((a, b) => this.place.get(a)! - this.place.get(b)!);
    return ids.map((id) => this.byId.get(id)!);
  }

  /** Views visible to the caller, in id order (list-lag: without those created since the previous list). */
  list(caller: Pick<Caller, 'role' | 'userId'>): WebhookView[] {
    let out: WebhookView[];
    if (caller.role === 'admin') out = [...this.views.values()];
    else {
      out = [];
      for (const id of this.byOwner.get(caller.userId) ?? []) out.push(this.views.get(id)!);
    }
    if (this.lagging.size === 0) return out;
    const lagging = new Set(this.lagging);
    this.lagging.clear();
    return out.filter((v) => !lagging.has(v.id));
  }

  /** JSON of list(caller); the administrator's (whole) list is cached between changes. */
  listJson(caller: Pick<Caller, 'role' | 'userId'>): string {
    if (caller.role !== 'admin' || this.lagging.size > 0) return JSON.stringify(this.list(caller));
    return (this.allJson ??= JSON.stringify(this.list(caller)));
  }

  all(): IterableIterator<StoredWebhook> {
    return this.byId.values();
  }

  get size(): number {
    return this.byId.size;
  }

  clear(): void {
    this.allJson = undefined;
    this.lagging.clear();
    this.byId.clear();
    this.views.clear();
    this.byOwner.clear();
    this.byNotification.clear();
    this.place.clear();
    this.places = 0;
    this.nextId = 1;
  }

  /** Replace the content (restore); ids keep their order. */
  load(webhooks: StoredWebhook[], nextId: number): void {
    this.clear();
    for (const w of [...webhooks].sort((a, b) => a.id - b.id)) this.insert({ ...w, notificationType: [...w.notificationType] });
    this.nextId = webhooks.reduce((m, w) => Math.max(m, w.id + 1), Math.max(nextId, 1));
  }
}
