/**
 * Applying a plan as tasks (after Argo CD gitops-engine's sync tasks): every plan change becomes one
 * task, a list of steps; every step is one service operation in up to three phases, run by the runner
 * (applier.ts) in order: dry run → write → settle. Dry run and write hold a concurrency slot; settling
 * (saving the new id, then waiting on the shared poller) does not. A step records what it did in the
 * ledger at the moment it knows it (intent saved before the write, the live id saved before polling).
 */
import type { ServiceApi } from '../api/client-types.js';
import type { IntegrationBody } from '../api/types.js';
import { ErrorCode, classify } from '../errors.js';
import type { DesiredDataSource, DesiredIntegration, DesiredResource, DesiredWebhook, PlanChange } from '../plan/types.js';
import { dataSourceKey } from '../service/data-sources.js';
import { KINDS, naturalKey } from '../kinds/registry.js';
import type { DataSourceBatches } from './data-source-batch.js';
import {
  dryRunCreate,
  dryRunDelete,
  dryRunReplacement,
  dryRunUpdate,
  settleDelete,
  settleIntegration,
  writeCreate,
  writeDelete,
  writeUpdate,
  type OpContext,
} from './integration.js';
import type { Ledger } from './ledger.js';
import { ApplyFailure } from './validation.js';
import type { WebhookBatch } from './webhook-batch.js';
import { deleteWebhook } from './webhooks.js';
import { copyPlain } from '../util/copy.js';
import { formatDuration } from '../util/duration.js';

export interface StepContext extends OpContext {
  ledger: Ledger;
}

export type Phase = 'dryRun' | 'prepare' | 'write' | 'settle';

/**
 * One service operation. Phases that do not apply are absent. Dry run and write hold a concurrency slot;
 * prepare (recording and saving the intent) and settle do not.
 */
export interface Step {
  readonly label: string;
  dryRun?(ctx: StepContext): Promise<void>;
  /** Record the intent and save it: done before `write` sends anything. */
  prepare?(ctx: StepContext): Promise<void>;
  write(ctx: StepContext): Promise<void>;
  settle?(ctx: StepContext): Promise<void>;
  /** The write joins a batch sent by the batch itself (webhook creates): it holds no concurrency slot. */
  readonly batched?: boolean;
}

export interface ApplyTask {
  readonly change: PlanChange;
  readonly steps: readonly Step[];
  /** The live id once the task is done (undefined for deletes). */
  liveId(): string | undefined;
}

type Named = Pick<PlanChange, 'resourceKind' | 'name' | 'adopt' | 'renamedFrom'>;

const body = (d: DesiredIntegration): IntegrationBody => copyPlain(d.body);
/** A change that creates a new resource: never an adoption, never a rename. */
const fresh = (c: PlanChange): Named => ({ resourceKind: c.resourceKind, name: c.name, adopt: false });

/** The identity a pending create is found by later: the natural key, or a webhook's name. */
export function identityOf(d: DesiredResource): string {
  if (d.kind === 'Integration') return naturalKey(d.body.type, d.body.config);
  if (d.kind === 'Webhook') return d.body.name;
  return dataSourceKey('', d.body.prefix); // the batch records the key with the integration's id
}

// ---- integration steps -------------------------------------------------------------------------

class CreateIntegration implements Step {
  readonly label = 'create';
  id?: string;
  /** When the service accepted the write (the transition began). */
  private acceptedAt?: number;
  /** The integration failed to create earlier (the service says: fix it with PUT): its id. */
  private fixId?: string;
  /**
   * An earlier run sent a create of it and never heard back (its intent held pending, plan/held-create.ts): an
   * integration of its natural key that failed to create is that create, govops' own, fixed with PUT under --no-adopt
   * too (which refuses only someone else's).
   */
  private ownEarlierCreate = false;
  constructor(
    private readonly change: Named,
    private readonly d: DesiredIntegration,
  ) {}

  private opContext(ctx: StepContext): StepContext {
    return this.ownEarlierCreate && ctx.noAdopt ? { ...ctx, noAdopt: false } : ctx;
  }

  async dryRun(ctx: StepContext): Promise<void> {
    const earlier = ctx.ledger.get('Integration', this.change.name);
    this.ownEarlierCreate = earlier?.pending === 'create' && earlier.key === identityOf(this.d);
    this.fixId = await dryRunCreate(this.opContext(ctx), body(this.d), `Integration/${this.change.name}`, this.ownEarlierCreate);
  }

