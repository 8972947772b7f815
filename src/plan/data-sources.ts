/**
 * Planning object-store data sources (pure). A data source is identified by (integration, prefix): a desired
 * one is matched by the id in state, else by its integration's live id and its prefix. The service has no
 * update for data sources, so another name is a replace (delete + create, like webhooks). Its integration's
 * plan decides the rest: created in this plan → the data source is created after it; replaced → the service
 * deletes the data sources with the old integration, so they are registered again under the new one; not
 * `enabled` and not changed by this plan → the create waits (blocked). When the service cannot list data
 * sources (not supported), every DataSource manifest is a blocked create and one warning says why.
 */
import type { LiveDataSource, LiveIntegration } from '../api/types.js';
import { DATA_SOURCE_INTEGRATION_TYPE } from '../kinds/registry.js';
import { dataSourceKey, prefixUnderLocation } from '../service/data-sources.js';
import type { ManagedResource } from '../state/types.js';
import { guardAdoption, unownedIntegration } from './adoption.js';
import { matchResources, type Match, type MatchResult } from './match.js';
import { orphanWarning } from './orphans.js';
import { blocked, problem, reason, warning, type Blocked, type PlanProblem, type PlanWarning } from './notes.js';
import type { DesiredDataSource, FieldChange, PlanOptions, ResourceChange } from './types.js';
import { appendTo, groupBy } from '../util/multimap.js';
import { withoutTrailingSlashes } from '../util/strings.js';
import { counted } from '../util/plural.js';

export interface DataSourcePlanInput {
  desired: readonly DesiredDataSource[];
  /** The live data sources, or undefined when they could not be listed (`unsupported` says why). */
  live: readonly LiveDataSource[] | undefined;
  unsupported?: string;
  liveIntegrations: readonly LiveIntegration[];
  /** The plan's integration changes, by manifest name (made before the data sources'). */
  integrationChanges: ReadonlyMap<string, ResourceChange>;
  state: readonly ManagedResource[];
  options: PlanOptions;
}

export interface DataSourcePlan {
  changes: ResourceChange[];
  errors: PlanProblem[];
  warnings: PlanWarning[];
}

/**
 * Live records that do not say which integration they belong to are given the data-source host integration
 * whose cloudLocationPath holds their prefix (the longest one: locations are unique, one may nest in another).
 */
export function attributeDataSources(live: readonly LiveDataSource[], integrations: readonly LiveIntegration[], recorded: readonly ManagedResource[] = []): LiveDataSource[] {
  let ownerOf: ((prefix: string) => string | undefined) | undefined;
  const recordedOwner = recordedOwners(integrations, recorded);
  return live.map((d) => {
    if (d.integrationId !== '') return d;
    const mine = recordedOwner(d);
    if (mine !== undefined) return { ...d, integrationId: mine };
    ownerOf ??= locationOwners(integrations);
    const owner = ownerOf(d.prefix);
    return owner !== undefined ? { ...d, integrationId: owner } : d;
  });
}

/**
 * The integration govops' state records for a data source at this id and prefix (its identity, `integration|prefix`),
 * when that integration's location holds the prefix too: with a location nested in another's both hold it, and the
 * longest would give govops' own data source to the other integration (the plan then created it again every run,
 * refused: the prefix is registered).
 */
function recordedOwners(integrations: readonly LiveIntegration[], recorded: readonly ManagedResource[]): (d: LiveDataSource) => string | undefined {
  const identities = new Map<string, string>();
  for (const s of recorded) if (s.kind === 'DataSource' && s.identity !== undefined) identities.set(s.id, s.identity);
  if (identities.size === 0) return () => undefined;
  const locations = new Map<string, string>();
  for (const i of integrations) {
    if (i.type === DATA_SOURCE_INTEGRATION_TYPE && typeof i.config.cloudLocationPath === 'string') locations.set(i.id, i.config.cloudLocationPath);
  }
  return (d) => {
    const identity = identities.get(d.id);
    const bar = identity?.indexOf('|') ?? -1;
    if (identity === undefined || bar < 0 || identity.slice(bar + 1) !== d.prefix) return undefined;
    const integrationId = identity.slice(0, bar);
    const location = locations.get(integrationId);
    return location !== undefined && prefixUnderLocation(location, d.prefix) ? integrationId : undefined;
  };
}

