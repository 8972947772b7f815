/**
 * Integration state and the status machine (interface part 3): creating/editing become enabled (or
 * createError/editError) and deleting removes the integration (or deleteError) after `transitionMs`.
 * Keeps a natural-key index for uniqueness and a cache of each integration's masked JSON for fast lists.
 */
import { displayHost, naturalKey, isIntegrationType } from '../../kinds/registry.js';
import { backgroundClock, type Clock, type TimerHandle } from '../../util/clock.js';
import type { Behaviours } from '../behaviours.js';
import { isPlainObject } from '../../util/object.js';
import type { StoredIntegration } from './view.js';
import { fullView, mutationView } from './view.js';

export type TransitionEvent = 'failed' | 'resolved';

export interface StoreOptions {
  transitionMs: number;
  now: () => number;
  /** The timers that end transitions (default: the system's, unref'd). */
  clock?: Clock;
  /** True while fault injection holds transitions out of this status. */
  stuck: (status: string) => boolean;
  /** Called when a transition ends in an error status (failed) or an errored integration is enabled again. */
  onTransition: (event: TransitionEvent, integration: StoredIntegration, previousStatus: string) => void;
  onChange: () => void;
  /** Called when an integration is removed (its delete completed): what belongs to it goes too. */
  onRemove?: (item: StoredIntegration) => void;
  /** The server behaviours in force (views, transitions). */
  behaviours?: Behaviours;
}

const NEXT: Record<string, { ok: string | null; error: string }> = {
  creating: { ok: 'enabled', error: 'createError' },
  editing: { ok: 'enabled', error: 'editError' },
  deleting: { ok: null, error: 'deleteError' },
};

export interface StoreSnapshot {
  nextId: number;
  integrations: StoredIntegration[];
  cleanups: string[];
}

export class IntegrationStore {
  private readonly items = new Map<number, StoredIntegration>();
  /** Every holder of each natural key: an update may give one the key another holds (uniqueness is checked on create only). */
  private readonly byKey = new Map<string, Set<number>>();
  private readonly byLocation = new Map<string, number>();
  private readonly json = new Map<number, string>();
  private list: Buffer | undefined;
  private readonly timers = new Map<number, TimerHandle>();
  private get clock(): Clock {
    return this.opts.clock ?? backgroundClock;
  }
  /** Configurations for which scripts/cleanup was generated (post-cleanup must follow one). */
  readonly cleanups = new Set<string>();
  private nextId = 1;

  constructor(private readonly opts: StoreOptions) {}

  get size(): number {
    return this.items.size;
  }

  get(id: number): StoredIntegration | undefined {
    return this.items.get(id);
  }

  byNaturalKey(key: string): StoredIntegration | undefined {
    const ids = this.byKey.get(key);
    const id = ids === undefined ? undefined : Math.min(...ids);
    return id === undefined ? undefined : this.items.get(id);
  }

  byCloudLocation(path: string): StoredIntegration | undefined {
    const id = this.byLocation.get(path);
    return id === undefined ? undefined : this.items.get(id);
  }

  /** Behaviour list-lag: ids created or updated by a caller since the previous list (left out of the next one). */
  private readonly lagging = new Set<number>();

  /** A caller created or updated the integration (behaviour list-lag: the next list leaves it out). */
  written(id: number): void {
    if (this.opts.behaviours?.has('list-lag')) this.lagging.add(id);
  }

  /** The GET /integrations body, built from cached per-item JSON (and cached whole until the next change). */
  listJson(): Buffer {
    const b = this.opts.behaviours;
    if (this.lagging.size > 0) {
      // list-lag: a replica that has not seen the latest writes yet; it has by the next list
      const seen = [...this.items.values()].filter((i) => !this.lagging.has(i.id));
      this.lagging.clear();
      return Buffer.from(JSON.stringify((b ? b.order(seen) : seen).map((i) => fullView(i, b))), 'utf8');
    }
    if (b?.has('shuffle')) return Buffer.from(JSON.stringify(b.order([...this.items.values()]).map((i) => fullView(i, b))), 'utf8');
    if (!this.list) {
      const parts: string[] = [];
      for (const item of this.items.values()) parts.push(this.itemJson(item));
      this.list = Buffer.from(`[${parts.join(',')}]`, 'utf8');
    }
    return this.list;
  }

