/**
 * `govops preview` orchestration (imperative shell). With `--base REF`:
 * 1. Git: the merge-base of HEAD and REF; the manifests of both commits, read from Git objects (the work
 *    tree is not used, and uncommitted changes are reported, not previewed).
 * 2. The pull request's change per resource (pr-diff.ts): added, removed, renamed, changed fields.
 * 3. Live (when a connection is configured and the service answers): the two list requests; ownership from
 *    the base revision when there is no explicit state file (ownership.ts); the plans of the base and the
 *    head; per touched resource the live action and facts, drift separately (live-view.ts).
 * 4. Server-side dry runs of the touched integrations whose secrets are here and whose targets did not
 *    change (dry-run.ts, targets.ts), and the manual-flow scripts (manual-steps.ts).
 * Without `--base`, the work tree's manifests are planned as `govops plan` would, and every resource with
 * something to do is shown. Expected failures come back in the result (exit 1), so the comment explains them.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { LiveIntegration } from '../api/types.js';
import { ApiError, TransportError, UserError } from '../errors.js';
import { MANIFEST_EXT } from '../manifests/discover.js';
import { IGNORE_FILE } from '../manifests/ignore.js';
import { loadManifests } from '../manifests/loader.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import { resolveAllSecrets, type ResolvedSecrets } from '../manifests/secrets.js';
import { configShapes } from '../manifests/shapes.js';
import type { IntegrationManifest, LoadedManifest, ManifestSet } from '../manifests/types.js';
import { planChanges } from '../plan/planner.js';
import type { DesiredIntegration, DesiredResource, Plan, PlanOptions, ResourceChange } from '../plan/types.js';
import type { IntegrationType } from '../service/kinds.js';
import { loadState, newState } from '../state/store.js';
import type { GovopsState } from '../state/types.js';
import { redactText } from '../util/redact.js';
import { dryRunRequest, sendDryRun } from './dry-run.js';
import { changedFiles, commitOf, mergeBase, repoInfo, uncommittedFiles, type RepoInfo } from './git.js';
import { driftEntries, plannedResources, touchedResources, type LiveLists } from './live-view.js';
import { fetchManualSteps, manualSteps, type ManualStepInput } from './manual-steps.js';
import { stateFromBase } from './ownership.js';
import { diffRevisions, type PrChange } from './pr-diff.js';
import { loadRevision } from './revisions.js';
import { checkTargets } from './targets.js';
import { finish } from './result.js';
import { PREVIEW_FORMAT_VERSION, PREVIEW_MARKER, type LiveAction, type PreviewResource, type PreviewResult } from './types.js';
import { desiredWithUnknowns, unresolvedRefs, type UnknownSecret } from './unknown-secrets.js';

export interface PreviewOptions {
  /** Folder the paths are relative to (the CLI passes the cwd). */
  root: string;
  paths: string[];
  /** Compare with the merge-base of HEAD and this ref. */
  base?: string;
  /**
   * govops state file. With --base it is used only when given (`stateGiven`): otherwise ownership comes
   * from the base revision, and a state file committed in the pull request cannot change the preview.
   */
  statePath: string;
  stateGiven?: boolean;
  plan: PlanOptions;
  env: Record<string, string | undefined>;
  /** Which secrets manifests may reference: a reference outside it makes the preview invalid. */
  secretScope?: SecretScope;
  logger: Logger;
  /** Make the service client; throws a UserError when no URL or token is configured. */
  connect: () => ServiceApi;
  /** Fail (exit 1) instead of falling back to an offline preview. */
  requireLive?: boolean;
  /** Do not consult the service at all, for this reason (e.g. a pull request from a fork). */
  offline?: string;
  /** Send dry runs (default true). */
  dryRun?: boolean;
  /** Dry-run resources the base revision does not have (their secrets go to hosts the pull request chose). */
  dryRunNewTargets?: boolean;
  /** Fetch manual-flow scripts (default true). */
  scripts?: boolean;
  /** Parallel dry runs and script requests (default 4). */
  concurrency?: number;
}

