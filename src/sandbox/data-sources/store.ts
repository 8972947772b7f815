/**
 * Object-store data sources of the sandbox: numeric ids, soft delete then hard delete (the first DELETE
 * disables a data source, the second removes it), and removal with their integration.
 */
import type { Behaviours } from '../behaviours.js';
import { isPlainObject } from '../../util/object.js';

export interface StoredDataSource {
  id: number;
  integrationId: number;
  dataSourceName: string;
  prefix: string;
  createdAt: string;
  /** Set by the first DELETE (soft delete): still listed, with `deleted: true`; no longer counts as taken. */
  deletedAt?: string;
}

export interface DataSourceSnapshot {
  nextId: number;
  dataSources: StoredDataSource[];
}

export class DataSourceStore {
  private readonly items = new Map<number, StoredDataSource>();
  /** The same data sources by integration, each group in the items' order: a create or a cascade reads one group. */
  private readonly byIntegration = new Map<number, Map<number, StoredDataSource>>();
  private nextId = 1;

  constructor(
    private readonly opts: { behaviours: Behaviours; now: () => number; onChange: () => void },
  ) {}

  get size(): number {
    return this.items.size;
  }

  get(id: number): StoredDataSource | undefined {
    return this.items.get(id);
  }

  /** Every data source, soft-deleted ones included, in creation order (or shuffled under `shuffle`). */
  list(): StoredDataSource[] {
    return this.opts.behaviours.order([...this.items.values()]);
  }

  /** The active (not soft-deleted) data sources of an integration. */
  active(integrationId: number): StoredDataSource[] {
    const group = this.byIntegration.get(integrationId);
    return group ? [...group.values()].filter((d) => d.deletedAt === undefined) : [];
  }

  /** Store a data source (one with the same id is replaced) and index it under its integration. */
  private put(d: StoredDataSource): void {
    const old = this.items.get(d.id);
    if (old && old.integrationId !== d.integrationId) this.unindex(old);
    this.items.set(d.id, d);
    const group = this.byIntegration.get(d.integrationId);
    if (group) group.set(d.id, d);
    else this.byIntegration.set(d.integrationId, new Map([[d.id, d]]));
  }

  private unindex(d: StoredDataSource): void {
    const group = this.byIntegration.get(d.integrationId);
    group?.delete(d.id);
    if (group?.size === 0) this.byIntegration.delete(d.integrationId);
  }

  /** reuse-ids: the smallest id no data source has (a deleted one's is given again); else the next one. */
  private newId(): number {
    if (!this.opts.behaviours.has('reuse-ids')) return this.nextId++;
    let id = 1;
    while (this.items.has(id)) id++;
    return id;
  }

  /** Register several data sources at once (the caller has validated them all). */
  insert(integrationId: number, items: ReadonlyArray<{ dataSourceName: string; prefix: string }>): StoredDataSource[] {
    const createdAt = new Date(this.opts.now()).toISOString();
    const out = items.map((i) => {
      const d: StoredDataSource = { id: this.newId(), integrationId, dataSourceName: i.dataSourceName, prefix: i.prefix, createdAt };
      this.put(d);
      return d;
    });
    this.opts.onChange();
    return out;
  }

  /** First call: soft delete (disabled, still listed); second call (or behaviour hard-delete): removed. */
  delete(d: StoredDataSource): 'soft' | 'hard' {
    if (d.deletedAt === undefined && !this.opts.behaviours.has('hard-delete')) {
      d.deletedAt = new Date(this.opts.now()).toISOString();
      this.opts.onChange();
      return 'soft';
    }
    this.items.delete(d.id);
    this.unindex(d);
    this.opts.onChange();
    return 'hard';
  }

  /** The integration is gone: its data sources go with it. Returns how many. */
  removeIntegration(integrationId: number): number {
    const group = this.byIntegration.get(integrationId);
    if (!group) return 0;
    for (const id of group.keys()) this.items.delete(id);
    this.byIntegration.delete(integrationId);
    this.opts.onChange();
    return group.size;
  }

  clear(): void {
    this.items.clear();
    this.byIntegration.clear();
    this.nextId = 1;
    this.opts.onChange();
  }

  snapshot(): DataSourceSnapshot {
    return { nextId: this.nextId, dataSources: [...this.items.values()] };
  }

  restore(data: unknown): void {
    this.items.clear();
    this.byIntegration.clear();
    this.nextId = 1;
    if (data === undefined || data === null) return;
    if (!isPlainObject(data) || !Array.isArray(data.dataSources)) throw new Error('dataSources: expected { nextId, dataSources: [...] }');
    data.dataSources.forEach((d: unknown, i: number) => {
      if (!isPlainObject(d) || !Number.isSafeInteger(d.id) || !Number.isSafeInteger(d.integrationId) || typeof d.dataSourceName !== 'string' || typeof d.prefix !== 'string') {
        throw new Error(`dataSources[${i}] is malformed (needs integer id and integrationId, a dataSourceName and a prefix)`);
      }
    });
    const snap = data as Partial<DataSourceSnapshot>;
    for (const d of snap.dataSources!) this.put(d);
    // A loop, not Math.max(...ids): a spread of every id overflows the stack past ~125,000 arguments.
    let next = typeof snap.nextId === 'number' ? snap.nextId : 1;
    for (const id of this.items.keys()) next = Math.max(next, id + 1);
    this.nextId = next;
  }
}