  /** Drop the cached views (the behaviours changed). */
  invalidateViews(): void {
    this.json.clear();
    this.list = undefined;
  }

  /** Body of a successful create, update or delete under the behaviours. */
  mutationBody(item: StoredIntegration): Record<string, unknown> {
    return mutationView(item, this.opts.behaviours);
  }

  itemJson(item: StoredIntegration): string {
    const b = this.opts.behaviours;
    if (b?.has('shuffle')) return JSON.stringify(fullView(item, b));
    let cached = this.json.get(item.id);
    if (cached === undefined) {
      cached = JSON.stringify(fullView(item, b));
      this.json.set(item.id, cached);
    }
    return cached;
  }

  /** Remember that scripts/cleanup was generated for a configuration (post-cleanup must follow one). */
  addCleanup(key: string): void {
    this.cleanups.add(key);
    this.opts.onChange();
  }

  allocateId(): number {
    if (this.opts.behaviours?.has('reuse-ids')) {
      // reuse-ids: the smallest id no integration has (a deleted one's is given again)
      let id = 1;
      while (this.items.has(id)) id++;
      this.nextId = Math.max(this.nextId, id + 1);
      return id;
    }
    return this.nextId++;
  }

  host(item: Pick<StoredIntegration, 'type' | 'config'>): string {
    return displayHost(item.type, item.config);
  }

  insert(item: StoredIntegration): void {
    this.items.set(item.id, item);
    this.list = undefined;
    this.nextId = Math.max(this.nextId, item.id + 1);
    this.index(item);
    this.opts.onChange();
  }

  /** Replace fields of an integration (re-indexes and drops the cached view). */
  update(item: StoredIntegration, patch: Partial<StoredIntegration>): void {
    this.unindex(item);
    Object.assign(item, patch, { updatedAt: new Date(this.opts.now()).toISOString() });
    this.index(item);
    this.json.delete(item.id);
    this.list = undefined;
    this.opts.onChange();
  }

  /** Start a transition: status creating/editing/deleting until `transitionMs` has passed. */
  begin(item: StoredIntegration, status: 'creating' | 'editing' | 'deleting', fail: boolean, actor?: { userId: number; userName: string }): void {
    const patch: Partial<StoredIntegration> = {
      status,
      pendingUntil: this.opts.now() + this.opts.transitionMs,
      pendingFail: fail,
      pendingFromError: item.status.endsWith('Error'),
    };
    if (actor) patch.pendingActor = { userId: actor.userId, userName: actor.userName };
    this.update(item, patch);
    const b = this.opts.behaviours;
    if ((status === 'creating' && b?.has('skip-creating')) || (status === 'editing' && b?.has('skip-editing'))) {
      this.complete(item.id, true); // behaviour: the service answers with the final status at once
      return;
    }
    this.schedule(item);
  }

