/**
 * The requests a live preview makes beyond the two lists, for each touched integration: the server-side dry
 * run (what to send is decided by dry-run.ts and targets.ts) and the manual-flow scripts (manual-steps.ts),
 * at most `concurrency` at a time. Offline, only the manual steps' commands are listed.
 */
import path from 'node:path';
import PQueue from 'p-queue';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveIntegration } from '../api/types.js';
import type { IntegrationManifest, LoadedManifest } from '../manifests/types.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import type { DesiredIntegration, ManualStepGate, ManualStepsMode, ResourceChange } from '../plan/types.js';
import { ackPhaseOf, parseAcknowledgments } from '../plan/acknowledgment.js';
import { isIntegrationType, type IntegrationType } from '../kinds/registry.js';
import { isSecretRef } from '../manifests/refs.js';
import { configShapes } from '../manifests/shapes.js';
import { updateBody } from '../plan/ignore.js';
import { dryRunRequest, sendDryRun, type DryRunRequest } from './dry-run.js';
import type { LiveLists } from './live-view.js';
import { ackOfGate, ackOfManifest, type AckContext } from './manual-ack.js';
import { fetchManualSteps, manualSteps, type ManualStepInput } from './manual-steps.js';
import type { Planned } from './plans.js';
import type { PrChange } from './pr-diff.js';
import { checkTargets } from './targets.js';
import type { DryRunResult, LiveAction, PreviewResource, PreviewResult } from './types.js';
import type { UnknownSecret } from './unknown-secrets.js';

export interface RequestOptions {
  /** Send dry runs (default true). */
  dryRun?: boolean;
  /** Dry-run resources the base revision does not have (their secrets go to hosts the pull request chose). */
  dryRunNewTargets?: boolean;
  /** Fetch manual-flow scripts (default true). */
  scripts?: boolean;
  /** Parallel dry runs and script requests (default 4). */
  concurrency?: number;
  /** Which secrets manifests may reference: without a secrets folder a `fromFile` is read beside its manifest. */
  secretScope?: SecretScope;
}

/** A manifest's folder relative to its root, `/`-separated; undefined with a secrets folder (`refsFrom`). */
function refFolder(m: LoadedManifest | undefined, opts: RequestOptions): string | undefined {
  if (opts.secretScope?.dir !== undefined || m === undefined) return undefined;
  return path.relative(m.root ?? m.dir, m.dir).split(path.sep).join('/');
}

/**
 * What the offline preview can say about a resource's manual flow: the steps, not their scripts. The action is what
 * merging does as far as the manifests say: a removal deletes only with --prune (as the plan: otherwise nothing).
 */
function offlineAction(r: PreviewResource, prune: boolean): LiveAction {
  if (r.change === 'removed') return prune ? 'delete' : 'none';
  return r.change === 'added' ? 'create' : r.change === undefined ? 'none' : 'update';
}

export interface LiveContext extends Planned {
  head: LoadedManifest[];
  base: LoadedManifest[];
  pr: PrChange[] | undefined;
  live: LiveLists;
  redact: (s: string) => string;
}

const integrationSpec = (m: LoadedManifest | undefined): IntegrationManifest['spec'] | undefined =>
  m?.manifest.kind === 'Integration' ? (m.manifest as IntegrationManifest).spec : undefined;

/** Where a touched integration's manifests, desired body, plan change and live object are. */
interface Lookup {
  head: Map<string, LoadedManifest>;
  base: Map<string, LoadedManifest>;
  desired: Map<string, DesiredIntegration>;
  change: Map<string, ResourceChange>;
  live: Map<string, LiveIntegration>;
}

function lookupOf(c: LiveContext): Lookup {
  const integrations = (list: LoadedManifest[]) =>
    new Map(list.filter((m) => m.manifest.kind === 'Integration').map((m) => [m.manifest.metadata.name, m]));
  return {
    head: integrations(c.head),
    base: integrations(c.base),
    desired: new Map(c.headDesired.filter((d): d is DesiredIntegration => d.kind === 'Integration').map((d) => [d.name, d])),
    change: new Map(c.headPlan.changes.filter((x) => x.resourceKind === 'Integration').map((x): [string, ResourceChange] => [x.name, x])),
    live: new Map(c.live.integrations.map((l) => [l.id, l])),
  };
}

/** The head's and the base's folders for `checkTargets` (none with a secrets folder). */
function folders(head: LoadedManifest | undefined, base: LoadedManifest | undefined, opts: RequestOptions): { headFolder?: string; baseFolder?: string } {
  const h = refFolder(head, opts);
  const b = refFolder(base, opts);
  return { ...(h !== undefined ? { headFolder: h } : {}), ...(b !== undefined ? { baseFolder: b } : {}) };
}