interface Location {
  id: string;
  /** The cloudLocationPath's length: the longest location holding a prefix owns it. */
  length: number;
  /** Its place among the host integrations: the first of equally long ones owns it. */
  order: number;
}

/**
 * The owner of a prefix as `prefixUnderLocation` decides it, the longest location first, found through the
 * prefix's own leading parts (each part before a `/`) in a map of the locations: a scan of every location for each
 * record took 7.5 s at 10,000 + 10,000 (a service that omits the integration id; issue #26).
 */
function locationOwners(integrations: readonly LiveIntegration[]): (prefix: string) => string | undefined {
  const byBase = new Map<string, Location[]>();
  /** Locations compared as raw prefixes (`prefixUnderLocation`: only slashes, or a scheme such as `s3://`). */
  const raw: Array<Location & { location: string }> = [];
  let order = 0;
  for (const i of integrations) {
    if (i.type !== DATA_SOURCE_INTEGRATION_TYPE || typeof i.config.cloudLocationPath !== 'string') continue;
    const location = i.config.cloudLocationPath;
    const at: Location = { id: i.id, length: location.length, order: order++ };
    if (location === '') continue;
    const base = withoutTrailingSlashes(location);
    if (base === '' || base.endsWith(':')) raw.push({ ...at, location });
    else appendTo(byBase, base, at);
  }
  const better = (best: Location | undefined, l: Location): Location =>
    !best || l.length > best.length || (l.length === best.length && l.order < best.order) ? l : best;
  return (prefix) => {
    let best: Location | undefined;
    for (const l of raw) if (prefix.startsWith(l.location)) best = better(best, l);
    // a location holds the prefix when it is the prefix, or the prefix goes on after it with a `/`
    for (const l of byBase.get(prefix) ?? []) best = better(best, l);
    for (let i = prefix.indexOf('/'); i >= 0; i = prefix.indexOf('/', i + 1)) {
      for (const l of byBase.get(prefix.slice(0, i)) ?? []) best = better(best, l);
    }
    return best?.id;
  };
}

function creationFields(d: DesiredDataSource): FieldChange[] {
  return [
    { path: 'integration', after: d.body.integration, sensitive: false, forcesReplace: false },
    { path: 'dataSourceName', after: d.body.dataSourceName, sensitive: false, forcesReplace: false },
    { path: 'prefix', after: d.body.prefix, sensitive: false, forcesReplace: false },
  ];
}

/** Why a create under this integration cannot happen now (undefined: it can, after the integration's own task). */
function waitsFor(ic: ResourceChange, live: LiveIntegration | undefined): Blocked | undefined {
  const who = `Integration/${ic.name}`;
  if (ic.blocked && (ic.action === 'create' || ic.action === 'replace')) return blocked('waits-for-integration', `waits for ${who}, which is blocked: ${ic.blocked.message}`);
  if (ic.action === 'create' || ic.action === 'replace' || ic.action === 'update' || ic.action === 'settle') return undefined; // its task ends enabled
  if (!live) return blocked('waits-for-integration', `${who} does not exist in the service`);
  if (live.status !== 'enabled') return blocked('waits-for-integration', `${who} is ${live.status}: data sources are registered once it is enabled (the next run does it)`);
  return undefined;
}

