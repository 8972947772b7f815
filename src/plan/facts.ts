/**
 * The facts a saved plan was computed from (`govops plan --out FILE`), and how they are compared when the plan
 * is applied (`govops apply FILE`). Pure: the hashing is injected. Every value is a keyed fingerprint under the
 * state's key (HMAC-SHA256), never a value: a plan file holds no secret, and without the state file its
 * fingerprints cannot be checked against guesses.
 *
 * - `manifests`: every manifest as written (secret references, not their values), by `Kind/name`;
 * - `secrets`: the fingerprints of every resolved secret value, by `Kind/name` and body path;
 * - `state`: the govops state entry of every resource the plan touches (an apply in between changes it);
 * - `live`: the live resource every change touches, normalised as the planner compares it (src/plan/shape.ts),
 *   field by field, so a service that echoes a field differently does not make a plan stale, and a change made
 *   in the service since is named by its path. Ignored fields (govops/ignore-fields) are left out. An integration
 *   the plan deletes or replaces also has `dataSources`: the ids of the live data sources under it (when listed),
 *   which the service deletes with it.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import type { Manifest } from '../manifests/types.js';
import type { GovopsState } from '../state/types.js';
import { firstBy } from '../util/multimap.js';
import { isPlainObject } from '../util/object.js';
import { canonicalJson } from './diff.js';
import { configPaths, withoutPaths } from './ignore.js';
import { actionable } from './planner.js';
import { comparable, type ConfigShapes } from './shape.js';
import type { DesiredResource, Hashing, Plan, PlanChange } from './types.js';
import { WEBHOOK_FIELD_NAMES, comparableWebhookField, webhookFieldRule } from '../service/webhook-fields.js';

/** One live resource a change touches: its id and its fields' fingerprints, or `{}` when there is none. */
export interface LiveFact {
  id?: string;
  fields?: Record<string, string>;
}

export interface PlanFacts {
  /** Identifies the state's fingerprint key (a digest of it): a recreated state voids every fingerprint. */
  keyId: string;
  manifests: Record<string, string>;
  secrets: Record<string, Record<string, string>>;
  state: Record<string, string | null>;
  live: Record<string, LiveFact>;
}

export interface FactInput {
  manifests: readonly Manifest[];
  desired: readonly DesiredResource[];
  state: GovopsState;
  /** `dataSources`: listed only when data sources are in play (absent: none are looked at). */
  live: { integrations: readonly LiveIntegration[]; webhooks: readonly LiveWebhook[]; dataSources?: readonly LiveDataSource[] };
  shapes: ConfigShapes;
  hashing: Hashing;
}

const keyOf = (kind: string, name: string): string => `${kind}/${name}`;

/** The key of a touched resource: `Kind/name`, and for an extra webhook copy `Kind/name@id`. */
export function changeKey(c: PlanChange): string {
  return c.duplicateOf !== undefined ? `${keyOf(c.resourceKind, c.name)}@${c.liveId}` : keyOf(c.resourceKind, c.name);
}

export function keyIdOf(fingerprintKey: string, hashing: Hashing): string {
  return hashing.digest(`govops-fingerprint-key-id\0${fingerprintKey}`).slice(0, 16);
}

/** Dotted leaves of a value (arrays and scalars are leaves). */
function leaves(prefix: string, value: unknown, out: Record<string, unknown>): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(prefix ? `${prefix}.${k}` : k, v, out);
  } else if (value !== undefined) out[prefix] = value;
}

function integrationFields(l: LiveIntegration, d: DesiredResource | undefined, shapes: ConfigShapes): Record<string, unknown> {
  const ignored = d?.kind === 'Integration' ? configPaths(d.ignoreFields) : [];
  const out: Record<string, unknown> = { type: l.type, autoBootstrap: l.autoBootstrap ?? null, status: l.status };
  leaves('config', withoutPaths(comparable(shapes, l.type, l.config), ignored), out);
  return out;
}

