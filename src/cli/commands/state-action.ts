/** What `govops state list|show|forget|adopt` do (loaded only when they run; declared in state.ts). */
import type { Command } from 'commander';
import { liveIntegrationIdentity } from '../../plan/stale.js';
import { ApiError, ErrorCode, UserError } from '../../errors.js';
import { integrationIdentity } from '../../kinds/registry.js';
import { DEFAULT_DATA_SOURCES_PATH, dataSourceKey } from '../../service/data-sources.js';
import { loadManifests } from '../../manifests/loader.js';
import { printable, printableData, printableJson } from '../../util/terminal.js';
import { cell, table } from '../../deliveries/render.js';
import { diagnosticLine } from '../../reconcile/report.js';
import { withStateLock } from '../../state/lock.js';
import { loadState, putResource, removeResource, saveState, stateExists } from '../../state/store.js';
import type { GovopsState, ManagedResource } from '../../state/types.js';
import type { Manifest } from '../../manifests/types.js';
import type { ServiceApi } from '../../api/client-types.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';
import { envSwitchOn } from '../boolean-env.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { stdinStream } from '../stdin.js';
import { describeStateLocation } from '../../state/location.js';
import { webhookServiceName } from '../../service/webhook-fields.js';
import { recordedWebhookIdentity, urlWithoutCredential, webhookIdentity, webhookIdentityParts } from '../../service/kinds.js';
import type { AdoptFlags, StateFlags } from './state.js';
import { withArticle } from '../../util/strings.js';
import { counted } from '../../util/plural.js';

/** Wait this long for another govops to finish with the state before giving up. */
const LOCK_WAIT_MS = 10_000;

const KINDS = ['Integration', 'DataSource', 'Webhook'] as const;
type Kind = (typeof KINDS)[number];

/** `Kind/name` (kind in any case) or a bare name. */
function parseName(text: string): { kind?: Kind; name: string } {
  const slash = text.indexOf('/');
  if (slash < 0) return { name: text };
  const kind = KINDS.find((k) => k.toLowerCase() === text.slice(0, slash).toLowerCase());
  if (!kind) throw new UserError(`${JSON.stringify(text)}: unknown kind ${JSON.stringify(text.slice(0, slash))}`, 'write Integration/NAME, DataSource/NAME or Webhook/NAME');
  return { kind, name: text.slice(slash + 1) };
}

/** The one state entry NAME designates. */
function find(state: GovopsState, text: string, statePath: string): ManagedResource {
  const { kind, name } = parseName(text);
  const hits = state.resources.filter((r) => r.name === name && (kind === undefined || r.kind === kind));
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new UserError(`${name} is managed as both ${hits.map((r) => `${r.kind}/${r.name}`).join(' and ')}`, `name one: ${hits.map((r) => `${r.kind}/${r.name}`).join(' or ')}`);
  }
  throw new UserError(`${kind ? `${kind}/` : ''}${name} is not managed by govops (not in ${describeStateLocation(statePath)})`, 'govops state list shows what is');
}

/** An entry as shown: everything but the fingerprint values (the secret paths are listed). */
function view(r: ManagedResource): Record<string, unknown> {
  const { secretFingerprints, ...rest } = r;
  const out: Record<string, unknown> = { ...rest, secretPaths: Object.keys(secretFingerprints).sort() };
  // A webhook's identity is recorded with its url's keyed fingerprint (a url can be a credential: `?access_token=`, a
  // chat webhook's token path); one read from an older state (the url in clear until the next save) is named without
  // a credential, as plan notes name it (urlWithoutCredential). The fingerprint is not shown, as no fingerprint is.
  const parts = r.kind === 'Webhook' ? webhookIdentityParts(r.identity) : undefined;
  if (parts) out.identity = JSON.stringify([parts.name, parts.url !== undefined ? urlWithoutCredential(parts.url) : '(url fingerprint)']);
  return out;
}

function notes(r: ManagedResource): string {
  return [
    r.pending ? `pending ${r.pending}` : '',
    r.suspended ? 'suspended' : '',
    r.explicitAdopt ? 'adopted by state adopt, not applied yet' : '',
  ]
    .filter(Boolean)
    .join(', ');
}

