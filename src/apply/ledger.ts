/**
 * The ledger: the govops state as an apply changes it, and its saves. Intent is recorded before acting:
 * a create (or delete) is written as pending and saved before its request is sent, and a new live id
 * is saved as soon as the service returns it (before polling), so SIGKILL at any moment leaves a state
 * from which the next run finds everything (src/plan/pending.ts resolves the pending entries).
 *
 * Resources are held in a map (O(1) per change). Saves never overlap; calls made while one is running
 * share the next one, which writes what was recorded before it started. With a journal (`journal`), a
 * save appends only the entries changed since the previous one, and the whole state is written at the
 * first save, every `compactAfter` entries (half the resources the apply may leave) and at `finish()`: the cost of recording one resource does
 * not grow with the size of the state. Without one, every save writes the whole state.
 */
import { ErrorCode, GovopsError, type ErrorCodeValue } from '../errors.js';
import type { GovopsState, JournalEntry, ManagedResource } from '../state/types.js';
import type { DesiredResource, ResourceChange } from '../plan/types.js';
import { desiredIdentity } from '../plan/stale.js';

/**
 * Failures of a save that pass by themselves, whose code the StateWriteError keeps: a PostgreSQL state unreachable or
 * not answering within the apply's --timeout (GOVOPS_STATE_UNAVAILABLE), its lock lost or the lease over
 * (GOVOPS_STATE_FENCED), the --timeout over before the save (GOVOPS_SETTLE_TIMEOUT). All transient.
 */
const PASSING_SAVE_FAILURES: ReadonlySet<ErrorCodeValue> = new Set([ErrorCode.stateUnavailable, ErrorCode.stateFenced, ErrorCode.settleTimeout]);

/**
 * The state could not be written (disk full, folder gone...: GOVOPS_STATE_WRITE_FAILED; or a failure that passes, whose
 * code it keeps: PASSING_SAVE_FAILURES). The end of the run either way: once one save failed, no further write is sent
 * to the service (an intent that is not on disk must not be acted on); what was already sent stays recorded as the
 * pending intents on disk, resolved by the next run.
 */
export class StateWriteError extends GovopsError {
  override readonly name = 'StateWriteError';
  readonly code: ErrorCodeValue;
  constructor(override readonly cause: unknown) {
    const passing = cause instanceof GovopsError && PASSING_SAVE_FAILURES.has(cause.code);
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`the state could not be written (${why}): the apply stops, nothing more is sent; ${passing ? 'run it again' : 'free the space (or fix the --state folder) and run again'}`);
    this.code = passing ? cause.code : ErrorCode.stateWriteFailed;
  }
}

type Named = Pick<ResourceChange, 'resourceKind' | 'name' | 'renamedFrom' | 'adopt'>;
type Kind = ManagedResource['kind'];

export interface LedgerOptions {
  revision?: string;
  now: () => Date;
  /** Append changed entries to the state's journal (fsync'd); absent = every save writes the whole state. */
  journal?: (entries: JournalEntry[]) => Promise<void>;
  /** Journal entries after which the whole state is written again (default: max(1,000, resources / 2)). */
  compactAfter?: number;
  /**
   * How many resources the state may hold by the end of the apply (its own and the plan's changes): the default
   * `compactAfter` counts them from the start, so a state that grows from 0 to 10,000 is not written whole at
   * 1,000, 2,000, 2,500, 3,500... on its way (each full save a sort and a write of the whole state; issue #26).
   */
  expectedResources?: number;
}

const keyOf = (kind: Kind, name: string): string => `${kind}\0${name}`;
const DONE: Promise<void> = Promise.resolve();