  async prepare(ctx: StepContext): Promise<void> {
    // It exists (in an error status): recorded first, then fixed. Else: the pending create.
    if (this.fixId !== undefined) ctx.ledger.recordLive(this.change, this.d, this.fixId);
    else ctx.ledger.intendCreate(this.change, this.d, identityOf(this.d));
    await ctx.ledger.save();
  }

  async write(ctx: StepContext): Promise<void> {
    if (this.fixId !== undefined) {
      await writeUpdate(ctx, this.fixId, body(this.d));
      this.acceptedAt = ctx.poll.clock.monotonic();
      this.id = this.fixId;
      return;
    }
    // A create the service refused leaves no intent: the next run would take another's integration for it.
    const id = await writeCreate(this.opContext(ctx), body(this.d), () => ctx.ledger.dropIntent(this.change), `Integration/${this.change.name}`);
    this.acceptedAt = ctx.poll.clock.monotonic();
    this.id = id;
    ctx.ledger.recordLive(this.change, this.d, id);
  }

  async settle(ctx: StepContext): Promise<void> {
    if (this.id === undefined) throw new Error('create: settle before write');
    await ctx.ledger.save(); // the id is on disk before polling starts
    const op = this.fixId !== undefined ? 'update' : 'create';
    await settleIntegration(ctx, this.id, op, { type: this.d.body.type, op, ...(this.acceptedAt !== undefined ? { startedAt: this.acceptedAt } : {}) });
  }
}

class UpdateIntegration implements Step {
  readonly label = 'update';
  private acceptedAt?: number;
  constructor(
    private readonly change: Named,
    private readonly id: string,
    private readonly d: DesiredIntegration,
  ) {}

  dryRun(ctx: StepContext): Promise<void> {
    return dryRunUpdate(ctx, this.id, body(this.d));
  }

  async write(ctx: StepContext): Promise<void> {
    await writeUpdate(ctx, this.id, body(this.d));
    this.acceptedAt = ctx.poll.clock.monotonic();
  }

  async settle(ctx: StepContext): Promise<void> {
    await settleIntegration(ctx, this.id, 'update', { type: this.d.body.type, op: 'update', ...(this.acceptedAt !== undefined ? { startedAt: this.acceptedAt } : {}) });
    // Recorded once the service accepted it: a failed update leaves the old fingerprints, so the next plan retries it.
    ctx.ledger.recordLive(this.change, this.d, this.id);
  }
}

/**
 * How long a settle waits for a transition this run did not start, beyond the run's other work (its own writes and
 * their waits, which it may outlast for free): the lock is not held for a transition the service keeps open for hours.
 */
export const SETTLE_WAIT_MS = 60_000;

/**
 * A settle that ended its wait with the integration still creating or editing: not a failure (govops sent nothing to it
 * in this run), the outcome `settling`; the next run looks again.
 */
export class StillSettling extends Error {
  override readonly name = 'StillSettling';
}

/**
 * A `settle` change: an integration govops owns is still creating or editing and nothing differs (its create's or
 * update's answer was lost, an earlier run's wait ended first, or another client edits it). Nothing is sent: the wait
 * a write of its own would have had (polled at once, nothing learned: when the transition began is not known), an
 * error status this run's failure; once settled, recorded as the manifest applied (as an update records it once the
 * service accepted it). The wait is bounded (SETTLE_WAIT_MS, or while the run's other work lasts, within --timeout):
 * still transitional then, it is `settling`, no failure.
 */
class SettleIntegration implements Step {
  readonly label = 'settle';
  constructor(
    private readonly change: Named,
    private readonly id: string,
    private readonly d: DesiredIntegration,
  ) {}

  write(): Promise<void> {
    return Promise.resolve();
  }