const json = (ctx: CliContext, value: unknown): void => {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/** Run `fn` on the state under its lock (reads too: never a state half-way through another writer's change). */
function locked<T>(statePath: string, fn: (state: GovopsState) => Promise<T>): Promise<T> {
  return withStateLock(statePath, async () => fn(await loadState(statePath)), { waitMs: LOCK_WAIT_MS });
}

/**
 * `locked`, for list, show and forget: a state that does not exist is an error naming where it was looked for (as
 * Terraform's `state list` says "No state file was found!"). Before, a mistyped `--state` or `--state-key` listed "No
 * resources are managed by govops", exit 0, and the lock made the typo's folders.
 */
async function lockedExisting<T>(statePath: string, fn: (state: GovopsState) => Promise<T>): Promise<T> {
  if (!(await stateExists(statePath))) {
    throw new UserError(
      `there is no govops state at ${describeStateLocation(statePath)}`,
      'check --state / GOVOPS_STATE (and --state-key for a PostgreSQL state); govops apply, export --state or state adopt create it',
    );
  }
  return locked(statePath, fn);
}

export async function listAction(flags: StateFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const state = await lockedExisting(flags.state, async (s) => s);
  const resources = [...state.resources].sort((a, b) => (`${a.kind}/${a.name}` < `${b.kind}/${b.name}` ? -1 : 1));
  if (ctx.options.output === 'json') {
    json(ctx, { formatVersion: 1, resources: resources.map(view) });
  } else if (resources.length === 0) {
    ctx.stdout.write(`No resources are managed by govops (${describeStateLocation(flags.state)}).\n`);
  } else {
    const rows = [['RESOURCE', 'ID', 'TYPE', 'ORIGIN', 'REVISION', 'LAST APPLIED', 'NOTES']];
    for (const r of resources) {
      rows.push([`${r.kind}/${r.name}`, r.id || '-', r.type ?? (r.kind === 'DataSource' ? 'data source' : 'webhook'), r.origin, cell(r.revision, 20), r.updatedAt, notes(r) || '-']);
    }
    ctx.stdout.write(await table(rows));
  }
  process.exitCode = EXIT.ok;
}

export async function showAction(name: string, flags: StateFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const r = await lockedExisting(flags.state, async (s) => find(s, name, flags.state));
  if (ctx.options.output === 'json') json(ctx, view(r));
  else {
    const v = printableData(view(r)); // ids from the service, names: no control character reaches the terminal
    const lines = [printable(`${r.kind}/${r.name}`)];
    for (const [k, value] of Object.entries(v)) {
      if (k === 'kind' || k === 'name') continue;
      lines.push(`  ${k}: ${Array.isArray(value) ? value.join(', ') || '-' : String(value)}`);
    }
    ctx.stdout.write(`${lines.join('\n')}\n`);
  }
  process.exitCode = EXIT.ok;
}

/**
 * The data sources the state records under an integration (by the live id in their identity, service/data-sources.ts
 * `dataSourceKey`): forgetting the integration leaves them managed, and once their manifests go with the integration's
 * (handed over to another team), the next apply --prune deletes them.
 */
function dataSourcesUnder(s: GovopsState, integration: ManagedResource): ManagedResource[] {
  if (integration.kind !== 'Integration' || integration.id === '') return [];
  return s.resources.filter((r) => r.kind === 'DataSource' && r.identity?.startsWith(`${integration.id}|`) === true);
}

export async function forgetAction(name: string, flags: StateFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  let children: ManagedResource[] = [];
  const r = await lockedExisting(flags.state, async (s) => {
    const entry = find(s, name, flags.state);
    children = dataSourcesUnder(s, entry);
    await saveState(flags.state, removeResource(s, entry.kind, entry.name));
    return entry;
  });
  if (children.length) {
    const names = children.map((d) => `DataSource/${d.name}`).sort();
    ctx.stderr.write(
      `warning: ${names.join(', ')} (under it) ${names.length === 1 ? 'is' : 'are'} still managed by govops: once ${names.length === 1 ? 'its manifest is' : 'their manifests are'} removed, ` +
        `the next apply --prune deletes ${names.length === 1 ? 'it' : 'them'} from the integration; to leave ${names.length === 1 ? 'it' : 'them'} too: ` +
        `${names.map((n) => `govops state forget ${n}`).join('; ')}\n`,
    );
  }
  if (ctx.options.output === 'json') json(ctx, { forgotten: view(r) });
  else {
    ctx.stdout.write(
      // the id is the service's (as the names are the state's): escaped for the terminal, as list and show print them
      `Forgot ${printable(`${r.kind}/${r.name}`)}${r.id ? ` (id ${printable(r.id)})` : ''}: govops no longer manages it; nothing changed in the service.\n` +
        // where the operator leaves adoption to state adopt (GOVOPS_NO_ADOPT: plan and apply --no-adopt), it is blocked
        `The next plan ${envSwitchOn('GOVOPS_NO_ADOPT') ? 'blocks it if a manifest matches it (GOVOPS_NO_ADOPT) until govops state adopt records it' : 'adopts it if a manifest matches it'}; ` +
          `without one it is left alone (never pruned).\n`,
    );
  }
  process.exitCode = EXIT.ok;
}

/** The one manifest NAME designates in the paths (loaded and validated). */
async function adoptedManifest(name: string, paths: string[], flags: AdoptFlags, ctx: CliContext): Promise<Manifest> {
  const wanted = parseName(name);
  const set = await loadManifests(paths.length ? paths : ['.'], { cwd: process.cwd(), secretScope: secretScopeFromFlags(flags), ...stdinStream(paths) });
  const errors = set.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length) {
    for (const d of errors) ctx.stderr.write(`${diagnosticLine(d)}\n`);
    throw new UserError(`the manifests have ${counted(errors.length, 'error')}: fix them first (govops validate)`);
  }
  const matching = set.manifests.filter((m) => m.manifest.metadata.name === wanted.name && (wanted.kind === undefined || m.manifest.kind === wanted.kind));
  if (matching.length === 0) throw new UserError(`no manifest ${name} in ${(paths.length ? paths : ['.']).join(', ')}`, 'state adopt binds a manifest to a live id: give the folder holding it');
  if (matching.length > 1) {
    const kinds = matching.map((m) => `${m.manifest.kind}/${wanted.name}`);
    throw new UserError(`${wanted.name} names manifests of several kinds (${kinds.join(', ')})`, `name one: ${kinds.join(' or ')}`);
  }
  return matching[0]!.manifest;
}

