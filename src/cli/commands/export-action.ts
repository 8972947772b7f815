/** What `govops export` does (loaded only when it runs; declared in export.ts). */
import path from 'node:path';
import type { Command } from 'commander';
import { DataSourcesUnsupportedError, UserError } from '../../errors.js';
import { EXPORT_KINDS, exportResources, warningsFor, type ExportedResource, type ExportKind } from '../../export/resources.js';
import { commitExport, ENV_TEMPLATE, prepareExport, renderExport, type PreparedExport } from '../../export/write.js';
import { configShapes } from '../../manifests/shapes.js';
import { parseTargets, targetMatcher, type Target } from '../../plan/target.js';
import { withStateLock } from '../../state/lock.js';
import { loadState, saveState } from '../../state/store.js';
import { describeStateLocation } from '../../state/location.js';
import type { GovopsState as State, ManagedResource } from '../../state/types.js';
import { printable } from '../../util/terminal.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom, EXIT } from '../context.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { envName } from '../../export/names.js';
import { isGovopsConfigEnv } from '../../manifests/secret-scope.js';
import type { ExportFlags } from './export.js';
import { recordedWebhookIdentity } from '../../service/kinds.js';
import { counted } from '../../util/plural.js';

const LOCK_WAIT_MS = 10_000;

function kindsOf(flags: ExportFlags): Set<ExportKind> {
  const wanted = (flags.kind ?? []).flatMap((k) => k.split(',')).map((k) => k.trim()).filter(Boolean);
  if (wanted.length === 0) return new Set(EXPORT_KINDS);
  const out = new Set<ExportKind>();
  for (const w of wanted) {
    const kind = EXPORT_KINDS.find((k) => k.toLowerCase() === w.toLowerCase());
    if (!kind) throw new UserError(`--kind ${JSON.stringify(w)}: not a kind`, 'the kinds are Integration, Webhook and DataSource');
    out.add(kind);
  }
  return out;
}

interface Selection {
  (r: ExportedResource): boolean;
  /** The patterns given, each with the flag's own text. */
  targets: ReadonlyArray<{ given: string; target: Target }>;
}

/** `--select NAME` or `--select Kind/NAME` (globs allowed), as --only targets. */
function selection(flags: ExportFlags): Selection | undefined {
  if (!flags.select?.length) return undefined;
  let targets: Target[];
  try {
    targets = parseTargets(flags.select.map((s) => (s.includes('/') ? s : `*/${s}`)));
  } catch (err) {
    throw new UserError(`--select: ${(err as Error).message.replace(/^--only /, '')}`, 'write NAME or Kind/NAME, e.g. --select finance-warehouse or --select "Webhook/pager-*"');
  }
  const match = targetMatcher(targets);
  return Object.assign((r: ExportedResource) => match.targeted(r.kind, r.name), { targets: targets.map((target, i) => ({ given: flags.select![i]!, target })) });
}

/**
 * Every `--select` pattern matches a resource of the kinds exported: a misspelled name exported nothing (or not the
 * resource asked for, beside others) and still said "Exported", exit 0. Checked before anything is written.
 */
function checkSelection(select: Selection, resources: readonly ExportedResource[]): void {
  const unmatched = select.targets.filter(({ target }) => !resources.some((r) => target.kind.test(r.kind) && target.name.test(r.name)));
  if (unmatched.length === 0) return;
  throw new UserError(
    `${unmatched.map(({ given }) => `--select ${given}`).join(', ')} matches no resource to export${unmatched.length > 1 ? ' (each)' : ''}: nothing written`,
    'names are those export gives (govops export --out /tmp/all lists them; with -o json, as JSON), of the kinds --kind asks for',
  );
}

/**
 * The state with the exported resources recorded as adopted, as `govops state adopt --id` does for one (pure).
 * Throws when one of them is already managed under another name or id: nothing is recorded then. The state's
 * entries are looked up by (kind, id) and (kind, name) in maps made once (each lookup scanned the state, and each
 * addition copied it: quadratic in an export of 10,000).
 */