  async settle(ctx: StepContext): Promise<void> {
    // (as a wait after a 409: op `update`, since a `create` wait counts one more integration in the next list, and this
    // one was listed at plan time)
    const startedAt = ctx.poll.clock.monotonic();
    const until = startedAt + SETTLE_WAIT_MS;
    // who sent it is not known: an earlier run (its answer lost, or its wait ended first), or another client
    const what = "the create or edit under way when this run planned (not sent by this run: an earlier run's or another client's)";
    try {
      await settleIntegration(ctx, this.id, what, { type: this.d.body.type, op: 'update', learn: false, immediate: true, until });
    } catch (err) {
      if (!(err instanceof ApplyFailure) || err.code !== ErrorCode.settleTimeout) throw err;
      const waited = formatDuration(ctx.poll.clock.monotonic() - startedAt);
      const last = err.unsettled ?? 'last status unknown';
      throw new StillSettling(`integration ${this.id} still settling after ${waited} (${last}): this run sent nothing to it and waits no longer; the next run looks again`);
    }
    ctx.ledger.recordLive(this.change, this.d, this.id);
    await ctx.ledger.save();
  }
}

class DeleteIntegration implements Step {
  readonly label = 'delete';
  private gone = false;
  private acceptedAt?: number;
  constructor(
    private readonly change: Named,
    private readonly id: string,
    private readonly payload: Record<string, unknown> | undefined,
    private readonly type: string | undefined,
    /** The delete half of a replace whose new integration has another natural key: its create, dry-run first. */
    private readonly replacement?: DesiredIntegration,
  ) {}

  async dryRun(ctx: StepContext): Promise<void> {
    if (this.replacement) await dryRunReplacement(ctx, this.id, body(this.replacement));
    this.gone = !(await dryRunDelete(ctx, this.id, this.payload));
  }

  async prepare(ctx: StepContext): Promise<void> {
    if (!this.gone) {
      ctx.ledger.intendDelete(this.change);
      await ctx.ledger.save();
    }
  }

  async write(ctx: StepContext): Promise<void> {
    if (!this.gone) {
      this.gone = !(await writeDelete(ctx, this.id, this.payload));
      this.acceptedAt = ctx.poll.clock.monotonic();
    }
  }

  async settle(ctx: StepContext): Promise<void> {
    if (!this.gone) {
      // what the state recorded of it: the integration at the id once the wait ends must still be it to fail the delete
      const identity = ctx.ledger.get(this.change.resourceKind, this.change.renamedFrom ?? this.change.name)?.identity;
      const t = { ...(this.type !== undefined ? { type: this.type } : {}), ...(this.acceptedAt !== undefined ? { startedAt: this.acceptedAt } : {}) };
      await settleDelete(ctx, this.id, t, identity);
    }
    ctx.ledger.forget(this.change);
    await ctx.ledger.save();
  }
}

// ---- deletes by id (webhooks, data sources) ---------------------------------------------------

/**
 * A delete by id with no transition to wait for (a webhook, a data source): the intent is saved before the
 * request, the entry forgotten once the service answered (a 404 counts: it was gone already, which is what a
 * delete wants).
 */
class DeleteById implements Step {
  readonly label = 'delete';
  constructor(
    private readonly change: Named,
    private readonly id: string,
    private readonly remove: (api: ServiceApi, id: string) => Promise<unknown>,
    /** false for an extra copy of a webhook: its state entry belongs to the copy govops keeps. */
    private readonly owned = true,
  ) {}

  async prepare(ctx: StepContext): Promise<void> {
    if (this.owned) {
      ctx.ledger.intendDelete(this.change);
      await ctx.ledger.save();
    }
  }

  async write(ctx: StepContext): Promise<void> {
    await this.remove(ctx.api, this.id);
  }

  async settle(ctx: StepContext): Promise<void> {
    if (this.owned) {
      ctx.ledger.forget(this.change);
      await ctx.ledger.save();
    }
  }
}

const deleteDataSource = (api: ServiceApi, id: string): Promise<boolean> => api.deleteDataSource(id);

// ---- webhook steps -----------------------------------------------------------------------------

class JoinWebhookBatch implements Step {
  readonly label = 'create';
  readonly batched = true;
  id?: string;
  constructor(
    private readonly change: Named,
    private readonly d: DesiredWebhook,
    private readonly batch: WebhookBatch,
  ) {}

  async write(): Promise<void> {
    this.id = (await this.batch.join(this.change, this.d)).id;
  }
}

// ---- data source steps -------------------------------------------------------------------------

class JoinDataSourceBatch implements Step {
  readonly label = 'create';
  readonly batched = true;
  id?: string;
  constructor(
    private readonly change: PlanChange,
    private readonly d: DesiredDataSource,
    private readonly batches: DataSourceBatches,
  ) {}

