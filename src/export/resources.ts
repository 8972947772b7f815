/**
 * `govops export` core (pure but for the hashing of names and manual-step tokens): live integrations,
 * webhooks and data sources -> manifests, the secret variables they reference, and warnings for what cannot be
 * exported as it is. The CLI (src/cli/commands/export-action.ts) lists the live resources and writes the files.
 */
import type { LiveDataSource, LiveIntegration, LiveWebhook } from '../api/types.js';
import { acknowledgmentValue, MANUAL_STEP_ANNOTATION } from '../plan/acknowledgment.js';
import type { ConfigShapes } from '../plan/shape.js';
import type { ManagedResource } from '../state/types.js';
import { manualStepToken } from '../reconcile/manual-step-token.js';
import { displayHost, isConfigless, isIntegrationType, kindOf, naturalKey, SCRIPT_KINDS, type IntegrationType } from '../kinds/registry.js';
import type { DataSourceManifest, IntegrationManifest, Manifest, WebhookManifest } from '../manifests/types.js';
import { API_VERSION } from '../manifests/types.js';
import { asSet } from '../service/webhook-fields.js';
import { booleanFromWire } from '../util/boolean.js';
import { exportConfig, type ExportWarn } from './config.js';
import { liveIntegrationIdentity } from '../plan/stale.js';
import { attributeDataSources } from '../plan/data-sources.js';
import { dataSourceKey } from '../service/data-sources.js';
import { pathCarriesToken, webhookIdentity, webhookUrlCarriesCredential } from '../service/kinds.js';
import { assignNames, envName, NAME_PATTERN, MAX_NAME } from './names.js';
import { counted, agree } from '../util/plural.js';

export type ExportKind = Manifest['kind'];
export const EXPORT_KINDS: readonly ExportKind[] = ['Integration', 'Webhook', 'DataSource'];

/** One variable an exported manifest reads (`fromEnv`). */
export interface SecretVariable {
  name: string;
  /** `Kind/name` of the manifest. */
  resource: string;
  /** Where in the spec, e.g. `config.password`. */
  path: string;
}

export interface ExportedResource {
  kind: ExportKind;
  name: string;
  liveId: string;
  manifest: Manifest;
  /** Integrations: recorded in state on `--state`. */
  type?: string;
  autoBootstrap?: boolean;
  /**
   * What the live item at `liveId` is (plan/stale.ts): recorded in state on `--state`, as `state adopt` records it,
   * so that an id the service gives to another item later makes the entry stale instead of naming that item.
   */
  identity?: string;
  /** Data sources: the live id of the integration they are registered under. */
  integrationId?: string;
  /** What the file says about it above the manifest (comment lines, govops' own text). */
  notes?: readonly string[];
}

export interface ExportInput {
  integrations: readonly LiveIntegration[];
  webhooks: readonly LiveWebhook[];
  /** Undefined: the service has no data sources (or none were asked for). */
  dataSources?: readonly LiveDataSource[];
  shapes: ConfigShapes;
  /** The secret prefix (`--secret-env-prefix`, default GOVOPS_SECRET_). */
  envPrefix: string;
  /**
   * What govops' state records (`--state`): a data-source record that does not name its integration is attributed
   * as the planner attributes it, by the state's identity of it first (plan/data-sources.ts `attributeDataSources`).
   */
  recorded?: readonly ManagedResource[];
}

export interface ExportResult {
  resources: ExportedResource[];
  variables: SecretVariable[];
  /** What could not be exported: said whatever is selected (`warningsFor`). */
  warnings: string[];
  /** What to check about one exported resource (`Kind/name`): said when it is selected. */
  resourceWarnings: Array<{ resource: string; message: string }>;
  /** Exported webhooks (`Webhook/name`) whose actionType the service left out: one warning for those selected. */
  unknownActionType: string[];
}

/** The warnings of an export for the resources it writes (`selected`, by `Kind/name`; default every one). */
export function warningsFor(result: ExportResult, selected: (resource: string) => boolean = () => true): string[] {
  const out = [...result.warnings, ...result.resourceWarnings.filter((w) => selected(w.resource)).map((w) => w.message)];
  // The interface lets records leave actionType out (null): one warning for all, not one per webhook.
  const unknown = result.unknownActionType.filter(selected).map((r) => r.slice('Webhook/'.length));
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 5).join(', ') + (unknown.length > 5 ? `, and ${unknown.length - 5} more` : '');
    out.push(`${counted(unknown.length, 'webhook')} exported with actionType triggered: the service does not return ${agree(unknown.length, 'its', 'their')} actionType (${shown}); check it where a webhook receives`);
  }
  return out;
}

/** A live integration of a kind govops knows (the only ones exported). */
type KnownIntegration = LiveIntegration & { type: IntegrationType };

/** The readable base of an integration's name: what its natural key holds (host, workspace, name, dataset). */
function integrationBase(l: KnownIntegration): string {
  const c = l.config ?? {};
  return kindOf(l.type).exportName?.(c) ?? displayHost(l.type, c);
}