function unsupportedPlan(input: DataSourcePlanInput): DataSourcePlan {
  const message = input.unsupported ?? 'data sources not supported by this service';
  const changes: ResourceChange[] = [];
  for (const d of input.desired) {
    const c: ResourceChange = {
      resourceKind: 'DataSource',
      name: d.name,
      action: d.deleteRequested ? 'noop' : 'create',
      adopt: false,
      changes: d.deleteRequested ? [] : creationFields(d),
      reasons: [],
      source: { ...d.source },
      integration: { name: d.body.integration },
    };
    if (!d.deleteRequested) c.blocked = blocked('data-sources-unsupported', 'the service has no data-source endpoints (see the warning)');
    changes.push(c);
  }
  const managed = input.state.filter((s) => s.kind === 'DataSource').length;
  const parts = [`${counted(input.desired.length, 'DataSource manifest')} not applied`];
  if (managed) parts.push(`${counted(managed, 'managed data source')} not checked`);
  return { changes, errors: [], warnings: [warning('data-sources-unsupported', `${message}: ${parts.join(', ')}`)] };
}

export function planDataSources(input: DataSourcePlanInput): DataSourcePlan {
  if (input.live === undefined) return unsupportedPlan(input);
  const live = attributeDataSources(input.live, input.liveIntegrations, input.state);
  const m = matchDataSources(input, live);
  const leaving = leavingIds(input, m);
  // by their integration's id, in the live order: grouped once (a scan of every data source for each integration
  // or each create was quadratic at 10,000 + 10,000; issue #26)
  const liveOf = groupBy(live, (d) => d.integrationId);
  const desired = planDesired(input, m, liveOf, leaving);
  const orphans = planOrphans(input, m);
  return {
    changes: [...desired.changes, ...orphans.changes],
    errors: [...m.errors, ...desired.errors],
    warnings: [...orphans.warnings, ...cascadeWarnings(input, m, liveOf)],
  };
}

/** Manifests matched to live data sources: by state id, else by their integration's live id and prefix. */
function matchDataSources(input: DataSourcePlanInput, live: LiveDataSource[]): MatchResult<LiveDataSource> {
  /** The live id a desired data source is registered under now, when its integration keeps its id. */
  const currentIntegrationId = (d: DesiredDataSource): string | undefined => {
    const ic = input.integrationChanges.get(d.body.integration);
    if (!ic || ic.action === 'create' || ic.action === 'delete' || (ic.action === 'replace' && !ic.blocked)) return undefined;
    return ic.liveId;
  };
  return matchResources<DesiredDataSource, LiveDataSource>({
    kind: 'DataSource',
    desired: [...input.desired],
    live,
    state: [...input.state],
    nameOf: (d) => d.name,
    keyOfDesired: (d) => {
      const id = currentIntegrationId(d);
      return id === undefined ? `\0new\0${d.name}` : dataSourceKey(id, d.body.prefix);
    },
    keyOfLive: (l) => dataSourceKey(l.integrationId, l.prefix),
  });
}

/**
 * Live data sources this plan removes (pruned, replaced, marked govops/delete, or matched elsewhere): their
 * names are free for a create by the time it runs (the create waits for the deletes, src/apply/dependencies.ts).
 */
function leavingIds(input: DataSourcePlanInput, m: MatchResult<LiveDataSource>): Set<string> {
  const leaving = new Set<string>();
  if (input.options.prune) for (const o of m.orphans) if (o.live && !o.state.explicitAdopt) leaving.add(o.live.id);
  for (const d of input.desired) {
    const match = m.matches.get(d.name);
    if (!match?.live) continue;
    const ic = input.integrationChanges.get(d.body.integration);
    const moved = ic !== undefined && match.state?.identity !== undefined && movedFields(d, match.live, ic, () => undefined).length > 0;
    if (d.deleteRequested || moved || match.live.dataSourceName !== d.body.dataSourceName || match.live.softDeleted) leaving.add(match.live.id);
  }
  return leaving;
}

/**
 * What the manifest changed of the data source's identity, for a live one matched by its recorded id: another
 * integration or another prefix is another data source (no update), so a replace: the recorded one is deleted, the
 * manifest's created. Empty when the live one is where the manifest says (under a replaced integration: the old id).
 */
