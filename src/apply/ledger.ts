/**
 * The ledger: the govops state as an apply changes it, and its saves. Intent is recorded before acting:
 * a create (or delete) is written as pending and saved before its request is sent, and a new live id
 * is saved as soon as the service returns it (before polling), so SIGKILL at any moment leaves a state
 * from which the next run finds everything (src/plan/pending.ts resolves the pending entries).
 *
 * Saves never overlap; calls made while one is running share the next one, which writes the state as it
 * is when it starts (so everything recorded before the call). Large applies don't write once per change.
 */
import { getResource, putResource, removeResource } from '../state/store.js';
import type { GovopsState, ManagedResource } from '../state/types.js';
import type { DesiredResource, ResourceChange } from '../plan/types.js';

type Named = Pick<ResourceChange, 'resourceKind' | 'name' | 'renamedFrom' | 'adopt'>;

export class Ledger {
  private saving: Promise<void> = Promise.resolve();
  private next?: Promise<void>;

  constructor(
    private state: GovopsState,
    private readonly persist: (state: GovopsState) => Promise<void>,
    private readonly options: { revision?: string; now: () => Date },
  ) {}

  get current(): GovopsState {
    return this.state;
  }

  /** A create is about to be sent: pending entry (no id yet) with the identity to find it by. */
  intendCreate(c: Named, d: DesiredResource, key: string): void {
    const entry = this.entry(c, d, '', 'created');
    entry.pending = 'create';
    entry.key = key;
    this.state = putResource(this.state, entry);
  }

  /** The resource is live with this id (created, adopted, renamed or updated): a settled entry. */
  recordLive(c: Named, d: DesiredResource, id: string): void {
    const prev = getResource(this.state, c.resourceKind, c.renamedFrom ?? c.name);
    const origin = prev && prev.id === id && !prev.pending ? prev.origin : c.adopt ? 'adopted' : 'created';
    if (c.renamedFrom) this.state = removeResource(this.state, c.resourceKind, c.renamedFrom);
    this.state = putResource(this.state, this.entry(c, d, id, origin));
  }

  /** A delete is about to be sent: the entry (under its recorded name) is marked pending. */
  intendDelete(c: Named): void {
    const prev = getResource(this.state, c.resourceKind, c.renamedFrom ?? c.name);
    if (prev) this.state = putResource(this.state, { ...prev, pending: 'delete' });
  }

  /** The resource is gone (deleted, or it never existed): its entry goes. */
  forget(c: Named): void {
    this.state = removeResource(this.state, c.resourceKind, c.renamedFrom ?? c.name);
  }

  /** A pending create that certainly did not happen (the service refused it): its entry goes. */
  dropIntent(c: Named): void {
    const prev = getResource(this.state, c.resourceKind, c.name);
    if (prev?.pending === 'create') this.state = removeResource(this.state, c.resourceKind, c.name);
  }

  save(): Promise<void> {
    if (this.next) return this.next;
    const p = this.saving
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.persist(this.state);
      });
    this.next = p;
    this.saving = p;
    return p;
  }

  /** Resolves when the last save finished (never rejects). */
  settled(): Promise<void> {
    return this.saving.catch(() => undefined);
  }

  private entry(c: Named, d: DesiredResource, id: string, origin: ManagedResource['origin']): ManagedResource {
    const entry: ManagedResource = {
      kind: c.resourceKind,
      name: c.name,
      id,
      origin,
      specHash: d.specHash,
      secretFingerprints: { ...d.fingerprints },
      updatedAt: this.options.now().toISOString(),
    };
    if (d.kind === 'Integration') {
      entry.type = d.body.type;
      entry.autoBootstrap = d.body.autoBootstrap ?? false;
    }
    if (this.options.revision !== undefined) entry.revision = this.options.revision;
    return entry;
  }
}