/** What the item at the id is now, as recorded (a later write by this id checks it is still that item). */
interface LiveItem {
  /**
   * The id as the service reports it: what the state records and what another entry's id is compared with (the
   * service reads `--id 0042` as 42; recorded as typed, it was a second entry for an item another one owns).
   */
  id: string;
  type?: string;
  autoBootstrap?: boolean;
  dataSourceIntegrationId?: string;
  identity?: string;
  /** What the operator is told once the entry is recorded (never before a refusal: it is about what the adoption does). */
  warning?: string;
}

/** The live item at the id, checked against the manifest (same type, same prefix); a missing one is a usage error. */
async function liveItem(api: ServiceApi, manifest: Manifest, id: string): Promise<LiveItem> {
  const kind = manifest.kind;
  try {
    if (manifest.kind === 'Integration') {
      const live = await api.getIntegration(id);
      if (live.type !== manifest.spec.type) {
        throw new UserError(`integration ${id} is ${withArticle(live.type)}, the manifest Integration/${manifest.metadata.name} ${withArticle(manifest.spec.type)}`, 'adopt a live integration of the same type');
      }
      // What cannot change while it lives (type, and the natural key's non-editable part): another one is another
      // integration, which the next plan would replace (delete, then create), as a data source of another prefix.
      const identity = liveIntegrationIdentity(live);
      const wanted = integrationIdentity(manifest.spec.type, manifest.spec.config);
      if (identity !== wanted) {
        throw new UserError(
          `integration ${live.id} is ${identity}, the manifest Integration/${manifest.metadata.name} ${wanted}; these cannot be changed in place`,
          'adopt the live integration the manifest describes (adopting this one would delete it to create the manifest\'s)',
        );
      }
      return { id: live.id, type: live.type, autoBootstrap: live.autoBootstrap, identity };
    }
    if (manifest.kind === 'DataSource') {
      const live = await api.getDataSource(id);
      // (integration, prefix) is a data source's identity: adopting another prefix would be a replace.
      if (live.prefix !== manifest.spec.prefix) {
        throw new UserError(
          `data source ${id} has the prefix ${live.prefix}, the manifest DataSource/${manifest.metadata.name} ${manifest.spec.prefix}`,
          'adopt the live data source with the same prefix (a prefix cannot be changed in place)',
        );
      }
      // what the stale-record check holds the id to (a record without it proves nothing of the item at its id)
      return { id: live.id, dataSourceIntegrationId: live.integrationId, ...(live.integrationId !== '' ? { identity: dataSourceKey(live.integrationId, live.prefix) } : {}) };
    }
    const live = await api.getWebhook(id);
    const wanted = webhookServiceName(manifest);
    // the name is the service's (someone else chose it): JSON-quoted, and escaped for the terminal (C1 controls, bidi)
    const warning = live.name !== wanted ? `webhook ${printable(id)} is named ${printableJson(live.name)}; the next plan replaces it to rename it ${printableJson(wanted)}` : undefined;
    return { id: live.id, identity: webhookIdentity(live.name, live.url), ...(warning ? { warning } : {}) }; // recorded keyed (adoptedEntry)
  } catch (err) {
    if (err instanceof ApiError && err.code === ErrorCode.apiNotFound) {
      throw new UserError(`no ${kind === 'DataSource' ? 'data source' : kind.toLowerCase()} with id ${id} in the service`, `list them: govops plan shows live ids; or GET ${kind === 'Integration' ? '/integrations' : kind === 'Webhook' ? '/webhooks' : `${DEFAULT_DATA_SOURCES_PATH} (or the --data-sources-path given)`}`);
    }
    throw err;
  }
}