/** The live fields of a webhook the facts fingerprint (every compared field, from its one list). */
export function webhookFields(l: LiveWebhook, d: DesiredResource | undefined): Record<string, unknown> {
  const ignored = new Set(d?.kind === 'Webhook' ? (d.ignoreFields ?? []) : []);
  const out: Record<string, unknown> = {};
  for (const f of WEBHOOK_FIELD_NAMES) {
    if (!ignored.has(f)) out[f] = comparableWebhookField(webhookFieldRule(f), (l as unknown as Record<string, unknown>)[f]);
  }
  return out;
}

/** The live resources by id, per kind: looked up once per touched change. */
interface LiveById {
  integrations: ReadonlyMap<string, LiveIntegration>;
  webhooks: ReadonlyMap<string, LiveWebhook>;
  dataSources: ReadonlyMap<string, LiveDataSource>;
  /** The ids of the live data sources under each integration id; absent when data sources were not listed. */
  dataSourcesOf?: ReadonlyMap<string, readonly string[]>;
}

function liveFact(
  c: PlanChange,
  id: string | undefined,
  live: LiveById,
  input: Pick<FactInput, 'shapes' | 'hashing'>,
  desired: ReadonlyMap<string, DesiredResource>,
): LiveFact {
  if (id === undefined) return {};
  const d = desired.get(keyOf(c.resourceKind, c.name));
  let fields: Record<string, unknown>;
  if (c.resourceKind === 'Integration') {
    const raw = live.integrations.get(id);
    if (!raw) return {};
    fields = integrationFields(raw, d, input.shapes);
    // its delete (a replace's too) deletes every data source under it, ours or not (the service cascades): one
    // registered since the plan, which the plan's cascade-delete warning did not name, makes the plan stale (a blocked
    // delete deletes nothing, and has no such warning)
    if ((c.action === 'delete' || c.action === 'replace') && !c.blocked && live.dataSourcesOf) fields.dataSources = live.dataSourcesOf.get(id) ?? [];
  } else if (c.resourceKind === 'Webhook') {
    const raw = live.webhooks.get(id);
    if (!raw) return {};
    fields = webhookFields(raw, d);
  } else {
    // Data sources: their ids are their own (a webhook may share one), and they have no update, only these.
    const raw = live.dataSources.get(id);
    if (!raw) return {};
    fields = { integrationId: raw.integrationId, dataSourceName: raw.dataSourceName, prefix: raw.prefix };
  }
  const fps: Record<string, string> = {};
  for (const k of Object.keys(fields).sort()) fps[k] = input.hashing.fingerprint(canonicalJson(fields[k]));
  return { id, fields: fps };
}

/** The ids of the live data sources under each integration id, sorted. */
function dataSourceIdsByIntegration(list: readonly LiveDataSource[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of list) {
    const ids = out.get(d.integrationId);
    if (ids) ids.push(d.id);
    else out.set(d.integrationId, [d.id]);
  }
  for (const ids of out.values()) ids.sort();
  return out;
}

/**
 * The facts of a plan. `ids` gives, per touched change, the live id to look at: at plan time the plan's own
 * ids; when a saved plan is checked, the saved ids (and for a planned create, whatever now matches it).
 */
