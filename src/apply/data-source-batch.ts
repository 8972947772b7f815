/**
 * New data sources of one integration go to the service in one POST (the interface's create body holds a
 * list, `dataSources[]`). Each data source's task joins its integration's batch once its integration is ready
 * (its task done: enabled, live id known); the batch is sent once every expected member has joined or left.
 * Intent first: every member is recorded as a pending create, found later by (integration id, prefix), and
 * saved before the POST. A failure the service certainly did not act on (it answered 4xx, or the connection
 * was refused) drops the intents; any other (5xx, timeout, reset: the answer may have been lost) leaves them for
 * the next run to resolve against the live list.
 */
import type { LiveDataSource } from '../api/types.js';
import { notProcessed } from '../api/retry.js';
import { ApiError, failureKind } from '../errors.js';
import { isSettledStatus } from '../service/kinds.js';
import { MAX_CONFLICT_RETRIES } from './integration.js';
import { waitSettled } from './poll.js';
import type { DesiredDataSource, PlanChange, ResourceChange } from '../plan/types.js';
import { dataSourceKey } from '../service/data-sources.js';
import type { BatchDeps } from './webhook-batch.js';

type Named = Pick<ResourceChange, 'resourceKind' | 'name' | 'adopt' | 'renamedFrom'>;

interface Member {
  change: Named;
  desired: DesiredDataSource;
  resolve(d: LiveDataSource): void;
  reject(err: unknown): void;
}

interface Group {
  waiting: Set<string>;
  members: Member[];
  started: boolean;
  integrationId?: string;
}

/** Data source changes whose task joins a create batch. */
export function joinsDataSourceBatch(c: PlanChange): boolean {
  return c.resourceKind === 'DataSource' && !c.blocked && (c.action === 'create' || c.action === 'replace');
}

const groupOf = (c: Pick<PlanChange, 'integration'>): string => c.integration?.name ?? `id:${c.integration?.liveId ?? ''}`;

export class DataSourceBatches {
  private readonly groups = new Map<string, Group>();

  constructor(
    changes: readonly PlanChange[],
    private readonly deps: BatchDeps & { /** Ids listed at plan time: never taken for a create's lost answer. */ preexisting?: ReadonlySet<string> },
  ) {
    for (const c of changes) if (joinsDataSourceBatch(c)) this.group(groupOf(c)).waiting.add(c.name);
  }

  private group(key: string): Group {
    let g = this.groups.get(key);
    if (!g) {
      g = { waiting: new Set(), members: [], started: false };
      this.groups.set(key, g);
    }
    return g;
  }

  /** Add a data source to its integration's batch; resolves with the live data source once created. */
  join(change: PlanChange, desired: DesiredDataSource, integrationId: string): Promise<LiveDataSource> {
    const g = this.group(groupOf(change));
    return new Promise<LiveDataSource>((resolve, reject) => {
      if (g.integrationId !== undefined && g.integrationId !== integrationId) {
        reject(new Error(`apply bug: data sources of Integration/${change.integration?.name ?? '?'} joined with ids ${g.integrationId} and ${integrationId}`));
        this.leave(change);
        return;
      }
      g.integrationId = integrationId;
      // A replace's delete half already handled its state entry; a create may carry a rename (its old entry goes).
      const named: Named = { resourceKind: 'DataSource', name: change.name, adopt: false };
      if (change.action === 'create' && change.renamedFrom !== undefined) named.renamedFrom = change.renamedFrom;
      g.members.push({ change: named, desired, resolve, reject });
      g.waiting.delete(change.name);
      this.maybeStart(g);
    });
  }

  /** A member that will not join (its task failed or was skipped first). */
  leave(change: PlanChange): void {
    const g = this.groups.get(groupOf(change));
    if (g && g.waiting.delete(change.name)) this.maybeStart(g);
  }

  private maybeStart(g: Group): void {
    if (g.started || g.waiting.size > 0 || g.members.length === 0) return;
    g.started = true;
    const members = [...g.members];
    this.send(g.integrationId!, members).catch((err: unknown) => {
      for (const m of members) m.reject(err);
    });
  }

  private async send(integrationId: string, members: Member[]): Promise<void> {
    const { api, ledger, logger } = this.deps;
    ledger.assertWritable();
    for (const m of members) ledger.intendCreate(m.change, m.desired, dataSourceKey(integrationId, m.desired.body.prefix));
    await ledger.save();
    const items = members.map((m) => ({ dataSourceName: m.desired.body.dataSourceName, prefix: m.desired.body.prefix }));
    logger.debug({ integrationId, count: items.length }, 'data sources: one create request');
    let created: LiveDataSource[];
    for (let retry = 0; ; retry++) {
      try {
        created = await this.deps.enqueue(() => {
          ledger.assertWritable();
          return api.createDataSources(integrationId, items, this.deps.preexisting ? { preexisting: this.deps.preexisting } : {});
        });
        break;
      } catch (err) {
        if (retry < MAX_CONFLICT_RETRIES && (await this.settledAfterBusy(integrationId, err))) {
          logger.debug({ integrationId, retry }, 'data sources: the integration was busy (409); sent again once it settled');
          continue;
        }
        if (notProcessed(err)) for (const m of members) ledger.dropIntent(m.change);
        await ledger.save();
        throw err;
      }
    }
    members.forEach((m, i) => ledger.recordLive(m.change, m.desired, created[i]!.id, dataSourceKey(integrationId, m.desired.body.prefix)));
    await ledger.save();
    members.forEach((m, i) => m.resolve(created[i]!));
  }

  /**
   * Whether a failed create met its integration busy and it has settled `enabled` since: a 409 (the service registers
   * data sources only under an enabled integration; the integration's own writes wait out a 409 the same way,
   * integration.ts `retryOnConflict`) while the integration is in a transition. A 409 while it is enabled says a name or
   * prefix is taken: not retried. Anything the check cannot tell (an error status, gone, a failed poll, the deadline)
   * is not busy: the create's own failure stands.
   */
  private async settledAfterBusy(integrationId: string, err: unknown): Promise<boolean> {
    if (!(err instanceof ApiError) || failureKind(err.code).retriedBy !== 'task') return false;
    const { api, poll } = this.deps;
    try {
      if (isSettledStatus((await api.getIntegrationStatus(integrationId)).status)) return false;
      return (await waitSettled(api, integrationId, poll)) === 'enabled';
    } catch {
      return false;
    }
  }
}
