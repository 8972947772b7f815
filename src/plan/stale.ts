/**
 * Stale records (pure). The interface never says a deleted item's id is not given to a new one, and a service
 * that reuses ids makes a recorded id name someone else's item. Before govops writes by a recorded id (an update,
 * the delete of a replace or a prune, the duplicate clean-up), the live item at that id must still be the one it
 * recorded: the same kind (the endpoint) and the same identity (kinds/registry.ts `integrationIdentity`, service/kinds.ts
 * `webhookIdentity`; a data source's integration id and prefix, service/data-sources.ts `dataSourceKey`, checked
 * when the entry recorded it and the service lists data sources). An entry whose id now holds an item with another
 * identity is stale: it is forgotten, so the
 * planner matches its manifest by natural key like any other, and the item at that id is left alone (at most
 * adopted, when its natural key is the manifest's). The planner and the engine (which saves the forgetting before
 * it applies) call `forgetStale` after the pending intents are resolved (plan/pending.ts). An integration whose live
 * type govops does not know is never stale here: the planner reports it as a type change and leaves it alone.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import { dataSourceKey } from '../service/data-sources.js';
import { attributeDataSources } from './data-sources.js';
import { keyedWebhookIdentity, recordedWebhookIdentity, urlWithoutCredential, webhookIdentityParts } from '../service/kinds.js';
import { integrationIdentity, isIntegrationType } from '../kinds/registry.js';
import type { GovopsState, ManagedResource } from '../state/types.js';
import { warning, type PlanWarning } from './notes.js';
import type { DesiredResource } from './types.js';

/**
 * The identity the desired resource will have live, as the state records it (a webhook's url by its fingerprint under
 * the state's `key`: service/kinds.ts `keyedWebhookIdentity`); undefined for data sources: it needs the integration's
 * id, recorded by the create.
 */
export function desiredIdentity(d: DesiredResource, key: string): string | undefined {
  if (d.kind === 'Integration') return integrationIdentity(d.body.type, d.body.config);
  if (d.kind === 'Webhook') return keyedWebhookIdentity(d.body.name, d.body.url, key);
  return undefined;
}

export function liveIntegrationIdentity(l: LiveIntegration): string {
  return isIntegrationType(l.type) ? integrationIdentity(l.type, l.config) : `${String(l.type)}`;
}

/** A live webhook's identity as the state records it (its url by its fingerprint under the state's `key`). */
export function liveWebhookIdentity(l: LiveWebhook, key: string): string {
  return keyedWebhookIdentity(l.name, l.url, key);
}

const NOUN: Readonly<Record<string, string>> = { Integration: 'integration', Webhook: 'webhook', DataSource: 'data source' };

/** A forgotten entry: what its recorded id holds now and what govops recorded there (both as the notes show them). */
export interface ForgottenRecord {
  kind: ManagedResource['kind'];
  name: string;
  id: string;
  /** `integration`, `webhook`, `data source`. */
  noun: string;
  holds: string;
  recorded: string;
}

export interface StaleResolution {
  state: GovopsState;
  /** One line per forgotten entry (plan warnings, log). */
  notes: PlanWarning[];
  /** The forgotten entries (a saved plan made against one is refused naming it: reconcile/plan-stage.ts). */
  forgotten: ForgottenRecord[];
}

/**
 * A readable identity for the notes: a webhook's as `name "n", url u` (the live one's url without a credential; the
 * recorded one's name only: the state holds its url by fingerprint), a data source's key as its parts.
 */
function shown(identity: string, kind: string, live?: LiveWebhook, sameName?: string): string {
  if (kind === 'DataSource') {
    const [integration, prefix] = identity.split('|', 2) as [string, string];
    return `integration ${integration}, prefix ${prefix}`;
  }
  if (live) return `name ${JSON.stringify(live.name)}, url ${urlWithoutCredential(live.url)}`;
  const parts = webhookIdentityParts(identity);
  if (!parts) return identity;
  if (parts.url !== undefined) return `name ${JSON.stringify(parts.name)}, url ${urlWithoutCredential(parts.url)}`;
  return `name ${JSON.stringify(parts.name)}${live === undefined && sameName !== undefined && sameName === parts.name ? ', another url' : ''}`;
}

/**
 * The identity an entry recorded. Entries written before identities were recorded have none: then the identity
 * of its manifest, when the manifest is still the spec last applied (the same spec hash: what was applied is what
 * the manifest says); else nothing but the integration type can be checked.
 */
function recordedIdentity(st: ManagedResource, desired: () => ReadonlyMap<string, DesiredResource>, key: string): string | undefined {
  if (st.identity !== undefined) return st.kind === 'Webhook' ? recordedWebhookIdentity(st.identity, key) : st.identity;
  const d = desired().get(`${st.kind}\0${st.name}`);
  return d && d.specHash === st.specHash ? desiredIdentity(d, key) : undefined;
}

type StaleLive = { integrations: readonly LiveIntegration[]; webhooks: readonly LiveWebhook[]; dataSources?: readonly LiveDataSource[] };