/** The state entry binding the manifest to the id, refused when the state already says otherwise. */
function adoptedEntry(s: GovopsState, manifest: Manifest, item: LiveItem, statePath: string): ManagedResource {
  const { kind } = manifest;
  const { id } = item;
  const owner = s.resources.find((r) => r.kind === kind && r.id === id);
  if (owner && owner.name !== manifest.metadata.name) {
    throw new UserError(`${kind.toLowerCase()} ${id} is already managed as ${kind}/${owner.name}`, `govops state forget ${kind}/${owner.name} first`);
  }
  if (manifest.kind === 'DataSource') {
    const parent = s.resources.find((r) => r.kind === 'Integration' && r.name === manifest.spec.integration);
    // Nothing to hold the data source to without the integration's live id: another team's data source of the same
    // prefix (under their integration) was recorded, and the next plan replaced it (deleted it, with --allow-replace).
    if (!parent || parent.id === '') {
      const integration = manifest.spec.integration;
      throw new UserError(
        `Integration/${integration}, the integration of DataSource/${manifest.metadata.name}, is not recorded in ${describeStateLocation(statePath)}` +
          `${parent ? ' with a live id (its create has not landed yet)' : ''}: data source ${id} cannot be checked against it`,
        `record the integration first (govops state adopt Integration/${integration} --id ID, or govops apply), then adopt the data source`,
      );
    }
    if (item.dataSourceIntegrationId && parent.id !== item.dataSourceIntegrationId) {
      throw new UserError(
        `data source ${id} is registered under integration ${item.dataSourceIntegrationId}, the manifest's Integration/${parent.name} is id ${parent.id}`,
        'adopt a data source registered under the integration the manifest names',
      );
    }
  }
  const current = s.resources.find((r) => r.kind === kind && r.name === manifest.metadata.name);
  if (current && current.id !== id && current.id !== '') {
    throw new UserError(`${kind}/${current.name} is already managed as id ${current.id}`, `govops state forget ${kind}/${current.name} first, then adopt id ${id}`);
  }
  if (current && current.id === id && !current.explicitAdopt) {
    throw new UserError(`${kind}/${current.name} is already managed as id ${id}: nothing to adopt`);
  }
  const adopted: ManagedResource = {
    kind,
    name: manifest.metadata.name,
    id,
    origin: 'adopted',
    specHash: '',
    secretFingerprints: {},
    updatedAt: new Date().toISOString(),
    explicitAdopt: true,
  };
  if (item.type !== undefined) adopted.type = item.type;
  if (item.autoBootstrap !== undefined) adopted.autoBootstrap = item.autoBootstrap;
  // a webhook's url by its fingerprint under the state's key, never in clear (service/kinds.ts keyedWebhookIdentity)
  if (item.identity !== undefined) adopted.identity = kind === 'Webhook' ? recordedWebhookIdentity(item.identity, s.fingerprintKey) : item.identity;
  return adopted;
}

export async function adoptAction(name: string, paths: string[], flags: AdoptFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  parseName(name); // a bad kind is a usage error before anything is read
  const id = flags.id.trim();
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new UserError(`--id ${JSON.stringify(flags.id)} is not a live id`, 'the id as the service shows it, e.g. --id 42');
  const manifest = await adoptedManifest(name, paths, flags, ctx);
  const api = clientFromOptions(flags, ctx.logger);
  let entry: ManagedResource;
  try {
    const item = await liveItem(api, manifest, id);
    entry = await locked(flags.state, async (s) => {
      const adopted = adoptedEntry(s, manifest, item, flags.state);
      await saveState(flags.state, putResource(s, adopted));
      return adopted;
    });
    // only once recorded: a refused adoption says only why (the old code warned of a rename it then did not make)
    if (item.warning) ctx.stderr.write(`warning: ${item.warning}\n`);
  } finally {
    await api.close();
  }
  if (ctx.options.output === 'json') json(ctx, { adopted: view(entry) });
  else {
    ctx.stdout.write(
      // the id as the service answered it: escaped for the terminal
      `Recorded ${entry.kind}/${entry.name} as live id ${printable(entry.id)}. The next plan shows it as an adoption (<=) of that id, ` +
        `with any field that differs; apply records it (credentials it cannot compare are recorded, not sent, unless --resend-secrets).\n`,
    );
  }
  process.exitCode = EXIT.ok;
}