export class Ledger {
  private saving: Promise<void> = Promise.resolve();
  private next?: Promise<void>;
  private readonly resources = new Map<string, ManagedResource>();
  /** Each desired resource's identity, computed once (its intent and its record both carry it). */
  private readonly identities = new WeakMap<DesiredResource, string | undefined>();
  /** Keys changed since the last save started. */
  private dirty = new Set<string>();
  private head: Omit<GovopsState, 'resources'>;
  /** Whether the next save must write the whole state (the first one, after a failed append, to compact). */
  private full = true;
  private journaled = 0;
  /** A state-level field changed since the last full save. */
  private headChanged = false;
  /** The first failed save: from then on no write may be sent (see `assertWritable`). */
  private failed?: StateWriteError;
  /** No save is running or waiting, and the last one succeeded. */
  private idle = true;
  /** `updatedAt` of the entries recorded at the clock's `stampAt` (one ISO string per millisecond, not per entry). */
  private stamp = '';
  private stampAt = Number.NaN;

  constructor(
    state: GovopsState,
    private readonly persist: (state: GovopsState) => Promise<void>,
    private readonly options: LedgerOptions,
  ) {
    const { resources, ...head } = state;
    this.head = head;
    for (const r of resources) this.resources.set(keyOf(r.kind, r.name), r);
  }

  /** The state as recorded so far (a new value; O(resources)). */
  get current(): GovopsState {
    return { ...this.head, resources: [...this.resources.values()] };
  }

  get(kind: Kind, name: string): ManagedResource | undefined {
    return this.resources.get(keyOf(kind, name));
  }

  /** Ids of the resources of a kind the state records (live ones: a pending create has none yet). */
  ids(kind: Kind): Set<string> {
    const out = new Set<string>();
    for (const r of this.resources.values()) if (r.kind === kind && r.id !== '') out.add(r.id);
    return out;
  }

  /** Replace a state-level field other than the resources (saved with the next full save). */
  setField<K extends Exclude<keyof GovopsState, 'resources' | 'version' | 'fingerprintKey'>>(key: K, value: GovopsState[K]): void {
    this.head = { ...this.head, [key]: value };
    this.headChanged = true;
  }

  /** A create is about to be sent: pending entry (no id yet) with the identity to find it by. */
  intendCreate(c: Named, d: DesiredResource, key: string, preexisting: readonly string[] = []): void {
    const entry = this.entry(c, d, '', 'created');
    entry.pending = 'create';
    entry.key = key;
    if (preexisting.length) entry.preexisting = [...preexisting];
    this.put(entry);
  }

  /** The resource is live with this id (created, adopted, renamed or updated): a settled entry. */
  recordLive(c: Named, d: DesiredResource, id: string, identity?: string): void {
    const prev = this.get(c.resourceKind, c.renamedFrom ?? c.name);
    const origin = prev && prev.id === id && !prev.pending ? prev.origin : c.adopt ? 'adopted' : 'created';
    if (c.renamedFrom) this.remove(c.resourceKind, c.renamedFrom);
    const entry = this.entry(c, d, id, origin);
    // A data source's identity needs its integration's id, which only the caller knows (service/data-sources.ts).
    if (identity !== undefined) entry.identity = identity;
    this.put(entry);
  }

  /** A delete is about to be sent: the entry (under its recorded name) is marked pending. */
  intendDelete(c: Named): void {
    const prev = this.get(c.resourceKind, c.renamedFrom ?? c.name);
    if (prev) this.put({ ...prev, pending: 'delete' });
  }

  /** The resource is gone (deleted, or it never existed): its entry goes. */
  forget(c: Named): void {
    this.remove(c.resourceKind, c.renamedFrom ?? c.name);
  }

  /** A pending create that certainly did not happen (the service refused it): its entry goes. */
  dropIntent(c: Named): void {
    if (this.get(c.resourceKind, c.name)?.pending === 'create') this.remove(c.resourceKind, c.name);
  }

  /** The first save that failed, if any. */
  get halted(): StateWriteError | undefined {
    return this.failed;
  }

  /** Throws once a save has failed: called before every intent and every write (no write without a saved intent). */
  assertWritable(): void {
    if (this.failed) throw this.failed;
  }