/** What an answer was asked against: held weakly (an answer never keeps 10,000 live items or manifests alive). */
interface Asked {
  integrations: WeakRef<readonly LiveIntegration[]>;
  webhooks: WeakRef<readonly LiveWebhook[]>;
  dataSources: WeakRef<readonly LiveDataSource[]> | undefined;
  desired: WeakRef<readonly DesiredResource[]>;
  answer: StaleResolution;
}

/**
 * The last answer for each state object: the engine's observe stage and the planner ask the same question of the
 * same values (an identity check of 10,000 entries: once is enough). Same inputs, same answer, since a state, a
 * live list and a desired list are never changed once made (a new state is a new object).
 */
const answered = new WeakMap<GovopsState, Asked>();

function sameQuestion(asked: Asked, live: StaleLive, desired: readonly DesiredResource[]): boolean {
  return (
    asked.desired.deref() === desired &&
    asked.integrations.deref() === live.integrations &&
    asked.webhooks.deref() === live.webhooks &&
    asked.dataSources?.deref() === live.dataSources
  );
}

/** Forget every entry whose recorded id now holds an item with another identity (or, for integrations, another type). */
export function forgetStale(state: GovopsState, live: StaleLive, desired: readonly DesiredResource[]): StaleResolution {
  const asked = answered.get(state);
  if (asked && sameQuestion(asked, live, desired)) return asked.answer;
  const answer = staleRecords(state, live, desired);
  answered.set(state, {
    integrations: new WeakRef(live.integrations),
    webhooks: new WeakRef(live.webhooks),
    dataSources: live.dataSources ? new WeakRef(live.dataSources) : undefined,
    desired: new WeakRef(desired),
    answer,
  });
  return answer;
}

function staleRecords(state: GovopsState, live: StaleLive, desired: readonly DesiredResource[]): StaleResolution {
  const checked = state.resources.filter(
    (r) => r.id !== '' && (r.kind === 'Integration' || r.kind === 'Webhook' || (r.kind === 'DataSource' && r.identity !== undefined && live.dataSources !== undefined)),
  );
  if (checked.length === 0) return { state, notes: [], forgotten: [] };
  const integrations = new Map(live.integrations.map((l) => [l.id, l]));
  const webhooks = new Map(live.webhooks.map((l) => [l.id, l]));
  // records that do not name their integration are the planner's: the one whose location holds the prefix
  const dataSources = new Map(attributeDataSources(live.dataSources ?? [], live.integrations, state.resources).map((l) => [l.id, l]));
  let byName: Map<string, DesiredResource> | undefined;
  const desiredByName = (): Map<string, DesiredResource> => (byName ??= new Map(desired.map((d) => [`${d.kind}\0${d.name}`, d])));
  const stale = new Set<ManagedResource>();
  const notes: PlanWarning[] = [];
  const forgotten: ForgottenRecord[] = [];
  for (const r of checked) {
    let now: string | undefined;
    let nowWebhook: LiveWebhook | undefined;
    let typeDiffers = false;
    if (r.kind === 'Integration') {
      const l = integrations.get(r.id);
      // A type govops does not know at a recorded id is not forgotten: forgetting would plan the manifest as a
      // create beside it. The planner shows it as a type change that it never carries out (plan/integrations.ts).
      if (!l || !isIntegrationType(l.type)) continue;
      typeDiffers = r.type !== undefined && l.type !== r.type;
      if (!typeDiffers && r.identity === undefined && !desiredByName().has(`${r.kind}\0${r.name}`)) continue;
      now = liveIntegrationIdentity(l);
    } else if (r.kind === 'Webhook') {
      const l = webhooks.get(r.id);
      if (!l) continue;
      if (r.identity === undefined && !desiredByName().has(`${r.kind}\0${r.name}`)) continue;
      now = liveWebhookIdentity(l, state.fingerprintKey);
      nowWebhook = l;
    } else {
      const l = dataSources.get(r.id);
      if (!l) continue;
      now = dataSourceKey(l.integrationId, l.prefix);
    }
    // (the manifests by name only for an entry without a recorded identity: most have one)
    const recorded = typeDiffers ? undefined : recordedIdentity(r, desiredByName, state.fingerprintKey);
    if (!typeDiffers && (recorded === undefined || recorded === now)) continue;
    stale.add(r);
    const was = recorded !== undefined ? shown(recorded, r.kind, undefined, nowWebhook?.name) : `type ${r.type}`;
    const holds = shown(now, r.kind, nowWebhook);
    forgotten.push({ kind: r.kind, name: r.name, id: r.id, noun: NOUN[r.kind] ?? r.kind, holds, recorded: was });
    notes.push(
      warning(
        'stale-record',
        `${r.kind}/${r.name}: the recorded id ${r.id} now holds another ${NOUN[r.kind]} ` +
        `(${holds}; govops recorded ${was}): the record is stale and forgotten, the manifest is matched by its natural key ` +
        `and the item at id ${r.id} is left alone`,
        { kind: r.kind, name: r.name },
      ),
    );
  }
  if (stale.size === 0) return { state, notes: [], forgotten: [] };
  return { state: { ...state, resources: state.resources.filter((r) => !stale.has(r)) }, notes, forgotten };
}
