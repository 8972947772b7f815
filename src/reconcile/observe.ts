/**
 * The observe stage of a reconcile: the live lists (a recorded id they leave out is asked for by id), then the
 * state made current against them: intents an interrupted run left are resolved, records whose id now names
 * another item are forgotten. A failure to observe the service is stage `plan`.
 */
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import { DataSourcesUnsupportedError } from '../errors.js';
import { resolvePending } from '../plan/pending.js';
import { forgetStale } from '../plan/stale.js';
import type { DesiredResource } from '../plan/types.js';
import type { GovopsState } from '../state/types.js';
import { readWithOlderForm } from '../state/store.js';
import { confirmRecorded } from './confirm.js';
import type { Loaded } from './load.js';
import { thrownAt, type StageFailure } from './stages.js';

/** What the service holds, as the planner reads it. */
export interface Live {
  integrations: LiveIntegration[];
  webhooks: LiveWebhook[];
  dataSources?: LiveDataSource[];
  /** The service has no data sources (it answered their list with 404/405). */
  dataSourcesUnsupported?: string;
}

export interface Observed {
  live: Live;
  desired: DesiredResource[];
  /** The state with the interrupted run's intents resolved: what the planner plans against. */
  resolvedState: GovopsState;
  /** That state with stale records forgotten too: what is saved and applied against. */
  state: GovopsState;
  /** The state changed (resolved intents or forgotten records, or it was read in an older form): saved before an apply. */
  resolved: boolean;
}

/**
 * The live data sources, listed only when data sources are in play (a DataSource manifest or state entry):
 * a service without them is not asked. A service answering the list with 404/405 has none: `unsupported`.
 * `unfinishedDeletes`: ids of data sources whose delete an interrupted run left pending: listed even when the
 * service marks them deleted (only soft-deleted: the plan deletes them again, which sends the hard delete).
 */
export async function observeDataSources(
  api: ServiceApi,
  inPlay: boolean,
  unfinishedDeletes?: ReadonlySet<string>,
): Promise<{ list?: LiveDataSource[]; unsupported?: string }> {
  if (!inPlay) return {};
  try {
    return { list: await (unfinishedDeletes?.size ? api.listDataSources({ unfinishedDeletes }) : api.listDataSources()) };
  } catch (err) {
    if (err instanceof DataSourcesUnsupportedError) return { unsupported: err.message };
    throw err;
  }
}

/** Data sources whose delete is pending (sent, its answer not seen): the service may have only soft-deleted them. */
function unfinishedDeletes(state: GovopsState): Set<string> {
  return new Set(state.resources.filter((r) => r.kind === 'DataSource' && r.pending === 'delete' && r.id !== '').map((r) => r.id));
}

/** The integrations and the webhooks, as listed (a plan asks for them while the manifests are read: engine.ts). */
export type Lists = [LiveIntegration[], LiveWebhook[]];

/**
 * The live lists (`lists`: those already asked for); a recorded id the lists left out is asked for by id (a list
 * may lag behind writes).
 */
async function observeLive(api: ServiceApi, loaded: Loaded, state: GovopsState, log: Logger, lists?: Promise<Lists>): Promise<Live> {
  const [[listed, hooks], dataSources] = await Promise.all([
    lists ?? Promise.all([api.listIntegrations(), api.listWebhooks()]),
    observeDataSources(api, loaded.dataSources || state.resources.some((r) => r.kind === 'DataSource'), unfinishedDeletes(state)),
  ]);
  const { integrations, webhooks } = await confirmRecorded(api, state, { integrations: listed, webhooks: hooks }, log);
  const live: Live = { integrations, webhooks };
  if (dataSources.list) live.dataSources = dataSources.list;
  if (dataSources.unsupported) live.dataSourcesUnsupported = dataSources.unsupported;
  return live;
}

export async function observeStage(
  api: ServiceApi,
  loaded: Loaded,
  state: GovopsState,
  log: Logger,
  now?: number,
  lists?: Promise<Lists>,
): Promise<Observed | StageFailure> {
  let live: Live;
  try {
    live = await observeLive(api, loaded, state, log, lists);
  } catch (err) {
    return thrownAt('plan', err, loaded.diagnostics);
  }
  const pending = resolvePending(state, { integrations: live.integrations, webhooks: live.webhooks, dataSources: live.dataSources }, now);
  for (const note of pending.notes) log.info({ note }, 'resolved an intent left by an interrupted run');
  const desired = loaded.desired(pending.state);
  // Records whose id now names another item are forgotten (saved before an apply); the planner does the same
  // and reports each in the plan's warnings.
  const stale = forgetStale(pending.state, { integrations: live.integrations, webhooks: live.webhooks, dataSources: live.dataSources }, desired);
  for (const note of stale.notes) log.warn({ note: note.message }, 'forgot a stale record: its id now names another item');
  // A state read in an older form (a webhook's url in clear) is saved too: the url leaves the file at the first apply.
  const resolved = pending.notes.length > 0 || stale.notes.length > 0 || readWithOlderForm(state);
  return { live, desired, resolvedState: pending.state, state: stale.state, resolved };
}