/** Every live resource as a manifest, named and with references for its credentials. */
export function exportResources(input: ExportInput): ExportResult {
  const out: ExportResult = { resources: [], variables: [], warnings: [], resourceWarnings: [], unknownActionType: [] };
  const nameById = exportIntegrations(input, out);
  exportWebhooks(input.webhooks, out);
  // a record that does not name its integration is the one the state records for it (when its location holds the
  // prefix), else the one whose location holds its prefix (the longest), as the planner reads it
  exportDataSources(attributeDataSources(input.dataSources ?? [], input.integrations, input.recorded ?? []), nameById, new Set(input.integrations.map((l) => l.id)), out);
  // the variables in the order of their manifests' names (then as the config lists them)
  const order = (v: SecretVariable): string => v.resource;
  out.variables.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  return out;
}

/** Live resources in the order of their ids (names are assigned in that order: stable across runs). */
function byId<T extends { id: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Integrations as manifests, their credentials as `fromEnv` references. Returns the manifest names by live id. */
function exportIntegrations(input: ExportInput, out: ExportResult): Map<string, string> {
  const sorted = byId(input.integrations);
  const integrations = sorted.filter((l): l is KnownIntegration => isIntegrationType(l.type));
  // A type govops does not know (another team's kind, a later release's) has no manifest schema: left out, in one
  // warning for all of them (their data sources are left out as under any integration not exported).
  const unknown = sorted.filter((l) => !isIntegrationType(l.type));
  if (unknown.length > 0) {
    const listed = unknown.map((l) => `id ${l.id} (type ${JSON.stringify(l.type)})`).join(', ');
    out.warnings.push(`${counted(unknown.length, 'integration')} not exported: govops does not know ${agree(unknown.length, 'its', 'their')} type: ${listed}`);
  }
  const names = assignNames(
    integrations.map((l) => ({ key: naturalKey(l.type, l.config), base: integrationBase(l), fallback: l.type, id: l.id })),
  );
  const usedVars = new Set<string>();
  const nameById = new Map<string, string>();
  integrations.forEach((live, i) => {
    const name = names[i]!;
    nameById.set(live.id, name);
    const resource = `Integration/${name}`;
    const ref = (path: readonly string[]): Record<string, unknown> => {
      let v = envName(input.envPrefix, [name, ...path]);
      for (let n = 2; usedVars.has(v); n++) v = `${envName(input.envPrefix, [name, ...path])}_${n}`;
      usedVars.add(v);
      out.variables.push({ name: v, resource, path: ['config', ...path].join('.') });
      return { fromEnv: v };
    };
    const warn = (path: string, why: string): void => void out.resourceWarnings.push({ resource, message: `${resource} (id ${live.id}) ${path}: ${why}` });
    const manifest = integrationManifest(live, name, input.shapes, ref, warn);
    if (live.status !== 'enabled') out.resourceWarnings.push({ resource, message: `${resource} (id ${live.id}) is ${live.status} in the service: exported as it is configured` });
    out.resources.push({ kind: 'Integration', name, liveId: live.id, manifest, type: live.type, autoBootstrap: live.autoBootstrap, identity: liveIntegrationIdentity(live) });
  });
  return nameById;
}

function integrationManifest(
  live: KnownIntegration,
  name: string,
  shapes: ConfigShapes,
  ref: (path: readonly string[]) => Record<string, unknown>,
  warn: ExportWarn,
): IntegrationManifest {
  const type: IntegrationType = live.type;
  const spec: IntegrationManifest['spec'] = { type };
  if (!isConfigless(type)) {
    spec.autoBootstrap = booleanFromWire(live.autoBootstrap) === true;
    const config = exportConfig(shapes, type, live.config, ref, warn);
    if (config) spec.config = config;
  }
  const manifest: IntegrationManifest = { apiVersion: API_VERSION, kind: 'Integration', metadata: { name }, spec };
  // The integration exists: the platform script of its configuration ran. The manifest says so, so the plan
  // does not wait for it (and recreating it after a deletion in the service needs no new acknowledgment).
  if (spec.autoBootstrap === false && SCRIPT_KINDS.create.has(type)) {
    manifest.metadata.annotations = {
      [MANUAL_STEP_ANNOTATION]: acknowledgmentValue([{ phase: 'create', token: manualStepToken('create', type, spec.config) }]),
    };
  }
  return manifest;
}

/**
 * Webhooks: the name is the identity, so it cannot be changed. A name that is a manifest name is the metadata.name;
 * any other (`Slack Alerts`) is kept as `spec.name`, under a metadata.name made of it by the rule of other exported
 * names (names.ts), which never takes a name a webhook has as it is.
 */
function exportWebhooks(webhooks: readonly LiveWebhook[], out: ExportResult): void {
  const seen = new Map<string, string>();
  const kept: LiveWebhook[] = [];
  for (const w of byId(webhooks)) {
    if (w.name === '') {
      out.warnings.push(`webhook (id ${w.id}) not exported: its name is empty, which a manifest cannot give (spec.name is a non-empty string)`);
      continue;
    }
    // A webhook's url cannot be a secret reference: one that carries a credential would be committed in clear.
    // Left out (the credential can move to the webhook's secret); a token in the path cannot move: see below.
    if (typeof w.url === 'string' && webhookUrlCarriesCredential(w.url)) {
      out.warnings.push(
        `webhook ${w.name} (id ${w.id}) not exported: its url carries a credential (userinfo, or a token or key in its query), which a manifest would hold in clear (a webhook url cannot be a secret reference); move the credential out of the url (the webhook's secret), or write its manifest by hand where it may be kept`,
      );
      continue;
    }
    const first = seen.get(w.name);
    if (first !== undefined) {
      out.warnings.push(`webhook ${w.name} (id ${w.id}) not exported: a second webhook of that name (id ${first} is exported); govops plan reports the duplicate`);
      continue;
    }
    seen.set(w.name, w.id);
    kept.push(w);
  }
  const isManifestName = (name: string): boolean => NAME_PATTERN.test(name) && name.length <= MAX_NAME;
  // A valid name sorts first (key `0|`), so it keeps itself when a sanitised one comes out the same.
  const names = assignNames(kept.map((w) => ({ key: `${isManifestName(w.name) ? 0 : 1}|${w.name}`, base: w.name, fallback: 'webhook', id: w.id })));
  kept.forEach((w, i) => {
    const name = names[i]!;
    const resource = `Webhook/${name}`;
    if (w.actionType !== 'receive' && w.actionType !== 'triggered') out.unknownActionType.push(resource);
    // A chat webhook's url is its own credential, the token in its path (Slack, Discord, Teams, Mattermost): it cannot
    // move out of the url (into the webhook's secret) nor be a secret reference, so it is written as it is, with a
    // warning and a note in the file: left out, the webhook could not be exported at all (docs/decisions.md).
    const tokenInPath = typeof w.url === 'string' && pathCarriesToken(w.url);
    if (tokenInPath) {
      out.resourceWarnings.push({
        resource,
        message: `${resource} (id ${w.id}) url: written as it is: its path holds a token, the webhook's credential (a chat webhook: whoever reads the url can post to it), and a webhook url cannot be a secret reference; commit the file only where that url may be kept, or leave the webhook out (--select)`,
      });
    }
    out.resources.push({
      kind: 'Webhook',
      name,
      liveId: w.id,
      manifest: webhookManifest(w, name),
      identity: webhookIdentity(w.name, w.url), // in clear here: the state records it keyed (export-action.ts)
      ...(tokenInPath ? { notes: TOKEN_IN_PATH_NOTE } : {}),
    });
  });
}

/** The note above a webhook whose url holds its credential (`pathCarriesToken`). */
const TOKEN_IN_PATH_NOTE: readonly string[] = [
  'Its url is its credential (a token in its path: whoever reads it can post to the webhook), written as it is:',
  'a webhook url cannot be a secret reference. Commit this file only where that url may be kept.',
];

/** A webhook as a manifest; its events as the plan compares them (a set: a repeat the service keeps is written once). */
function webhookManifest(w: LiveWebhook, name: string): WebhookManifest {
  const actionType = w.actionType === 'receive' ? 'receive' : 'triggered';
  return {
    apiVersion: API_VERSION,
    kind: 'Webhook',
    metadata: { name },
    spec: {
      ...(name === w.name ? {} : { name: w.name }),
      url: w.url,
      global: booleanFromWire(w.global) === true,
      notificationType: asSet(w.notificationType),
      actionType,
    },
  };
}

/** Data sources: named after their dataSourceName, registered under their integration's manifest. */
function exportDataSources(
  dataSources: readonly LiveDataSource[],
  nameById: ReadonlyMap<string, string>,
  liveIds: ReadonlySet<string>,
  out: ExportResult,
): void {
  const placed = byId(dataSources).filter((d) => {
    if (nameById.has(d.integrationId)) return true;
    const where = liveIds.has(d.integrationId) ? 'is not exported' : 'is not among the live integrations';
    out.warnings.push(`data source ${JSON.stringify(d.dataSourceName)} (id ${d.id}) not exported: its integration ${d.integrationId ? `(id ${d.integrationId}) ` : ''}${where}`);
    return false;
  });
  const names = assignNames(placed.map((d) => ({ key: `${d.integrationId}|${d.prefix}`, base: d.dataSourceName, fallback: 'data-source', id: d.id })));
  placed.forEach((d, i) => {
    const name = names[i]!;
    const manifest: DataSourceManifest = {
      apiVersion: API_VERSION,
      kind: 'DataSource',
      metadata: { name },
      spec: { integration: nameById.get(d.integrationId)!, dataSourceName: d.dataSourceName, prefix: d.prefix },
    };
    out.resources.push({ kind: 'DataSource', name, liveId: d.id, manifest, identity: dataSourceKey(d.integrationId, d.prefix), integrationId: d.integrationId });
  });
}