function movedFields(d: DesiredDataSource, live: LiveDataSource, ic: ResourceChange, integrationName: (liveId: string) => string | undefined): FieldChange[] {
  const fields: FieldChange[] = [];
  // a record naming no integration that no location holds: its integration is not known, only its prefix is compared
  if (live.integrationId !== '' && live.integrationId !== ic.liveId) {
    const before = integrationName(live.integrationId) ?? `integration ${live.integrationId}`;
    fields.push({ path: 'integration', before, after: d.body.integration, sensitive: false, forcesReplace: true });
  }
  if (live.prefix !== d.body.prefix) fields.push({ path: 'prefix', before: live.prefix, after: d.body.prefix, sensitive: false, forcesReplace: true });
  return fields;
}

/** Each manifest's change, or an error when its integration is missing or deleted by this plan. */
function planDesired(
  input: DataSourcePlanInput,
  m: MatchResult<LiveDataSource>,
  liveOf: ReadonlyMap<string, readonly LiveDataSource[]>,
  leaving: ReadonlySet<string>,
): { changes: ResourceChange[]; errors: PlanProblem[] } {
  const changes: ResourceChange[] = [];
  const errors: PlanProblem[] = [];
  const liveIntegrations = new Map(input.liveIntegrations.map((i) => [i.id, i]));
  const integrationNames = new Map<string, string>();
  for (const ic of input.integrationChanges.values()) if (ic.liveId !== undefined) integrationNames.set(ic.liveId, ic.name);
  // --no-adopt: nothing is registered under an integration govops does not own
  const ownedIntegrations = new Set(input.options.noAdopt ? input.state.filter((s) => s.kind === 'Integration').map((s) => s.id) : []);
  for (const d of input.desired) {
    const ic = input.integrationChanges.get(d.body.integration);
    if (!ic) {
      errors.push(problem(`DataSource/${d.name}: no Integration manifest named ${d.body.integration}`, { kind: 'DataSource', name: d.name }));
      continue;
    }
    if (ic.action === 'delete' && !d.deleteRequested) {
      errors.push(integrationDeletedProblem(d, ic));
      continue;
    }
    const liveIntegration = ic.liveId !== undefined ? liveIntegrations.get(ic.liveId) : undefined;
    const nameTaken = (name: string): LiveDataSource | undefined =>
      (ic.liveId === undefined ? undefined : liveOf.get(ic.liveId))?.find((l) => l.dataSourceName === name && !leaving.has(l.id));
    let match = m.matches.get(d.name)!;
    let moved = match.live ? movedFields(d, match.live, ic, (id) => integrationNames.get(id)) : [];
    if (match.live && moved.length > 0 && match.state?.identity === undefined) {
      // The record holds no identity (an old state file): nothing says the item at its id is still govops' own
      // rather than another one given that id. Never deleted: the manifest's data source is created beside it.
      const l = match.live;
      const note = reason('not-owned', `the recorded id ${l.id} holds a data source at integration ${l.integrationId || '?'}, prefix ${l.prefix}, and the record says nothing of what govops registered there: left alone (never deleted); the manifest's is created`);
      match = { ...match, live: undefined, reasons: [...match.reasons, note] };
      moved = [];
    }
    const c = guardAdoption(planOne(d, match, ic, liveIntegration, input.options, nameTaken, moved), match, input.options);
    const unowned = unownedIntegration(c, ownedIntegrations, input.options);
    if (unowned) c.blocked = unowned;
    changes.push(c);
  }
  return { changes, errors };
}

/** A data source kept while this plan deletes its integration (the service would delete it too). */
function integrationDeletedProblem(d: DesiredDataSource, ic: ResourceChange): PlanProblem {
  return problem(
    `DataSource/${d.name} is registered under Integration/${ic.name}, which this plan deletes: remove the DataSource manifest (or mark it govops/delete) too`,
    { kind: 'DataSource', name: d.name },
    { kind: 'Integration', name: ic.name },
  );
}