export function describeFailure(err: unknown): string {
  if (err instanceof TransportError) return `cannot reach the service: ${err.method} ${err.path}: ${err.message}`;
  if (err instanceof ApiError) return `service error: ${err.toString()}`;
  if (err instanceof UserError) return err.hint ? `${err.message} (${err.hint})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Paths relative to the top of the work tree (git pathspecs); a path outside it is a user error. */
function pathspecs(top: string, absPaths: string[]): string[] {
  return absPaths.map((p) => {
    const rel = path.relative(top, p);
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new UserError(`${p} is outside the git work tree ${top}: it cannot be compared with --base`);
    }
    return rel === '' ? '.' : rel.split(path.sep).join('/');
  });
}

/** Integrations first, then by name and path. */
function sortUnknown(list: UnknownSecret[]): UnknownSecret[] {
  const key = (u: UnknownSecret) => `${u.resourceKind === 'Integration' ? 0 : 1}/${u.name}/${u.path}`;
  return [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function emptyResult(): PreviewResult {
  return {
    formatVersion: PREVIEW_FORMAT_VERSION,
    marker: PREVIEW_MARKER,
    mode: 'offline',
    valid: true,
    diagnostics: [],
    unknownSecrets: [],
    summary: { pr: { added: 0, changed: 0, renamed: 0, removed: 0 }, drift: 0, manualSteps: 0 },
    warnings: [],
    resources: [],
    drift: [],
    changed: false,
    exitCode: 0,
  };
}

/** The manifests to preview: both commits with --base, else the work tree. */
interface Revisions {
  repo?: RepoInfo;
  /** With --base: the work tree, where `fromFile` secrets are read (the commits' copies hold none). */
  secretsOrigin?: string;
  head: ManifestSet;
  base?: ManifestSet;
}

async function readRevisions(opts: PreviewOptions, root: string, absPaths: string[], result: PreviewResult): Promise<Revisions> {
  const repo = await repoInfo(root);
  if (repo?.head) result.revision = repo.head;
  const scope = opts.secretScope ? { secretScope: opts.secretScope } : {};
  if (opts.base === undefined) return { ...(repo ? { repo } : {}), head: await loadManifests(absPaths, { cwd: root, ...scope }) };
  if (!repo) throw new UserError('--base needs a git work tree', 'run govops preview inside the checked-out repository');
  const specs = pathspecs(repo.top, await Promise.all(absPaths.map((p) => realpath(p).catch(() => p))));
  const mb = await mergeBase(root, opts.base);
  const head = await commitOf(root, 'HEAD');
  const isManifest = (f: string): boolean => MANIFEST_EXT.test(f) || path.posix.basename(f) === IGNORE_FILE || specs.includes(f);
  const files = (await changedFiles(repo.top, mb, head, specs)).filter((f) => isManifest(f.file) || (f.from !== undefined && isManifest(f.from)));
  result.base = { ref: opts.base, mergeBase: mb, files };
  const dirty = (await uncommittedFiles(repo.top, specs)).filter(isManifest);
  if (dirty.length) result.uncommitted = dirty;
  const load = (commit: string) => loadRevision({ top: repo.top, commit, specs, root, absPaths, ...scope });
  const [headSet, baseSet] = await Promise.all([load(head), load(mb)]);
  return { repo, secretsOrigin: repo.top, head: headSet, base: baseSet };
}

function unknownOf(resolved: readonly ResolvedSecrets[]): UnknownSecret[] {
  return resolved.flatMap((r) =>
    unresolvedRefs(r).map(({ specPath, ref }): UnknownSecret => ({
      resourceKind: r.manifest.kind,
      name: r.manifest.metadata.name,
      path: specPath.slice('spec.'.length),
      ref,
    })),
  );
}

/** What the offline preview can say about a resource's manual flow: the steps, not their scripts. */
function offlineAction(r: PreviewResource): LiveAction {
  return r.change === 'added' ? 'create' : r.change === 'removed' ? 'delete' : r.change === undefined ? 'none' : 'update';
}

export async function runPreview(opts: PreviewOptions): Promise<PreviewResult> {
  const result = emptyResult();
  const root = await realpath(opts.root).catch(() => path.resolve(opts.root));
  const absPaths = (opts.paths.length ? opts.paths : ['.']).map((p) => path.resolve(root, p));
  let api: ServiceApi | undefined;
  try {
    const revs = await readRevisions(opts, root, absPaths, result);
    result.diagnostics = revs.head.diagnostics;
    if (revs.head.diagnostics.some((d) => d.severity === 'error')) {
      result.valid = false;
      return finish(result);
    }
    const head = revs.head.manifests;
    const base = revs.base?.manifests ?? [];
    if (revs.base) {
      const baseErrors = revs.base.diagnostics.filter((d) => d.severity === 'error' && d.kind !== undefined).length;
      if (baseErrors) {
        result.warnings.push({
          kind: 'base-invalid',
          message: `${baseErrors} manifest error(s) at the base revision: those manifests are treated as absent there`,
        });
      }
    }
    if (result.uncommitted) {
      result.warnings.push({
        kind: 'uncommitted',
        message: `${result.uncommitted.length} manifest file(s) have uncommitted changes, which are not previewed (the preview reads commits): ${result.uncommitted.join(', ')}`,
      });
    }
    const resolveOpts = {
      env: opts.env,
      ...(opts.secretScope ? { scope: opts.secretScope } : {}),
      ...(revs.secretsOrigin !== undefined ? { secretsOrigin: revs.secretsOrigin } : {}),
    };
    const { resolved: headResolved, diagnostics: secretDiags } = resolveAllSecrets(head, resolveOpts);
    // A secret CI does not have is an unknown; one outside the operator's scope is an error.
    const refused = secretDiags.filter((d) => d.rule === 'secret-scope');
    if (refused.length) {
      result.diagnostics = [...result.diagnostics, ...refused];
      result.valid = false;
      return finish(result);
    }
    // The base's references are the operator's too; out-of-scope ones simply stay unresolved.
    const baseResolved = resolveAllSecrets(base, resolveOpts).resolved;
    // Text from the service (dry-run answers, scripts) passes the one redactor: every resolved secret is registered in it.
    const redact = redactText;
    result.unknownSecrets = sortUnknown(unknownOf(headResolved));
    const pr = revs.base ? diffRevisions(base, head) : undefined;

    let live: LiveLists | undefined;
    if (opts.offline !== undefined) {
      result.offlineReason = opts.offline;
    } else {
      try {
        api = opts.connect();
        const [integrations, webhooks] = await Promise.all([api.listIntegrations(), api.listWebhooks()]);
        live = { integrations, webhooks };
      } catch (err) {
        if (!(err instanceof TransportError || err instanceof ApiError || (err instanceof UserError && !api))) throw err;
        result.offlineReason = redact(describeFailure(err));
        opts.logger.debug({ reason: result.offlineReason }, 'live state not consulted: offline preview');
        if (opts.requireLive) {
          result.error = `live state not consulted: ${result.offlineReason}`;
          return finish(result);
        }
      }
    }

    if (!live || !api) {
      result.resources = pr
        ? touchedResources(pr, undefined, undefined)
        : head.map((m) => ({ resourceKind: m.manifest.kind, name: m.manifest.metadata.name, fields: [], source: { ...m.source }, ...(m.manifest.kind === 'Integration' ? { integrationType: m.manifest.spec.type } : {}) }));
      if (pr) offlineManualSteps(result, head, base, opts);
      return finish(result);
    }

    result.mode = 'live';
    const ctx = await planBoth(opts, { head, base, headResolved, baseResolved, live, hasBase: revs.base !== undefined, revision: result.revision });
    result.unknownSecrets = sortUnknown(ctx.unknown);
    result.resources = pr ? touchedResources(pr, ctx.headPlan, live) : plannedResources(ctx.headPlan, live);
    if (pr && ctx.basePlan) result.drift = driftEntries(ctx.basePlan, pr);
    for (const e of ctx.headPlan.errors) result.warnings.push({ kind: 'plan-error', message: redact(e) });
    if (ctx.headPlan.deletionRefusal) result.warnings.push({ kind: 'blocked', message: redact(ctx.headPlan.deletionRefusal.message) });
    const touched = new Set(result.resources.filter((r) => r.change !== 'removed').map((r) => `${r.resourceKind}/${r.name}`));
    for (const w of ctx.headPlan.warnings) {
      if ([...touched].some((t) => w.startsWith(`${t} `))) result.warnings.push({ kind: 'plan-warning', message: redact(w) });
    }
    await liveRequests(api, opts, result, { ...ctx, head, base, pr, live, redact });
    return finish(result);
  } catch (err) {
    if (err instanceof UserError || err instanceof TransportError || err instanceof ApiError) {
      result.error = describeFailure(err);
      return finish(result);
    }
    throw err;
  } finally {
    await api?.close();
  }
}

interface PlanInputs {
  head: LoadedManifest[];
  base: LoadedManifest[];
  headResolved: ResolvedSecrets[];
  baseResolved: ResolvedSecrets[];
  live: LiveLists;
  hasBase: boolean;
  revision: string | undefined;
}

interface Planned {
  headPlan: Plan;
  basePlan?: Plan;
  headDesired: DesiredResource[];
  state: GovopsState;
  unknown: UnknownSecret[];
}

/** The plans of the head and the base, against the state: the given file, or ownership from the base. */
async function planBoth(opts: PreviewOptions, i: PlanInputs): Promise<Planned> {
  const live = { integrations: i.live.integrations, webhooks: i.live.webhooks };
  const shapes = configShapes();
  const given = !i.hasBase || opts.stateGiven ? await loadState(opts.statePath) : undefined;
  let state: GovopsState;
  if (given) state = given;
  else {
    const key = newState().fingerprintKey;
    const empty: GovopsState = { version: 1, fingerprintKey: key, resources: [] };
    const baseDesired = desiredWithUnknowns(i.base, i.baseResolved, empty, live).desired;
    state = stateFromBase(key, baseDesired, planChanges({ desired: baseDesired, live, state: empty, options: opts.plan, shapes }));
  }
  const { desired: headDesired, unknown } = desiredWithUnknowns(i.head, i.headResolved, state, live);
  const headPlan = planChanges({ desired: headDesired, live, state, options: opts.plan, shapes, ...(i.revision !== undefined ? { revision: i.revision } : {}) });
  if (!i.hasBase) return { headPlan, headDesired, state, unknown };
  const baseDesired = desiredWithUnknowns(i.base, i.baseResolved, state, live).desired;
  const basePlan = planChanges({ desired: baseDesired, live, state, options: opts.plan, shapes });
  return { headPlan, basePlan, headDesired, state, unknown };
}

interface LiveContext extends Planned {
  head: LoadedManifest[];
  base: LoadedManifest[];
  pr: PrChange[] | undefined;
  live: LiveLists;
  redact: (s: string) => string;
}

const integrationSpec = (m: LoadedManifest | undefined): IntegrationManifest['spec'] | undefined =>
  m?.manifest.kind === 'Integration' ? (m.manifest as IntegrationManifest).spec : undefined;

/** Dry runs and manual-flow scripts of the touched integrations, a few at a time. */
async function liveRequests(api: ServiceApi, opts: PreviewOptions, result: PreviewResult, c: LiveContext): Promise<void> {
  const headByName = new Map(c.head.filter((m) => m.manifest.kind === 'Integration').map((m) => [m.manifest.metadata.name, m]));
  const baseByName = new Map(c.base.filter((m) => m.manifest.kind === 'Integration').map((m) => [m.manifest.metadata.name, m]));
  const desiredByName = new Map(
    c.headDesired.filter((d): d is DesiredIntegration => d.kind === 'Integration').map((d) => [d.name, d]),
  );
  const changeByName = new Map(
    c.headPlan.changes.filter((x) => x.resourceKind === 'Integration').map((x): [string, ResourceChange] => [x.name, x]),
  );
  const liveById = new Map<string, LiveIntegration>(c.live.integrations.map((l) => [l.id, l]));
  const queue = new PQueue({ concurrency: Math.max(1, opts.concurrency ?? 4) });
  const jobs: Array<Promise<unknown>> = [];
  for (const r of result.resources) {
    if (r.resourceKind !== 'Integration' || !r.live) continue;
    const l = r.live;
    const removed = r.change === 'removed';
    const headM = removed ? undefined : headByName.get(r.name);
    const baseM = baseByName.get(r.renamedFrom ?? r.name);
    const d = removed ? undefined : desiredByName.get(r.name);
    const change = changeByName.get(r.name);
    const liveObj = l.id !== undefined ? liveById.get(l.id) : undefined;
    const deleting = l.action === 'delete' || l.action === 'replace';
    const unknownRefs = result.unknownSecrets
      .filter((u) => u.resourceKind === 'Integration' && u.name === r.name)
      .filter((u) => (deleting ? u.path.startsWith('deleteCredentials.') && change?.deleteNeedsCredentials === true : u.path.startsWith('config.')))
      .map((u) => u.ref);
    if (opts.dryRun !== false) {
      const headSpec = integrationSpec(headM);
      const baseSpec = integrationSpec(baseM);
      const req = dryRunRequest({
        action: l.action,
        ...(l.id !== undefined ? { liveId: l.id } : {}),
        ...(l.blocked !== undefined ? { blocked: l.blocked } : {}),
        ...(d && !deleting ? { body: structuredClone(d.body) } : {}),
        ...(d?.deleteCredentials && change?.deleteNeedsCredentials ? { deletePayload: structuredClone(d.deleteCredentials) } : {}),
        unknownRefs,
        targets: checkTargets({
          sends: deleting ? (change?.deleteNeedsCredentials ? headSpec?.deleteCredentials : undefined) : headSpec?.config,
          ...(headSpec && !deleting ? { head: { config: headSpec.config } } : {}),
          ...(baseSpec ? { base: { config: baseSpec.config, deleteCredentials: baseSpec.deleteCredentials } } : {}),
          ...(liveObj ? { live: liveObj.config } : {}),
          allowNewTargets: opts.dryRunNewTargets === true,
        }),
      });
      if (req && 'method' in req) jobs.push(queue.add(async () => {
        r.dryRun = await sendDryRun(api, req, c.redact);
      }));
      else if (req) r.dryRun = req;
    }
    const type = (r.integrationType ?? liveObj?.type) as IntegrationType | undefined;
    if (type && opts.scripts !== false) {
      const input: ManualStepInput = {
        name: r.name,
        action: l.action,
        type,
        autoBootstrap: l.action === 'delete' ? (liveObj?.autoBootstrap ?? integrationSpec(baseM)?.autoBootstrap) : (d?.body.autoBootstrap ?? integrationSpec(headM)?.autoBootstrap),
        ...(headM ? { config: structuredClone(integrationSpec(headM)?.config ?? {}) } : {}),
        ...(l.id !== undefined ? { liveId: l.id } : {}),
      };
      if (manualSteps(input).length) {
        jobs.push(queue.add(async () => {
          r.manualSteps = await fetchManualSteps(api, input, c.redact);
        }));
      }
    }
  }
  await Promise.all(jobs);
}

/** Offline: the manual steps a touched integration will need, with the command that fetches each script. */
function offlineManualSteps(result: PreviewResult, head: LoadedManifest[], base: LoadedManifest[], opts: PreviewOptions): void {
  if (opts.scripts === false) return;
  for (const r of result.resources) {
    if (r.resourceKind !== 'Integration' || !r.integrationType) continue;
    const m = (r.change === 'removed' ? base : head).find((x) => x.manifest.kind === 'Integration' && x.manifest.metadata.name === r.name);
    const spec = integrationSpec(m);
    const steps = manualSteps(
      { name: r.name, action: offlineAction(r), type: r.integrationType as IntegrationType, autoBootstrap: spec?.autoBootstrap ?? false },
      'Not fetched: the service was not consulted.',
    );
    if (steps.length) r.manualSteps = steps;
  }
}