/** What to dry-run for a touched integration (a request, a skip with its reason, or nothing). */
function dryRunFor(r: PreviewResource, k: Lookup, unknown: readonly UnknownSecret[], opts: RequestOptions): DryRunRequest | DryRunResult | undefined {
  const l = r.live!;
  const removed = r.change === 'removed';
  const headSpec = removed ? undefined : integrationSpec(k.head.get(r.name));
  const baseSpec = integrationSpec(k.base.get(r.renamedFrom ?? r.name));
  const d = removed ? undefined : k.desired.get(r.name);
  const withPayload = k.change.get(r.name)?.deleteNeedsCredentials === true;
  const liveObj = l.id !== undefined ? k.live.get(l.id) : undefined;
  // a delete (or the delete half of a replace) sends only the delete payload, to the live host
  const deleting = l.action === 'delete' || l.action === 'replace';
  const unknownRefs = unknown
    .filter((u) => u.resourceKind === 'Integration' && u.name === r.name)
    .filter((u) => (deleting ? withPayload && u.path.startsWith('deleteCredentials.') : u.path.startsWith('config.')))
    .map((u) => u.ref);
  const req = dryRunRequest({
    action: l.action,
    ...(l.id !== undefined ? { liveId: l.id } : {}),
    ...(l.blocked !== undefined ? { blocked: l.blocked } : {}),
    // an update sends what apply would: ignored fields and non-editable spellings as they are live (plan/ignore.ts)
    ...(d && !deleting ? { body: structuredClone(l.action === 'update' && liveObj ? updateBody(d, liveObj, configShapes()) : d.body) } : {}),
    ...(d?.deleteCredentials && withPayload ? { deletePayload: structuredClone(d.deleteCredentials) } : {}),
    unknownRefs,
    targets: checkTargets({
      sends: deleting ? (withPayload ? headSpec?.deleteCredentials : undefined) : headSpec?.config,
      ...(headSpec && !deleting ? { head: { config: headSpec.config } } : {}),
      ...(headSpec && deleting && withPayload ? { headDelete: { deleteCredentials: headSpec.deleteCredentials } } : {}),
      ...(baseSpec ? { base: { config: baseSpec.config, deleteCredentials: baseSpec.deleteCredentials } } : {}),
      ...(liveObj ? { live: liveObj.config } : {}),
      allowNewTargets: opts.dryRunNewTargets === true,
      ...folders(k.head.get(r.name), k.base.get(r.renamedFrom ?? r.name), opts),
    }),
  });
  if (req && 'method' in req && opts.dryRun === false) return { status: 'skipped', reason: 'not sent (--no-dry-run)', tests: [] };
  return req;
}

/** The manual-flow input of a touched integration (its scripts are fetched when its kind has any). */
function manualInputFor(r: PreviewResource, k: Lookup): ManualStepInput | undefined {
  const l = r.live!;
  const headM = r.change === 'removed' ? undefined : k.head.get(r.name);
  const liveObj = l.id !== undefined ? k.live.get(l.id) : undefined;
  const named = r.integrationType ?? liveObj?.type;
  // (a live type govops does not know has no scripts: its change is blocked, nothing to fetch)
  const type = isIntegrationType(named) ? named : undefined;
  if (!type) return undefined;
  const autoBootstrap =
    l.action === 'delete'
      ? (liveObj?.autoBootstrap ?? integrationSpec(k.base.get(r.name))?.autoBootstrap)
      : (k.desired.get(r.name)?.body.autoBootstrap ?? integrationSpec(headM)?.autoBootstrap);
  const gate = k.change.get(r.name)?.manualStep;
  return {
    name: r.name,
    action: l.action,
    type,
    autoBootstrap,
    ...(headM ? { config: structuredClone(integrationSpec(headM)?.config ?? {}) } : {}),
    ...(l.id !== undefined ? { liveId: l.id } : {}),
    // the plan's gate knows the live status (a failed creation is cleaned up, not deleted with the delete script); a
    // credential rotation the script run for this configuration covers has no script to run (listed, it read "run this
    // script in the platform before the change is applied" beside "acknowledged")
    ...(gate ? { steps: rotationCovered(gate) ? [] : gate.scripts.map((s) => ({ phase: s.phase, command: s.command })) } : {}),
  };
}

/** The gate let the change through on an entry for another phase (a rotation covered by a create or edit script run). */
function rotationCovered(gate: ManualStepGate): boolean {
  if (gate.status !== 'acknowledged' || gate.acknowledgment === undefined) return false;
  const phases = new Set(parseAcknowledgments(gate.acknowledgment.value).map((a) => a.phase));
  return !gate.scripts.every((s) => phases.has(ackPhaseOf(s.phase)));
}

