/**
 * `govops preview` orchestration (imperative shell): git facts, load + validate, resolve secrets
 * (unresolvable ones become unknowns), then plan against the live service — or, when it cannot be
 * reached or no connection is configured, an offline manifest-level diff against the base revision.
 * Expected failures come back in the result (exit code 1), so a PR comment can explain them.
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
import { resolveAllSecrets } from '../manifests/secrets.js';
import type { LoadedManifest } from '../manifests/types.js';
import { configShapes } from '../manifests/shapes.js';
import { actionable, planChanges } from '../plan/planner.js';
import { isTargeted, parseTargets } from '../plan/target.js';
import type { PlanOptions } from '../plan/types.js';
import { loadState } from '../state/store.js';
import { changedFiles, checkoutTree, mergeBase, repoInfo, type RepoInfo } from './git.js';
import { diffManifestSets } from './manifest-diff.js';
import { PREVIEW_MARKER, type PreviewResult } from './types.js';
import { desiredWithUnknowns, unresolvedRefs, type UnknownSecret } from './unknown-secrets.js';

export interface PreviewOptions {
  /** Folder the paths are relative to (the CLI passes the cwd). */
  root: string;
  paths: string[];
  /** Compare with the merge-base of HEAD and this ref. */
  base?: string;
  statePath: string;
  plan: PlanOptions;
  env: Record<string, string | undefined>;
  /** Which secrets manifests may reference: a reference outside it makes the preview invalid. */
  secretScope?: SecretScope;
  logger: Logger;
  /** Make the service client; throws a UserError when no URL or token is configured. */
  connect: () => ServiceApi;
  /** Fail (exit 1) instead of falling back to an offline preview. */
  requireLive?: boolean;
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

interface BaseInfo {
  ref: string;
  mergeBase: string;
  specs: string[];
  repo: RepoInfo;
}

/** The manifests of the base revision (invalid ones are skipped: only the PR's manifests must be valid). */
async function baseManifests(b: BaseInfo, root: string, absPaths: string[], scope?: SecretScope): Promise<LoadedManifest[]> {
  const tree = await checkoutTree(b.repo.top, b.mergeBase, b.specs);
  try {
    const baseRoot = path.join(tree.dir, path.relative(b.repo.top, root));
    const set = await loadManifests(
      absPaths.map((p) => path.join(baseRoot, path.relative(root, p))),
      { cwd: baseRoot, ...(scope ? { secretScope: scope } : {}) },
    );
    return set.manifests;
  } finally {
    await tree.cleanup();
  }
}

export async function runPreview(opts: PreviewOptions): Promise<PreviewResult> {
  const result: PreviewResult = {
    formatVersion: 1,
    marker: PREVIEW_MARKER,
    mode: 'offline',
    valid: true,
    diagnostics: [],
    unknownSecrets: [],
    changed: false,
    exitCode: 0,
  };
  const fail = (message: string): PreviewResult => ({ ...result, error: message, exitCode: 1 });
  const root = await realpath(opts.root).catch(() => path.resolve(opts.root));
  const rels = opts.paths.length ? opts.paths : ['.'];
  const absPaths = rels.map((p) => path.resolve(root, p));
  let api: ServiceApi | undefined;
  try {
    const repo = await repoInfo(root);
    if (repo?.head) result.revision = repo.head;
    let base: BaseInfo | undefined;
    if (opts.base !== undefined) {
      if (!repo) throw new UserError('--base needs a git work tree', 'run govops preview inside the checked-out repository');
      const specs = pathspecs(repo.top, await Promise.all(absPaths.map((p) => realpath(p).catch(() => p))));
      const mb = await mergeBase(root, opts.base);
      const isManifest = (f: string): boolean => MANIFEST_EXT.test(f) || path.posix.basename(f) === IGNORE_FILE || specs.includes(f);
      const files = (await changedFiles(repo.top, mb, specs)).filter((f) => isManifest(f.file) || (f.from !== undefined && isManifest(f.from)));
      base = { ref: opts.base, mergeBase: mb, specs, repo };
      result.base = { ref: opts.base, mergeBase: mb, files };
    }

    const set = await loadManifests(absPaths, { cwd: root, ...(opts.secretScope ? { secretScope: opts.secretScope } : {}) });
    result.diagnostics = set.diagnostics;
    if (set.diagnostics.some((d) => d.severity === 'error')) {
      result.valid = false;
      result.exitCode = 1;
      return result;
    }
    const { resolved, diagnostics: secretDiags } = resolveAllSecrets(set.manifests, {
      env: opts.env,
      ...(opts.secretScope ? { scope: opts.secretScope } : {}),
    });
    // A secret CI does not have is an unknown; one outside the operator's scope is an error.
    const refused = secretDiags.filter((d) => d.rule === 'secret-scope');
    if (refused.length) {
      result.diagnostics = [...set.diagnostics, ...refused];
      result.valid = false;
      result.exitCode = 1;
      return result;
    }
    result.unknownSecrets = sortUnknown(resolved.flatMap((r) =>
      unresolvedRefs(r).map(
        ({ specPath, ref }): UnknownSecret => ({
          resourceKind: r.manifest.kind,
          name: r.manifest.metadata.name,
          path: specPath.slice('spec.'.length),
          ref,
        }),
      ),
    ));

    try {
      api = opts.connect();
      const [integrations, webhooks] = await Promise.all([api.listIntegrations(), api.listWebhooks()]);
      const state = await loadState(opts.statePath);
      const { desired, unknown } = desiredWithUnknowns(set.manifests, resolved, state, { integrations, webhooks });
      result.unknownSecrets = sortUnknown(unknown);
      const plan = planChanges({
        desired,
        live: { integrations, webhooks },
        state,
        options: opts.plan,
        shapes: configShapes(),
        ...(result.revision !== undefined ? { revision: result.revision } : {}),
      });
      result.mode = 'live';
      result.plan = plan;
      result.changed = actionable(plan).length > 0;
      result.exitCode = plan.errors.length ? 1 : result.changed ? 2 : 0;
      if (plan.errors.length) result.error = plan.errors.join('; ');
      return result;
    } catch (err) {
      if (!(err instanceof TransportError || err instanceof ApiError || (err instanceof UserError && !api))) throw err;
      result.liveError = describeFailure(err);
      opts.logger.debug({ reason: result.liveError }, 'live state not consulted: offline preview');
      if (opts.requireLive) return fail(`live state not consulted: ${result.liveError}`);
    }

    // --only: the offline preview lists the targeted resources only, as the plan would.
    const targets = opts.plan.only?.length ? parseTargets(opts.plan.only) : undefined;
    const inScope = (kind: string, name: string): boolean => !targets || isTargeted(targets, kind, name);
    const resources = set.manifests
      .map((m) => ({ resourceKind: m.manifest.kind, name: m.manifest.metadata.name, file: m.source.file }))
      .filter((r) => inScope(r.resourceKind, r.name));
    if (!base) {
      result.offline = { baseCompared: false, changes: [], resources };
      return result;
    }
    const changes = diffManifestSets(await baseManifests(base, root, absPaths, opts.secretScope), set.manifests).filter((c) => inScope(c.resourceKind, c.name));
    result.offline = { baseCompared: true, changes, resources };
    result.changed = changes.length > 0;
    result.exitCode = result.changed ? 2 : 0;
    return result;
  } catch (err) {
    if (err instanceof UserError || err instanceof TransportError || err instanceof ApiError) return fail(describeFailure(err));
    throw err;
  } finally {
    await api?.close();
  }
}