function withAdoptions(state: State, resources: readonly ExportedResource[], now: string): { state: State; added: number } {
  const key = (kind: string, x: string): string => `${kind}\0${x}`;
  // the first entry of each id and of each name, as a scan in the state's order finds it
  const byId = new Map<string, ManagedResource>();
  const byName = new Map<string, ManagedResource>();
  const remember = (s: ManagedResource): void => {
    const i = key(s.kind, s.id);
    const n = key(s.kind, s.name);
    if (!byId.has(i)) byId.set(i, s);
    if (!byName.has(n)) byName.set(n, s);
  };
  for (const s of state.resources) remember(s);
  const added: ManagedResource[] = [];
  for (const r of resources) {
    const owner = byId.get(key(r.kind, r.liveId));
    if (owner && owner.name !== r.name) {
      throw new UserError(`${r.kind.toLowerCase()} ${r.liveId} is already managed as ${r.kind}/${owner.name}: nothing written`, `export without --state, or govops state forget ${r.kind}/${owner.name} first`);
    }
    const named = byName.get(key(r.kind, r.name));
    if (named && named.id !== r.liveId && named.id !== '') {
      throw new UserError(`${r.kind}/${r.name} is already managed as id ${named.id}: nothing written`, 'export into a state file of this service instance');
    }
    if (named) continue; // already managed as this id
    const entry: ManagedResource = {
      kind: r.kind,
      name: r.name,
      id: r.liveId,
      origin: 'adopted',
      specHash: '',
      secretFingerprints: {},
      updatedAt: now,
      explicitAdopt: true,
    };
    if (r.type !== undefined) entry.type = r.type;
    if (r.autoBootstrap !== undefined) entry.autoBootstrap = r.autoBootstrap;
    // a webhook's url by its fingerprint under this state's key, never in clear (service/kinds.ts keyedWebhookIdentity)
    if (r.identity !== undefined) entry.identity = r.kind === 'Webhook' ? recordedWebhookIdentity(r.identity, state.fingerprintKey) : r.identity;
    added.push(entry);
    remember(entry);
  }
  return { state: added.length ? { ...state, resources: [...state.resources, ...added] } : state, added: added.length };
}

/**
 * The data sources whose integration is not exported, registered under the name the state gives that integration
 * (by its live id) when it has one: the integration is then already in the repository under that name, which need
 * not be the one export derives from its natural key (docs/operator.md, "Importing one resource"). Named after
 * export's own name, the next plan refused the set: no Integration manifest of that name.
 */
function underOwnedIntegrations(resources: readonly ExportedResource[], state: State): ExportedResource[] {
  const exported = new Set(resources.filter((r) => r.kind === 'Integration').map((r) => r.liveId));
  const owners = new Map<string, string>();
  for (const s of state.resources) if (s.kind === 'Integration' && s.id !== '' && !s.pending && !owners.has(s.id)) owners.set(s.id, s.name);
  return resources.map((r) => {
    if (r.manifest.kind !== 'DataSource' || r.integrationId === undefined || exported.has(r.integrationId)) return r;
    const owner = owners.get(r.integrationId);
    if (owner === undefined || owner === r.manifest.spec.integration) return r;
    return { ...r, manifest: { ...r.manifest, spec: { ...r.manifest.spec, integration: owner } } };
  });
}

/**
 * Every check first (files, names, then the state's owners under its lock), then the files, then the state: a
 * refused export writes neither.
 */
async function writeAll(prepared: PreparedExport, statePath: string | undefined, resources: readonly ExportedResource[]): Promise<{ written: string[]; adopted: number }> {
  if (statePath === undefined || resources.length === 0) return { written: await commitExport(prepared), adopted: 0 };
  return withStateLock(
    statePath,
    async () => {
      const { state, added } = withAdoptions(await loadState(statePath), resources, new Date().toISOString());
      const written = await commitExport(prepared);
      await saveState(statePath, state);
      return { written, adopted: added };
    },
    { waitMs: LOCK_WAIT_MS },
  );
}

/**
 * The names export writes are the prefix, then the resource and field: under a prefix whose names are govops' own
 * configuration variables (GOVOPS_* but GOVOPS_SECRET_*), every reference would be one no manifest may read.
 */
function checkPrefix(prefix: string): void {
  if (!isGovopsConfigEnv(envName(prefix, ['x']))) return;
  throw new UserError(
    `--secret-env-prefix ${printable(prefix)}: the variables export would name under it are govops' own configuration variables (GOVOPS_*, except GOVOPS_SECRET_*), which manifests can never read: nothing written`,
    'leave the prefix out (GOVOPS_SECRET_), or give one outside GOVOPS_, e.g. --secret-env-prefix ACME_SECRET_',
  );
}

/** The notes on data sources exported without their integration (`renamed`: registered under the state's name for it). */
function dataSourceNotes(ctx: ReturnType<typeof contextFrom>, chosen: readonly ExportedResource[], selected: readonly ExportedResource[], names: ReadonlySet<string>, statePath: string | undefined): void {
  const renamed = new Set(chosen.filter((r, i) => r !== selected[i]).map((r) => r.name));
  for (const r of chosen) {
    if (r.manifest.kind !== 'DataSource' || names.has(`Integration/${r.manifest.spec.integration}`)) continue;
    const under = `Integration/${r.manifest.spec.integration}`;
    ctx.stderr.write(
      renamed.has(r.name)
        ? `note: DataSource/${r.name} is registered under ${under}, as ${printable(statePath === undefined ? '' : describeStateLocation(statePath))} names its integration (id ${printable(r.integrationId ?? '')}): keep it in the same set as that manifest\n`
        : `note: DataSource/${r.name} is registered under ${under}, which was not exported: keep its manifest beside this one\n`,
    );
  }
}