  private schedule(item: StoredIntegration): void {
    const old = this.timers.get(item.id);
    if (old) this.clock.clearTimeout(old);
    this.timers.delete(item.id);
    if (item.pendingUntil === undefined || this.opts.stuck(item.status)) return;
    const delay = Math.max(0, item.pendingUntil - this.opts.now());
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(item.id);
      this.complete(item.id);
    }, delay);
    this.timers.set(item.id, timer);
  }

  /** Finish a pending transition now (unless transitions are held by fault injection). */
  complete(id: number, force = false): void {
    const item = this.items.get(id);
    if (!item || item.pendingUntil === undefined) return;
    if (this.opts.stuck(item.status) && !force) return;
    const next = NEXT[item.status];
    if (!next) return;
    const previous = item.status;
    const fail = item.pendingFail === true;
    const wasError = item.pendingFromError === true;
    const timer = this.timers.get(id);
    if (timer) this.clock.clearTimeout(timer);
    this.timers.delete(id);
    if (!fail && next.ok === null) {
      this.remove(item);
      return;
    }
    this.update(item, { status: fail ? next.error : next.ok! });
    delete item.pendingUntil;
    delete item.pendingFail;
    delete item.pendingFromError;
    if (fail) this.opts.onTransition('failed', item, previous);
    else if (wasError) this.opts.onTransition('resolved', item, previous);
    delete item.pendingActor;
  }

  /** Complete every pending transition now (control API). Returns how many were completed. */
  finishAll(): number {
    const pending = [...this.items.values()].filter((i) => i.pendingUntil !== undefined);
    for (const i of pending) this.complete(i.id, true);
    return pending.length;
  }

  /** Re-arm timers after transitions were released from fault injection (or after a restore). */
  rescheduleAll(): void {
    for (const item of this.items.values()) if (item.pendingUntil !== undefined) this.schedule(item);
  }

  remove(item: StoredIntegration): void {
    this.unindex(item);
    this.items.delete(item.id);
    this.json.delete(item.id);
    this.list = undefined;
    const timer = this.timers.get(item.id);
    if (timer) this.clock.clearTimeout(timer);
    this.timers.delete(item.id);
    this.opts.onRemove?.(item);
    this.opts.onChange();
  }

  clear(): void {
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
    this.items.clear();
    this.byKey.clear();
    this.byLocation.clear();
    this.json.clear();
    this.list = undefined;
    this.lagging.clear();
    this.cleanups.clear();
    this.nextId = 1;
    this.opts.onChange();
  }

  close(): void {
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
  }

  snapshot(): StoreSnapshot {
    return { nextId: this.nextId, integrations: [...this.items.values()], cleanups: [...this.cleanups] };
  }

  /** Replace the state with a snapshot(); throws, naming the part, on a malformed one (nothing of it is skipped). */
  restore(data: unknown): void {
    this.clear();
    if (data === undefined || data === null) return;
    if (!isPlainObject(data) || !Array.isArray(data.integrations)) throw new Error('integrations: expected { nextId, integrations: [...], cleanups: [...] }');
    if (data.cleanups !== undefined && (!Array.isArray(data.cleanups) || !data.cleanups.every((c) => typeof c === 'string'))) {
      throw new Error('integrations: cleanups must be an array of strings');
    }
    const snap = data as Partial<StoreSnapshot>;
    data.integrations.forEach((raw: unknown, i: number) => {
      if (!isPlainObject(raw) || !Number.isSafeInteger(raw.id) || !isIntegrationType(raw.type) || !isPlainObject(raw.config) || typeof raw.status !== 'string') {
        throw new Error(`integrations[${i}] is malformed (needs an integer id, a known type, a config object and a status)`);
      }
    });
    for (const raw of snap.integrations!) {
      this.items.set(raw.id, raw);
      this.list = undefined;
      this.index(raw);
    }
    // A loop, not Math.max(...ids): a spread of every id overflows the stack past ~125,000 arguments.
    let next = typeof snap.nextId === 'number' ? snap.nextId : 1;
    for (const id of this.items.keys()) next = Math.max(next, id + 1);
    this.nextId = next;
    for (const c of snap.cleanups ?? []) this.cleanups.add(c);
    this.rescheduleAll();
  }

  private index(item: StoredIntegration): void {
    const key = naturalKey(item.type, item.config);
    const ids = this.byKey.get(key);
    if (ids) ids.add(item.id);
    else this.byKey.set(key, new Set([item.id]));
    if (item.type === 'object_store' && typeof item.config.cloudLocationPath === 'string') {
      this.byLocation.set(item.config.cloudLocationPath, item.id);
    }
  }

  private unindex(item: StoredIntegration): void {
    const key = naturalKey(item.type, item.config);
    const ids = this.byKey.get(key);
    ids?.delete(item.id);
    if (ids?.size === 0) this.byKey.delete(key);
    const loc = item.config.cloudLocationPath;
    if (typeof loc === 'string' && this.byLocation.get(loc) === item.id) this.byLocation.delete(loc);
  }
}