  /** The integration's live id: recorded by its task in this apply (created, replaced), else the plan's. */
  private integrationId(ctx: StepContext): string {
    const name = this.change.integration?.name;
    const entry = name === undefined ? undefined : ctx.ledger.get('Integration', name);
    const id = entry && entry.id !== '' && !entry.pending ? entry.id : this.change.integration?.liveId;
    if (id === undefined || id === '') {
      throw new ApplyFailure(ErrorCode.blocked, `the live id of Integration/${name ?? '?'} is not known: the data source waits for the next run`);
    }
    return id;
  }

  async write(ctx: StepContext): Promise<void> {
    this.id = (await this.batches.join(this.change, this.d, this.integrationId(ctx))).id;
  }
}

// ---- state-only steps --------------------------------------------------------------------------

class RecordLive implements Step {
  readonly label = 'record';
  constructor(
    private readonly change: Pick<PlanChange, 'resourceKind' | 'name' | 'adopt' | 'renamedFrom' | 'integration'>,
    private readonly id: string,
    private readonly d: DesiredResource,
  ) {}

  async write(ctx: StepContext): Promise<void> {
    // A data source adopted or renamed is where the plan matched it, (its integration's live id, its prefix): what
    // the stale-record check holds the id to, as for one govops created (without it, an id the service gives to
    // another team's data source would be taken for this one).
    const integrationId = this.change.integration?.liveId;
    const identity = this.d.kind === 'DataSource' && integrationId !== undefined ? dataSourceKey(integrationId, this.d.body.prefix) : undefined;
    ctx.ledger.recordLive(this.change, this.d, this.id, identity);
    await ctx.ledger.save();
  }
}

class Forget implements Step {
  readonly label = 'forget';
  constructor(private readonly change: Named) {}

  async write(ctx: StepContext): Promise<void> {
    ctx.ledger.forget(this.change);
    await ctx.ledger.save();
  }
}

// ---- the create half of a replace ---------------------------------------------------------------

/**
 * The create step of a replace, run once its delete is done: a failure of its service calls says that the resource it
 * replaces is gone already ("integration 4 was deleted; its replacement failed: …", same code, tests and new id), so a
 * failed replace is never read as "nothing happened" (a failed dry run, a refused create).
 */
class AfterDelete implements Step {
  readonly label: string;
  readonly batched?: boolean;
  readonly dryRun?: (ctx: StepContext) => Promise<void>;
  readonly prepare?: (ctx: StepContext) => Promise<void>;
  readonly write: (ctx: StepContext) => Promise<void>;
  readonly settle?: (ctx: StepContext) => Promise<void>;

  constructor(inner: Step, deleted: string) {
    this.label = inner.label;
    if (inner.batched) this.batched = true;
    const saying = (phase: (ctx: StepContext) => Promise<void>) => (ctx: StepContext) =>
      phase.call(inner, ctx).catch((err: unknown) => {
        throw afterDelete(err, deleted);
      });
    if (inner.dryRun) this.dryRun = saying(inner.dryRun);
    if (inner.prepare) this.prepare = (ctx) => inner.prepare!(ctx); // records and saves the intent: no service call
    this.write = saying(inner.write);
    if (inner.settle) this.settle = saying(inner.settle);
  }
}

function afterDelete(err: unknown, deleted: string): ApplyFailure {
  const failure = err instanceof ApplyFailure ? err : undefined;
  return new ApplyFailure(classify(err).code, `${deleted} was deleted; its replacement failed: ${err instanceof Error ? err.message : String(err)}`, {
    ...(failure?.validation ? { validation: failure.validation } : {}),
    ...(failure?.liveId !== undefined ? { liveId: failure.liveId } : {}),
    cause: err,
  });
}

// ---- building the tasks ------------------------------------------------------------------------

function task(change: PlanChange, steps: Step[], liveId: () => string | undefined): ApplyTask {
  return { change, steps, liveId };
}

/**
 * Whether a replace gives the integration another natural key (its type, or a field of the key, changes): then its
 * create can be dry-run before the delete without conflicting with the integration it replaces.
 */
function changesNaturalKey(c: PlanChange, d: DesiredIntegration): boolean {
  const fields = new Set(['type', ...KINDS.naturalKeyFields[d.body.type].map((f) => `config.${f}`)]);
  return c.changes.some((f) => fields.has(f.path));
}