/** State entries without a manifest: deleted with --prune (unless adopted explicitly), else warned of. */
function planOrphans(input: DataSourcePlanInput, m: MatchResult<LiveDataSource>): { changes: ResourceChange[]; warnings: PlanWarning[] } {
  const changes: ResourceChange[] = [];
  const warnings: PlanWarning[] = [];
  const integrationByLiveId = new Map<string, ResourceChange>();
  for (const ic of input.integrationChanges.values()) if (ic.liveId !== undefined) integrationByLiveId.set(ic.liveId, ic);
  for (const o of m.orphans) {
    if (o.state.explicitAdopt || !input.options.prune) {
      warnings.push(orphanWarning('DataSource', o.state, o.live !== undefined));
      continue;
    }
    const c: ResourceChange = { resourceKind: 'DataSource', name: o.state.name, action: 'delete', adopt: false, changes: [], reasons: [reason('no-manifest', 'no manifest any more (--prune)')] };
    if (o.live) {
      c.liveId = o.live.id;
      const owner = integrationByLiveId.get(o.live.integrationId);
      c.integration = { liveId: o.live.integrationId, ...(owner ? { name: owner.name } : {}) };
    } else {
      c.goneFromService = true;
      c.reasons.push(reason('gone-from-service', 'already gone from the service (or with its integration): only the state entry is removed'));
    }
    changes.push(c);
  }
  return { changes, warnings };
}

/** Deleting an integration deletes its data sources: say so for the ones govops does not manage. */
function cascadeWarnings(input: DataSourcePlanInput, m: MatchResult<LiveDataSource>, liveOf: ReadonlyMap<string, readonly LiveDataSource[]>): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  const claimed = new Set<string>([...input.state.filter((s) => s.kind === 'DataSource').map((s) => s.id)]);
  for (const match of m.matches.values()) if (match.live) claimed.add(match.live.id);
  for (const ic of input.integrationChanges.values()) {
    if (ic.blocked || ic.liveId === undefined || (ic.action !== 'delete' && ic.action !== 'replace')) continue;
    const others = (liveOf.get(ic.liveId) ?? []).filter((d) => !claimed.has(d.id));
    if (others.length) {
      warnings.push(
        warning(
          'cascade-delete',
          `Integration/${ic.name}: the ${ic.action} also deletes ${counted(others.length, 'data source')} govops does not manage (ids ${others.map((d) => d.id).join(', ')}): the service deletes data sources with their integration`,
          { kind: 'Integration', name: ic.name },
        ),
      );
    }
  }
  return warnings;
}

