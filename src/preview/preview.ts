/**
 * `govops preview` orchestration (imperative shell). With `--base REF`:
 * 1. Git: the merge-base of HEAD and REF; the manifests of both commits, read from Git objects (the work
 *    tree is not used, and uncommitted changes are reported, not previewed).
 * 2. The pull request's change per resource (pr-diff.ts): added, removed, renamed, changed fields.
 * 3. Live (when a connection is configured and the service answers): the list requests (data sources when in
 *    play); ownership from the base revision when there is no explicit state file (ownership.ts); the plans of
 *    the base and the head (plans.ts); per touched resource the live action and facts, drift separately (live-view.ts).
 * 4. Server-side dry runs of the touched integrations whose secrets are here and whose targets did not
 *    change (dry-run.ts, targets.ts), and the manual-flow scripts (manual-steps.ts).
 * Without `--base`, the work tree's manifests are planned as `govops plan` would, and every resource with
 * something to do is shown. Expected failures come back in the result (exit 1), so the comment explains them.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import { ApiError, TransportError, UserError } from '../errors.js';
import { MANIFEST_EXT } from '../manifests/discover.js';
import { IGNORE_FILE } from '../manifests/ignore.js';
import { loadManifests } from '../manifests/loader.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import { resolveAllSecrets, type ResolvedSecrets } from '../manifests/secrets.js';
import type { ManifestSet } from '../manifests/types.js';
import { parseTargets, targetMatcher } from '../plan/target.js';
import type { PlanOptions } from '../plan/types.js';
import { observeDataSources } from '../reconcile/observe.js';
import { describeFailure } from '../reconcile/stages.js';
import { loadState } from '../state/store.js';
import { redactText } from '../util/redact.js';
import { changedFiles, commitOf, mergeBase, mergedTree, repoInfo, uncommittedFiles, type RepoInfo } from './git.js';
import { driftEntries, plannedResources, touchedResources, type LiveLists } from './live-view.js';
import { diffRevisions } from './pr-diff.js';
import { planBoth } from './plans.js';
import { liveRequests, offlineManualSteps, type RequestOptions } from './requests.js';
import { finish as finishResult, warningsAbout } from './result.js';
import { loadRevision } from './revisions.js';
import { PREVIEW_FORMAT_VERSION, PREVIEW_MARKER, type PreviewResult } from './types.js';
import { unresolvedRefs, type UnknownSecret } from './unknown-secrets.js';
import { counted, agree } from '../util/plural.js';

export interface PreviewOptions extends RequestOptions {
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
  const sides = await comparedSides(repo.top, { ref: opts.base, mb, head, specs, isManifest }, result);
  const files = (await changedFiles(repo.top, sides.base, sides.head, specs)).filter((f) => isManifest(f.file) || (f.from !== undefined && isManifest(f.from)));
  result.base = { ref: opts.base, mergeBase: mb, ...(sides.base !== mb ? { mergedOnto: sides.base } : {}), files };
  const dirty = (await uncommittedFiles(repo.top, specs)).filter(isManifest);
  if (dirty.length) result.uncommitted = dirty;
  const load = (commit: string) => loadRevision({ top: repo.top, commit, specs, root, absPaths, ...scope });
  const [headSet, baseSet] = await Promise.all([load(sides.head), load(sides.base)]);
  return { repo, secretsOrigin: repo.top, head: headSet, base: baseSet };
}

/** A Git path (relative to the top) under one of the pathspecs. */
const underSpecs = (f: string, specs: readonly string[]): boolean => specs.some((s) => s === '.' || f === s || f.startsWith(`${s}/`));

/**
 * What is compared. When the base ref has moved since HEAD left it (its tip is not the merge-base), merging
 * applies the pull request onto that tip, which is what the daemon applied: the base side is the tip, the head
 * side the merge of HEAD into it (from Git objects). What the base gained since is then neither a change of the
 * pull request, nor drift, nor something merging reverts. When the manifests conflict (or this git cannot
 * merge without a work tree), the merge-base and HEAD, with a warning.
 */