/** Webhook changes whose task joins the create batch. */
export function joinsWebhookBatch(c: PlanChange): boolean {
  return c.resourceKind === 'Webhook' && !c.blocked && (c.action === 'create' || c.action === 'replace');
}

/** The task of one plan change. `d` is its manifest (absent for prunes). */
export function taskFor(c: PlanChange, d: DesiredResource | undefined, batch: WebhookBatch, dataSources?: DataSourceBatches): ApplyTask {
  const need = <K extends DesiredResource['kind']>(kind: K): Extract<DesiredResource, { kind: K }> => {
    if (!d || d.kind !== kind) {
      throw new ApplyFailure(ErrorCode.blocked, `no manifest for ${c.resourceKind}/${c.name}`);
    }
    return d as Extract<DesiredResource, { kind: K }>;
  };
  // State-only changes, the same for both kinds.
  switch (c.action) {
    case 'adopt':
      return task(c, [new RecordLive(c, c.liveId, need(c.resourceKind))], () => c.liveId);
    case 'noop':
      if (c.renamedFrom !== undefined) return task(c, [new RecordLive(c, c.liveId, need(c.resourceKind))], () => c.liveId);
      if (c.adopt && c.liveId !== undefined) return task(c, [new RecordLive(c, c.liveId, need(c.resourceKind))], () => c.liveId);
      return task(c, [], () => c.liveId);
    case 'delete':
      if (c.goneFromService) return task(c, [new Forget(c)], () => undefined);
      break;
    case 'settle': // (integrations only: need() refuses another kind)
      return task(c, [new SettleIntegration(c, c.liveId, need('Integration'))], () => c.liveId);
    default:
      break;
  }
  if (c.resourceKind === 'Integration') {
    const payload = c.deleteNeedsCredentials && d?.kind === 'Integration' ? d.deleteCredentials : undefined;
    const type = c.integrationType ?? (d?.kind === 'Integration' ? d.body.type : undefined);
    switch (c.action) {
      case 'create': {
        const create = new CreateIntegration(fresh(c), need('Integration'));
        return task(c, [create], () => create.id);
      }
      case 'update':
        return task(c, [new UpdateIntegration(c, c.liveId, need('Integration'))], () => c.liveId);
      case 'replace': {
        const d = need('Integration');
        const create = new CreateIntegration(fresh(c), d);
        const check = changesNaturalKey(c, d) ? d : undefined;
        return task(c, [new DeleteIntegration(c, c.liveId, payload, type, check), new AfterDelete(create, `integration ${c.liveId}`)], () => create.id);
      }
      case 'delete':
        return task(c, [new DeleteIntegration(c, c.liveId, payload, type)], () => undefined);
    }
  }
  if (c.resourceKind === 'DataSource') {
    const joinBatch = (): JoinDataSourceBatch => {
      if (!dataSources) throw new Error('apply bug: no data source batches');
      return new JoinDataSourceBatch(c, need('DataSource'), dataSources);
    };
    switch (c.action) {
      case 'create': {
        const join = joinBatch();
        return task(c, [join], () => join.id);
      }
      case 'replace': {
        const join = joinBatch();
        return task(c, [new DeleteById(c, c.liveId, deleteDataSource), new AfterDelete(join, `data source ${c.liveId}`)], () => join.id);
      }
      case 'delete':
        return task(c, [new DeleteById(c, c.liveId, deleteDataSource)], () => undefined);
      case 'update':
        throw new ApplyFailure(ErrorCode.blocked, `data sources have no update; DataSource/${c.name} cannot be updated`);
    }
  }
  switch (c.action) {
    case 'create': {
      const join = new JoinWebhookBatch(fresh(c), need('Webhook'), batch);
      return task(c, [join], () => join.id);
    }
    case 'replace': {
      const join = new JoinWebhookBatch(fresh(c), need('Webhook'), batch);
      return task(c, [new DeleteById(c, c.liveId, deleteWebhook), new AfterDelete(join, `webhook ${c.liveId}`)], () => join.id);
    }
    case 'delete':
      return task(c, [new DeleteById(c, c.liveId, deleteWebhook, c.duplicateOf === undefined)], () => undefined);
    case 'update':
      throw new ApplyFailure(ErrorCode.blocked, `webhooks have no update; Webhook/${c.name} cannot be updated`);
  }
}