export function planFacts(plan: Plan, input: FactInput, ids?: (c: PlanChange) => string | undefined): PlanFacts {
  const { hashing } = input;
  const desired = new Map(input.desired.map((d) => [keyOf(d.kind, d.name), d]));
  const manifests: Record<string, string> = {};
  for (const m of input.manifests) manifests[keyOf(m.kind, m.metadata.name)] = hashing.fingerprint(canonicalJson(m));
  const secrets: Record<string, Record<string, string>> = {};
  for (const d of input.desired) {
    const fps: Record<string, string> = { ...d.fingerprints };
    // The delete payload's values too (resolved secrets), keyed like the state's fingerprints.
    if (d.kind === 'Integration' && d.deleteCredentials) {
      const dc: Record<string, unknown> = {};
      leaves('deleteCredentials', d.deleteCredentials, dc);
      for (const [p, v] of Object.entries(dc)) fps[p] = hashing.fingerprint(canonicalJson(v));
    }
    if (Object.keys(fps).length) secrets[keyOf(d.kind, d.name)] = sorted(fps);
  }
  const state: Record<string, string | null> = {};
  const live: Record<string, LiveFact> = {};
  const entries = firstBy(input.state.resources, (r) => keyOf(r.kind, r.name));
  const liveById: LiveById = {
    integrations: firstBy(input.live.integrations, (l) => l.id),
    webhooks: firstBy(input.live.webhooks, (l) => l.id),
    dataSources: firstBy(input.live.dataSources ?? [], (l) => l.id),
    ...(input.live.dataSources ? { dataSourcesOf: dataSourceIdsByIntegration(input.live.dataSources) } : {}),
  };
  for (const c of decided(plan)) {
    for (const name of c.renamedFrom !== undefined ? [c.name, c.renamedFrom] : [c.name]) {
      const entry = entries.get(keyOf(c.resourceKind, name));
      state[keyOf(c.resourceKind, name)] = entry ? hashing.fingerprint(canonicalJson(entry)) : null;
    }
    live[changeKey(c)] = liveFact(c, ids ? ids(c) : c.liveId, liveById, input, desired);
  }
  return { keyId: keyIdOf(input.state.fingerprintKey, hashing), manifests: sorted(manifests), secrets: sorted(secrets), state: sorted(state), live: sorted(live) };
}

function sorted<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function differingKeys<T>(a: Record<string, T>, b: Record<string, T>): { added: string[]; removed: string[]; changed: string[] } {
  const added = Object.keys(b).filter((k) => !(k in a));
  const removed = Object.keys(a).filter((k) => !(k in b));
  const changed = Object.keys(a).filter((k) => k in b && canonicalJson(a[k]) !== canonicalJson(b[k]));
  return { added, removed, changed };
}

/**
 * A govops state entry forgotten since the plan because its recorded id now names another resource (a service that
 * reuses ids: plan/stale.ts), by `Kind/name`: its state fact is gone and the live fact at its id is another
 * resource's, which is said as that, not as "state changed" and a field change of the same resource.
 */
export interface ReusedId {
  /** The id the plan was made against. */
  id: string;
  /** The sentence that says what changed and what to do. */
  message: string;
}

/**
 * What differs between the facts a plan was made from and the facts now, as sentences naming the resource and
 * the field (empty: nothing differs). `reused`: entries forgotten since as stale (their id reused), by `Kind/name`.
 */
export function compareFacts(saved: PlanFacts, now: PlanFacts, reused: ReadonlyMap<string, ReusedId> = new Map()): string[] {
  if (saved.keyId !== now.keyId) {
    return ['the state file is not the one the plan was made with (its fingerprint key differs): plan again with this state'];
  }
  const out: string[] = [];
  const m = differingKeys(saved.manifests, now.manifests);
  for (const k of m.changed) out.push(`manifest ${k} changed`);
  for (const k of m.added) out.push(`manifest ${k} was added`);
  for (const k of m.removed) out.push(`manifest ${k} was removed`);
  for (const k of [...new Set([...Object.keys(saved.secrets), ...Object.keys(now.secrets)])].sort()) {
    const s = differingKeys(saved.secrets[k] ?? {}, now.secrets[k] ?? {});
    const paths = [...s.changed, ...s.added, ...s.removed].sort();
    if (paths.length) out.push(`secret ${paths.join(', ')} of ${k} changed (its fingerprint differs)`);
  }
  const reusedIds = new Set<string>();
  for (const k of Object.keys(saved.state)) {
    if (k in now.state && saved.state[k] === now.state[k]) continue;
    const r = reused.get(k);
    if (r) {
      out.push(r.message);
      reusedIds.add(`${k.slice(0, k.indexOf('/'))}\0${r.id}`);
    } else out.push(`govops state of ${k} changed since the plan (another apply?)`);
  }
  for (const k of Object.keys(saved.live)) {
    const was = saved.live[k]!;
    const is = now.live[k] ?? {};
    // the resource at the id is another one: said with its state entry above, not as a change of its fields
    if (was.id !== undefined && was.id === is.id && reusedIds.has(`${k.slice(0, k.indexOf('/'))}\0${was.id}`)) continue;
    if (was.id === undefined && is.id !== undefined) out.push(`${k} now exists in the service (id ${is.id}); the plan did not expect it`);
    else if (was.id !== undefined && is.id === undefined) out.push(`${k} (id ${was.id}) is gone from the service`);
    else if (was.id !== is.id) out.push(`${k} is now live id ${is.id}, the plan was made against id ${was.id}`);
    else {
      const f = differingKeys(was.fields ?? {}, is.fields ?? {});
      const paths = [...f.changed, ...f.added, ...f.removed].sort();
      if (paths.length) out.push(`${k} (id ${was.id}) changed in the service since the plan: ${paths.join(', ')}`);
    }
  }
  return out;
}