async function comparedSides(
  top: string,
  x: { ref: string; mb: string; head: string; specs: string[]; isManifest: (f: string) => boolean },
  result: PreviewResult,
): Promise<{ base: string; head: string }> {
  const tip = await commitOf(top, x.ref);
  if (tip === x.mb) return { base: x.mb, head: x.head };
  const merged = await mergedTree(top, x.head, tip);
  const conflicts = merged?.conflicts.filter((f) => underSpecs(f, x.specs) && x.isManifest(f)) ?? [];
  if (merged && conflicts.length === 0) return { base: tip, head: merged.tree };
  const why = merged ? `merging it conflicts in ${conflicts.join(', ')}` : 'this git cannot merge without a work tree (Git 2.38 or later can)';
  result.warnings.push({
    kind: 'base-moved',
    message: `${x.ref} moved on since this branch left it, and ${why}: compared with the merge-base instead, so what ${x.ref} changed since may show as drift or as changes merging reverts (merge or rebase onto ${x.ref} to preview the merged result)`,
  });
  return { base: x.mb, head: x.head };
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

/** Data sources govops manages per the state file the preview reads (only a given one, with --base). */
async function stateHasDataSources(opts: PreviewOptions): Promise<boolean> {
  if (opts.base !== undefined && !opts.stateGiven) return false;
  return (await loadState(opts.statePath)).resources.some((r) => r.kind === 'DataSource');
}

/** Warnings about what is read: manifest errors at the base revision, uncommitted changes (not previewed). */
function readWarnings(revs: Revisions, result: PreviewResult): void {
  if (revs.base) {
    const baseErrors = revs.base.diagnostics.filter((d) => d.severity === 'error' && d.kind !== undefined).length;
    if (baseErrors) {
      result.warnings.push({
        kind: 'base-invalid',
        message: `${counted(baseErrors, 'manifest error')} at the base revision: ${agree(baseErrors, 'that manifest is', 'those manifests are')} treated as absent there`,
      });
    }
  }
  if (result.uncommitted) {
    result.warnings.push({
      kind: 'uncommitted',
      message: `${counted(result.uncommitted.length, 'manifest file')} ${agree(result.uncommitted.length, 'has', 'have')} uncommitted changes, which are not previewed (the preview reads commits): ${result.uncommitted.join(', ')}`,
    });
  }
}

/** The service's lists, or undefined (offline: why is in the result; with --require-live, an error). */
async function observeLive(opts: PreviewOptions, conn: { api?: ServiceApi }, manifests: ManifestSet['manifests'], result: PreviewResult): Promise<LiveLists | undefined> {
  if (opts.offline !== undefined) {
    result.offlineReason = opts.offline;
    return undefined;
  }
  try {
    const api = (conn.api = opts.connect());
    const inPlay = manifests.some((m) => m.manifest.kind === 'DataSource') || (await stateHasDataSources(opts));
    const [integrations, webhooks, dataSources] = await Promise.all([api.listIntegrations(), api.listWebhooks(), observeDataSources(api, inPlay)]);
    const live: LiveLists = { integrations, webhooks };
    if (dataSources.list) live.dataSources = dataSources.list;
    if (dataSources.unsupported !== undefined) {
      live.dataSourcesUnsupported = dataSources.unsupported;
      result.warnings.push({ kind: 'plan-warning', message: redactText(dataSources.unsupported) });
    }
    return live;
  } catch (err) {
    if (!(err instanceof TransportError || err instanceof ApiError || (err instanceof UserError && !conn.api))) throw err;
    result.offlineReason = redactText(describeFailure(err));
    opts.logger.debug({ reason: result.offlineReason }, 'live state not consulted: offline preview');
    if (opts.requireLive) result.error = `live state not consulted: ${result.offlineReason}`;
    return undefined;
  }
}

/** The manifests of both revisions, resolved; undefined when a secret reference is outside the operator's scope (invalid). */
function resolveBoth(opts: PreviewOptions, revs: Revisions, result: PreviewResult): { headResolved: ResolvedSecrets[]; baseResolved: ResolvedSecrets[] } | undefined {
  const resolveOpts = { env: opts.env, scope: opts.secretScope, secretsOrigin: revs.secretsOrigin };
  const { resolved: headResolved, diagnostics: secretDiags } = resolveAllSecrets(revs.head.manifests, resolveOpts);
  // A secret CI does not have is an unknown; one outside the operator's scope is an error.
  const refused = secretDiags.filter((d) => d.rule === 'secret-scope');
  if (refused.length) {
    result.diagnostics = [...result.diagnostics, ...refused];
    result.valid = false;
    return undefined;
  }
  // The base's references are the operator's too; out-of-scope ones simply stay unresolved.
  return { headResolved, baseResolved: resolveAllSecrets(revs.base?.manifests ?? [], resolveOpts).resolved };
}

export async function runPreview(opts: PreviewOptions): Promise<PreviewResult> {
  const result = emptyResult();
  const root = await realpath(opts.root).catch(() => path.resolve(opts.root));
  const absPaths = (opts.paths.length ? opts.paths : ['.']).map((p) => path.resolve(root, p));
  const conn: { api?: ServiceApi } = {};
  // offline, a removal changes the service only with --prune
  const finish = (r: PreviewResult): PreviewResult => finishResult(r, { prune: opts.plan.prune === true });
  try {
    const revs = await readRevisions(opts, root, absPaths, result);
    result.diagnostics = revs.head.diagnostics;
    if (revs.head.diagnostics.some((d) => d.severity === 'error')) {
      result.valid = false;
      return finish(result);
    }
    const head = revs.head.manifests;
    const base = revs.base?.manifests ?? [];
    readWarnings(revs, result);
    const resolved = resolveBoth(opts, revs, result);
    if (!resolved) return finish(result);
    result.unknownSecrets = sortUnknown(unknownOf(resolved.headResolved));
    const pr = revs.base ? diffRevisions(base, head) : undefined;
    const live = await observeLive(opts, conn, [...head, ...base], result);
    if (result.error !== undefined) return finish(result);
    // --only: the preview shows the targeted resources only, as the plan does.
    const targets = opts.plan.only?.length ? targetMatcher(parseTargets(opts.plan.only)) : undefined;
    const inScope = (r: { resourceKind: string; name: string }): boolean => !targets || targets.targeted(r.resourceKind, r.name);
    if (!live || !conn.api) {
      result.resources = (pr
        ? touchedResources(pr, undefined, undefined)
        : head.map((m) => ({ resourceKind: m.manifest.kind, name: m.manifest.metadata.name, fields: [], source: { ...m.source }, ...(m.manifest.kind === 'Integration' ? { integrationType: m.manifest.spec.type } : {}) }))).filter(inScope);
      if (pr) offlineManualSteps(result, head, base, opts, opts.plan.manualSteps ?? 'require', opts.plan.prune === true);
      return finish(result);
    }
    await livePreview(opts, conn.api, result, { revs, ...resolved, live, pr, inScope });
    return finish(result);
  } catch (err) {
    if (err instanceof UserError || err instanceof TransportError || err instanceof ApiError) {
      result.error = describeFailure(err);
      return finish(result);
    }
    throw err;
  } finally {
    await conn.api?.close();
  }
}

/** Live mode: both plans, the touched resources' live actions and facts, drift, warnings, dry runs and scripts. */
async function livePreview(
  opts: PreviewOptions,
  api: ServiceApi,
  result: PreviewResult,
  x: { revs: Revisions; headResolved: ResolvedSecrets[]; baseResolved: ResolvedSecrets[]; live: LiveLists; pr: ReturnType<typeof diffRevisions> | undefined; inScope: (r: { resourceKind: string; name: string }) => boolean },
): Promise<void> {
  const { revs, live, pr } = x;
  const head = revs.head.manifests;
  const base = revs.base?.manifests ?? [];
  // Text from the service (dry-run answers, scripts) passes the one redactor: every resolved secret is registered in it.
  const redact = redactText;
  result.mode = 'live';
  const ctx = await planBoth(opts, { head, base, headResolved: x.headResolved, baseResolved: x.baseResolved, live, hasBase: revs.base !== undefined, revision: result.revision });
  result.unknownSecrets = sortUnknown(ctx.unknown);
  result.resources = (pr ? touchedResources(pr, ctx.headPlan, live, ctx.basePlan) : plannedResources(ctx.headPlan, live)).filter(x.inScope);
  if (pr && ctx.basePlan) result.drift = driftEntries(ctx.basePlan, pr);
  for (const e of ctx.headPlan.errors) result.warnings.push({ kind: 'plan-error', message: redact(e) });
  if (ctx.headPlan.deletionRefusal) result.warnings.push({ kind: 'blocked', message: redact(`deletes held back by the mass-deletion guard: ${ctx.headPlan.deletionRefusal.message}`) });
  const touched = new Set(result.resources.filter((r) => r.change !== 'removed').map((r) => `${r.resourceKind}/${r.name}`));
  for (const w of warningsAbout(ctx.headPlan.warnings, touched)) result.warnings.push({ kind: 'plan-warning', message: redact(w.message) });
  await liveRequests(api, opts, result, { ...ctx, head, base, pr, live, redact });
}