function planOne(
  d: DesiredDataSource,
  m: Match<LiveDataSource>,
  ic: ResourceChange,
  liveIntegration: LiveIntegration | undefined,
  options: PlanOptions,
  /** A live data source of the integration holding this name that this plan does not remove. */
  nameTaken: (name: string) => LiveDataSource | undefined,
  /** The manifest's integration or prefix is not the live one's (matched by its recorded id): `movedFields`. */
  moved: readonly FieldChange[] = [],
): ResourceChange {
  const integrationReplaced = ic.action === 'replace' && !ic.blocked;
  const keepsId = ic.action !== 'create' && !integrationReplaced && ic.liveId !== undefined;
  const c: ResourceChange = {
    resourceKind: 'DataSource',
    name: d.name,
    action: 'noop',
    adopt: m.adopt,
    changes: [],
    reasons: [...m.reasons],
    source: { ...d.source },
    integration: { name: d.body.integration, ...(keepsId ? { liveId: ic.liveId } : {}) },
  };
  if (m.renamedFrom) c.renamedFrom = m.renamedFrom;
  if (m.live && (!integrationReplaced || moved.length > 0)) c.liveId = m.live.id;
  if (d.deleteRequested) {
    c.reasons.push(reason('delete-requested', 'annotation govops/delete: "true"'));
    c.adopt = false;
    if (integrationReplaced) c.reasons.push(reason('follows-integration', 'its integration is replaced: the service deletes the data source with it'));
    else if (m.adopt || !m.state) c.reasons.push(reason('not-owned', 'not owned by govops (not in state): never deleted'));
    else if (!options.prune) c.reasons.push(reason('needs-prune', 'run with --prune to delete it'));
    else {
      c.action = 'delete';
      if (!m.live) c.goneFromService = true;
    }
    return c;
  }
  if (!m.live || (integrationReplaced && moved.length === 0)) {
    c.action = 'create';
    c.adopt = false;
    c.changes = creationFields(d);
    if (integrationReplaced) {
      c.reasons.push(reason('follows-integration', `Integration/${ic.name} is replaced and the service deletes its data sources with it: registered again under the new integration`));
    } else if (ic.action === 'create') {
      c.reasons.push(reason('follows-integration', `registered once Integration/${ic.name} is created and enabled`));
    }
    const wait = waitsFor(ic, liveIntegration);
    const taken = keepsId ? nameTaken(d.body.dataSourceName) : undefined;
    if (wait) c.blocked = wait;
    else if (taken) c.blocked = blocked('name-taken', `the name ${d.body.dataSourceName} is taken by data source ${taken.id} (${taken.prefix}) of Integration/${ic.name}, which govops does not delete: rename one of them`);
    return c;
  }
  if (moved.length > 0 || m.live.dataSourceName !== d.body.dataSourceName || m.live.softDeleted) {
    c.changes = [...moved];
    if (m.live.dataSourceName !== d.body.dataSourceName) {
      c.changes.push({ path: 'dataSourceName', before: m.live.dataSourceName, after: d.body.dataSourceName, sensitive: false, forcesReplace: true });
    }
    c.action = 'replace';
    if (m.live.softDeleted) {
      // the manifest keeps (or has again) a data source whose delete an interrupted run left half done: disabled, it is
      // no live data source; the delete is finished and the manifest's registered anew
      c.reasons.push(reason('soft-deleted', `an interrupted delete left data source ${m.live.id} soft-deleted (disabled): deleted for good, then registered again`));
    } else if (moved.length > 0) {
      c.reasons.push(reason('not-editable', `another ${moved.map((f) => f.path).join(' and ')} is another data source: replaced (delete + create, new id)`));
    } else c.reasons.push(reason('no-update', 'data sources have no update: replaced (delete + create, new id)'));
    const wait = waitsFor(ic, liveIntegration);
    // the name under the manifest's integration (the live one's own name is free: this replace deletes it first);
    // checked before anything is deleted: the create half refused (409) would leave the data source gone
    const taken = keepsId ? nameTaken(d.body.dataSourceName) : undefined;
    if (m.adopt && !options.allowReplace) {
      const what = moved.length > 0 ? `its ${moved.map((f) => f.path).join(' and ')} differ` : 'its name differs';
      c.blocked = blocked('replace-not-allowed', `adopting it means replacing a data source govops did not create (${what}): run with --allow-replace`);
    } else if (wait) c.blocked = wait;
    else if (taken) c.blocked = blocked('name-taken', `the name ${d.body.dataSourceName} is taken by data source ${taken.id} (${taken.prefix}) of Integration/${ic.name}, which govops does not delete: rename one of them`);
    return c;
  }
  if (m.adopt) c.action = 'adopt';
  return c;
}

/**
 * Data-source creates (and replaces) under an integration whose create or replace was blocked after the data sources
 * were planned (its unique value taken: unique-taken.ts, run once the plan is final) wait for it, as `waitsFor` makes
 * those under one blocked before: otherwise the plan shows them going ahead and the apply skips them. In place.
 */