/**
 * The changes a saved plan stands for: what apply would write or record. A wait for an integration still creating or
 * editing (`settle`) is none: its transition ending between `plan --out` and `apply FILE` does not make the plan stale
 * (an error status it ended in does: the fix by PUT is a change the saved plan does not have).
 */
function decided(plan: Plan): PlanChange[] {
  return actionable(plan).filter((c) => c.action !== 'settle');
}

/** The part of a change that decides what apply does (not its wording): equal for an unchanged plan. */
function gist(c: PlanChange): unknown {
  return {
    key: changeKey(c),
    action: c.action,
    adopt: c.adopt,
    liveId: c.liveId ?? null,
    changes: c.changes.map((f) => ({ path: f.path, sensitive: f.sensitive, forcesReplace: f.forcesReplace })),
    blocked: c.blocked !== undefined,
    renamedFrom: c.renamedFrom ?? null,
    goneFromService: c.goneFromService ?? false,
    deleteNeedsCredentials: c.deleteNeedsCredentials ?? false,
    notComparable: c.notComparable ?? null,
  };
}

/** A change's action as the refusal names it: `adopt and update` for an adoption that also edits. */
function actionName(c: PlanChange): string {
  return c.adopt && c.action !== 'adopt' ? `adopt and ${c.action}` : c.action;
}

/** A change computed now that the saved plan does not have: its action, and why it is blocked when it is. */
function howNew(k: string, is: PlanChange): string {
  const blocked = is.blocked ? `, blocked (${is.blocked.code}): ${is.blocked.message}` : '';
  return `${k}: a change now that the saved plan does not have (${actionName(is)})${blocked}`;
}

/**
 * How a change computed now differs from the saved one, as specific as the facts allow: blocked now (its code and
 * why: a unique value someone took since, a manual step it now needs), another action; else in general terms.
 */
function howDiffers(k: string, was: PlanChange, is: PlanChange): string {
  if (is.blocked && !was.blocked) return `${k}: blocked now (${is.blocked.code}): ${is.blocked.message}`;
  if (is.blocked && was.blocked && is.blocked.code !== was.blocked.code) return `${k}: blocked now for another reason (${is.blocked.code}): ${is.blocked.message}`;
  if (!is.blocked && was.blocked) return `${k}: no longer blocked (the saved plan has it blocked: ${was.blocked.code})`;
  if (is.action !== was.action || is.adopt !== was.adopt) {
    return `${k}: the change computed now is ${actionName(is)}, the saved one ${actionName(was)}`;
  }
  return `${k}: the change computed now differs from the saved one`;
}

/** Changes that differ between the saved plan and the plan computed now, by key (empty: the same plan). */
export function comparePlans(saved: Plan, now: Plan): string[] {
  const entries = (p: Plan): Map<string, { change: PlanChange; gist: string }> => new Map(decided(p).map((c) => [changeKey(c), { change: c, gist: canonicalJson(gist(c)) }]));
  const a = entries(saved);
  const b = entries(now);
  const out: string[] = [];
  for (const [k, was] of a) {
    const is = b.get(k);
    if (is === undefined) out.push(`${k}: planned, but nothing to do now`);
    else if (is.gist !== was.gist) out.push(howDiffers(k, was.change, is.change));
  }
  for (const [k, is] of b) if (!a.has(k)) out.push(howNew(k, is.change));
  return out;
}