/** Dry runs and manual-flow scripts of the touched integrations, a few at a time. */
export async function liveRequests(api: ServiceApi, opts: RequestOptions, result: PreviewResult, c: LiveContext): Promise<void> {
  const k = lookupOf(c);
  const queue = new PQueue({ concurrency: Math.max(1, opts.concurrency ?? 4) });
  const jobs: Array<Promise<unknown>> = [];
  for (const r of result.resources) {
    if (r.resourceKind === 'DataSource' && r.live && ['create', 'replace', 'delete'].includes(r.live.action) && !r.live.blocked) {
      r.dryRun = { status: 'skipped', reason: 'data sources have no dry run (the service interface shows none)', tests: [] };
    }
    if (r.resourceKind !== 'Integration' || !r.live) continue;
    const gate = k.change.get(r.name)?.manualStep;
    if (gate && r.live.action !== 'none' && r.live.action !== 'noop') r.manualAck = ackOfGate(gate, prContext(r, k.base));
    const dry = dryRunFor(r, k, result.unknownSecrets, opts);
    if (dry && 'method' in dry) {
      jobs.push(queue.add(async () => {
        r.dryRun = await sendDryRun(api, dry, c.redact);
        if (r.live?.action === 'replace' && r.dryRun.reason === undefined) {
          r.dryRun.reason = 'the delete half only: the create half cannot be dry-run while the old integration exists';
        }
      }));
    } else if (dry) r.dryRun = dry;
    const input = opts.scripts === false ? undefined : manualInputFor(r, k);
    if (input && manualSteps(input).length) {
      jobs.push(queue.add(async () => {
        r.manualSteps = await fetchManualSteps(api, input, c.redact);
      }));
    }
  }
  await Promise.all(jobs);
}

/** Offline: the manual steps a touched integration will need, with the command that fetches each script. */
export function offlineManualSteps(
  result: PreviewResult,
  head: LoadedManifest[],
  base: LoadedManifest[],
  opts: RequestOptions,
  mode: ManualStepsMode = 'require',
  prune = false,
): void {
  const bases = new Map(base.filter((x) => x.manifest.kind === 'Integration').map((x): [string, LoadedManifest] => [x.manifest.metadata.name, x]));
  for (const r of result.resources) {
    if (r.resourceKind !== 'Integration' || !r.integrationType) continue;
    const m = (r.change === 'removed' ? base : head).find((x) => x.manifest.kind === 'Integration' && x.manifest.metadata.name === r.name);
    const spec = integrationSpec(m);
    const steps = manualSteps(
      { name: r.name, action: offlineAction(r, prune), type: r.integrationType as IntegrationType, autoBootstrap: spec?.autoBootstrap ?? false },
      'Not fetched: the service was not consulted.',
    );
    if (steps.length === 0) continue;
    // the acknowledgment needs no service: computed from the manifest that carries it (none for a removal)
    const manifest = r.change === 'removed' ? undefined : (m?.manifest as IntegrationManifest | undefined);
    const ack = ackOfManifest(steps, manifest, mode, prContext(r, bases));
    // a credential rotation the script run for this configuration covers: acknowledged, and no script to run
    const rotation = ack.status === 'awaiting' && credentialsOnly(r) ? ackOfManifest(steps, manifest, mode, prContext(r, bases), true) : undefined;
    r.manualAck = rotation?.status === 'acknowledged' ? rotation : ack;
    if (opts.scripts !== false && r.manualAck !== rotation) r.manualSteps = steps;
  }
}

/**
 * The pull request changes only credentials of the integration (offline, as the plan's credentialsOnly reads it live):
 * every changed field of its spec a secret, or a reference to one. Its metadata (the annotation) may change too.
 */
function credentialsOnly(r: PreviewResource): boolean {
  if (r.change !== 'changed') return false;
  const spec = r.fields.filter((f) => f.path.startsWith('spec.'));
  return spec.length > 0 && spec.every((f) => f.sensitive || isSecretRef(f.before) || isSecretRef(f.after));
}

/** The base revision's manifest of a resource the pull request touches (undefined without --base: no pull request). */
function prContext(r: PreviewResource, base: ReadonlyMap<string, LoadedManifest>): AckContext | undefined {
  if (r.change === undefined) return undefined;
  const m = base.get(r.renamedFrom ?? r.name)?.manifest;
  return { base: m?.kind === 'Integration' ? m : undefined };
}