export function blockUnderBlockedIntegrations(changes: readonly ResourceChange[]): void {
  const blockedCreates = new Map<string, ResourceChange>();
  for (const c of changes) if (c.resourceKind === 'Integration' && c.blocked && (c.action === 'create' || c.action === 'replace')) blockedCreates.set(c.name, c);
  if (blockedCreates.size === 0) return;
  for (const c of changes) {
    if (c.resourceKind !== 'DataSource' || c.blocked || (c.action !== 'create' && c.action !== 'replace')) continue;
    const ic = c.integration?.name === undefined ? undefined : blockedCreates.get(c.integration.name);
    if (ic) c.blocked = waitsFor(ic, undefined);
  }
}

/**
 * A targeted plan (`--only`) keeps some changes and leaves the others out; data sources and their integration
 * depend on each other, so: a data source create kept without its integration's create or replace (its live id
 * is known only once that runs), or without the update that fixes its failed status (createError, ...: the
 * service registers data sources only under an enabled integration), is blocked, naming the pattern to add; an integration delete or replace kept
 * without the changes of its managed data sources is applied (the service deletes them with it), with a
 * warning that a plan without --only settles them. Returns the kept changes (blocked ones copied) and warnings.
 */
export function targetDataSources(all: readonly ResourceChange[], kept: readonly ResourceChange[]): { changes: ResourceChange[]; warnings: PlanWarning[] } {
  const keptKeys = new Set(kept.map((c) => `${c.resourceKind}/${c.name}`));
  const integrations = new Map(all.filter((c) => c.resourceKind === 'Integration').map((c) => [c.name, c]));
  const warnings: PlanWarning[] = [];
  const changes = kept.map((c) => {
    if (c.resourceKind !== 'DataSource' || c.blocked || (c.action !== 'create' && c.action !== 'replace')) return c;
    const name = c.integration?.name;
    const ic = name === undefined ? undefined : integrations.get(name);
    if (!ic || keptKeys.has(`Integration/${ic.name}`)) return c;
    // its live id is known, but an update that fixes a failed status (createError, ...) is what makes it enabled:
    // left out, the integration stays as it is and the service refuses the data source (409)
    // (so is the end of a create or edit the service is still carrying out, which its `settle` waits for)
    const fix = ic.reasons.find((r) => (ic.action === 'update' && r.code === 'fix-status') || (ic.action === 'settle' && r.code === 'settling'));
    if (c.integration?.liveId !== undefined && !fix) return c;
    const what = fix ? `${ic.action}: ${fix.message}` : ic.action;
    return { ...c, blocked: blocked('integration-untargeted', `waits for Integration/${ic.name} (${what}), which this targeted plan leaves out: add --only Integration/${ic.name}`) };
  });
  // The data-source changes left out, by their integration's name and live id (grouped once: a targeted prune of
  // thousands of integrations scanned every change for each)
  const leftByName = new Map<string, ResourceChange[]>();
  const leftPrunesById = new Map<string, ResourceChange[]>();
  for (const c of all) {
    if (c.resourceKind !== 'DataSource' || keptKeys.has(`DataSource/${c.name}`)) continue;
    if (c.action !== 'noop' && c.integration?.name !== undefined) appendTo(leftByName, c.integration.name, c);
    if (c.action === 'delete' && c.integration?.liveId !== undefined) appendTo(leftPrunesById, c.integration.liveId, c);
  }
  for (const ic of kept) {
    if (ic.resourceKind !== 'Integration' || ic.blocked || (ic.action !== 'delete' && ic.action !== 'replace')) continue;
    const left = leftByName.get(ic.name) ?? [];
    const leftPrunes = ic.liveId !== undefined ? (leftPrunesById.get(ic.liveId) ?? []) : [];
    const names = [...new Set([...left, ...leftPrunes].map((c) => `DataSource/${c.name}`))].sort();
    if (names.length) {
      warnings.push(
        warning(
          'cascade-delete',
          `Integration/${ic.name}: its ${ic.action} also deletes ${names.join(', ')} (the service deletes data sources with their integration), left out of this targeted plan: a plan without --only settles them`,
          { kind: 'Integration', name: ic.name },
        ),
      );
    }
  }
  return { changes, warnings };
}