export async function exportAction(flags: ExportFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const kinds = kindsOf(flags);
  const select = selection(flags);
  const scope = secretScopeFromFlags(flags);
  checkPrefix(scope.envPrefix);
  // the state, when given, is read first: it attributes data-source records that do not name their integration
  const recorded = flags.state === undefined ? undefined : await loadState(flags.state);
  const api = clientFromOptions(flags, ctx.logger);
  let result;
  try {
    const [integrations, webhooks] = await Promise.all([api.listIntegrations(), kinds.has('Webhook') ? api.listWebhooks() : Promise.resolve([])]);
    let dataSources;
    if (kinds.has('DataSource')) {
      try {
        dataSources = await api.listDataSources();
      } catch (err) {
        if (!(err instanceof DataSourcesUnsupportedError)) throw err;
      }
    }
    // names come from every live resource (stable whatever is selected); the selection is applied after
    result = exportResources({ integrations, webhooks, ...(dataSources ? { dataSources } : {}), shapes: configShapes(), envPrefix: scope.envPrefix, ...(recorded ? { recorded: recorded.resources } : {}) });
  } finally {
    await api.close();
  }
  const ofKinds = result.resources.filter((r) => kinds.has(r.kind));
  if (select) checkSelection(select, ofKinds);
  const selected = ofKinds.filter((r) => !select || select(r));
  const chosen = recorded === undefined ? selected : underOwnedIntegrations(selected, recorded);
  const names = new Set(chosen.map((r) => `${r.kind}/${r.name}`));
  const variables = result.variables.filter((v) => names.has(v.resource));
  const out = path.resolve(flags.out);
  // the live resources of the service this export leaves out: a file --force replaces must not lose them
  const exported = new Set(selected);
  const leftOut = new Set(result.resources.filter((r) => !exported.has(r)).map((r) => `${r.kind}/${r.name}`));
  const prepared = await prepareExport(out, renderExport(chosen, variables, flags.layout), Boolean(flags.force), leftOut);
  const { written, adopted } = await writeAll(prepared, flags.state, chosen);

  // the warnings of what is written (and of what could not be), not of resources --select or --kind left out; they
  // quote the service's names, ids and statuses: escaped for the terminal
  const warnings = warningsFor(result, (resource) => names.has(resource));
  for (const w of warnings) ctx.stderr.write(`warning: ${printable(w)}\n`);
  dataSourceNotes(ctx, chosen, selected, names, flags.state);
  if (ctx.options.output === 'json') {
    ctx.stdout.write(
      `${JSON.stringify(
        {
          out,
          files: written.map((f) => path.relative(out, f)),
          resources: chosen.map((r) => ({ kind: r.kind, name: r.name, liveId: r.liveId })),
          variables,
          ...(flags.state !== undefined ? { adopted } : {}),
          warnings,
        },
        null,
        2,
      )}\n`,
    );
  } else {
    const count = (k: ExportKind): number => chosen.filter((r) => r.kind === k).length;
    ctx.stdout.write(
      `Exported ${counted(count('Integration'), 'integration')}, ${counted(count('Webhook'), 'webhook')} and ${counted(count('DataSource'), 'data source')} to ${out} (${counted(written.length, 'file')}).\n`,
    );
    if (flags.state !== undefined) ctx.stdout.write(`Recorded ${adopted} of them in ${describeStateLocation(flags.state)} as adopted: the next apply records them (nothing is sent).\n`);
    if (variables.length > 0) {
      ctx.stdout.write(`\nSet these variables (the service never returns credentials; template: ${path.join(out, ENV_TEMPLATE)}):\n`);
      for (const v of variables) ctx.stdout.write(`  ${printable(v.name)}  (${printable(`${v.resource} ${v.path}`)})\n`);
    }
    if (chosen.some((r) => r.kind === 'Webhook')) {
      ctx.stdout.write('\nA webhook secret is write-only in the service: add `secret: { fromEnv: NAME }` to the webhooks that have one.\n');
    }
    ctx.stdout.write(`\nThen: govops plan ${path.relative(process.cwd(), out) || '.'}  (every resource should show as adopt, nothing else)\n`);
  }
  process.exitCode = EXIT.ok;
}