  /** Write what was recorded (shared with a save already waiting). A failure halts the ledger: StateWriteError. */
  save(): Promise<void> {
    if (this.next) return this.next;
    const p = this.saving
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.write();
      })
      .then(
        () => {
          if (this.saving === p) this.idle = true;
        },
        (err: unknown) => {
          const failure = err instanceof StateWriteError ? err : new StateWriteError(err);
          this.failed ??= failure;
          throw failure;
        },
      );
    this.next = p;
    this.saving = p;
    this.idle = false;
    return p;
  }

  /**
   * Resolves once everything recorded so far is on disk: `save()`, except that with nothing recorded since the
   * last save, which succeeded and is done, there is nothing to write (no empty journal append, no promise chain:
   * the end of each of 10,000 tasks, issue #26).
   */
  saved(): Promise<void> {
    if (this.idle && this.dirty.size === 0 && !this.full && !this.headChanged && !this.failed) return DONE;
    return this.save();
  }

  /** After the last change: write the whole state when the journal holds anything (so it is one file again). */
  finish(): Promise<void> {
    if (this.journaled > 0 || this.headChanged) this.full = true;
    return this.dirty.size > 0 || this.full ? this.save() : this.settled();
  }

  /** Resolves when the last save finished (never rejects). */
  settled(): Promise<void> {
    return this.saving.catch(() => undefined);
  }

  private async write(): Promise<void> {
    const dirty = this.dirty;
    this.dirty = new Set();
    const compactAfter = this.options.compactAfter ?? Math.max(1000, Math.floor(Math.max(this.resources.size, this.options.expectedResources ?? 0) / 2));
    if (!this.options.journal || this.full || this.journaled + dirty.size > compactAfter) {
      const wasFull = this.full;
      this.full = false;
      try {
        await this.persist(this.current);
      } catch (err) {
        // Nothing of this save is known to be on disk: its entries are written with the next one.
        for (const k of dirty) this.dirty.add(k);
        this.full = wasFull || this.options.journal !== undefined;
        throw err;
      }
      this.journaled = 0;
      this.headChanged = false;
      return;
    }
    const entries: JournalEntry[] = [];
    for (const k of dirty) {
      const r = this.resources.get(k);
      if (r) entries.push({ put: r });
      else {
        const [kind, name] = k.split('\0') as [Kind, string];
        entries.push({ remove: { kind, name } });
      }
    }
    try {
      await this.options.journal(entries);
    } catch (err) {
      // A torn append is ignored when the state is read; the next save writes the whole state.
      this.full = true;
      for (const k of dirty) this.dirty.add(k);
      throw err;
    }
    this.journaled += entries.length;
  }

  private put(entry: ManagedResource): void {
    const k = keyOf(entry.kind, entry.name);
    this.resources.set(k, entry);
    this.dirty.add(k);
  }

  private remove(kind: Kind, name: string): void {
    const k = keyOf(kind, name);
    if (this.resources.delete(k)) this.dirty.add(k);
  }

  private updatedAt(): string {
    const now = this.options.now();
    const t = now.getTime();
    if (t !== this.stampAt) {
      this.stamp = now.toISOString();
      this.stampAt = t;
    }
    return this.stamp;
  }

  private entry(c: Named, d: DesiredResource, id: string, origin: ManagedResource['origin']): ManagedResource {
    const entry: ManagedResource = {
      kind: c.resourceKind,
      name: c.name,
      id,
      origin,
      specHash: d.specHash,
      secretFingerprints: { ...d.fingerprints },
      updatedAt: this.updatedAt(),
    };
    if (d.kind === 'Integration') {
      entry.type = d.body.type;
      entry.autoBootstrap = d.body.autoBootstrap ?? false;
    }
    // What the item at the id must still be before govops writes to it by that id (src/plan/stale.ts).
    let identity = this.identities.get(d);
    if (identity === undefined && !this.identities.has(d)) this.identities.set(d, (identity = desiredIdentity(d, this.head.fingerprintKey)));
    if (identity !== undefined) entry.identity = identity;
    if (this.options.revision !== undefined) entry.revision = this.options.revision;
    return entry;
  }
}
