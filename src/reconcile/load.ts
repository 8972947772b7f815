/**
 * The load stage of a reconcile: read and validate the manifests (kept for a resync of the same revision),
 * resolve their secrets. Invalid manifests or unresolvable secrets stop the reconcile here (stage `load`).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { ErrorCode, UserError, failure as failureOf } from '../errors.js';
import { loadManifests, type LoadResult } from '../manifests/loader.js';
import { resolveAllSecrets } from '../manifests/secrets.js';
import { STDIN_PATH } from '../manifests/stream.js';
import type { Diagnostic, Manifest } from '../manifests/types.js';
import { toDesired } from '../plan/desired.js';
import type { DesiredResource } from '../plan/types.js';
import { isPgLocation } from '../state/location.js';
import { hashingFor } from '../state/store.js';
import type { GovopsState } from '../state/types.js';
import { withManualStep } from './manual-step-token.js';
import { thrownAt, type EngineOptions, type StageFailure } from './stages.js';
import { pushAll } from '../util/multimap.js';
import { quotedPart } from '../util/cut.js';

/**
 * The manifests of one revision, loaded and validated, kept for the next reconcile of the same revision
 * (a revision's folder never changes: a Git checkout or a directory snapshot, named by its content).
 * Only the latest is kept. Secrets are not part of it: they are resolved again on every reconcile.
 */
export class LoadCache {
  private entry?: { key: string; set: LoadResult };

  get(key: string): LoadResult | undefined {
    return this.entry?.key === key ? this.entry.set : undefined;
  }

  set(key: string, set: LoadResult): void {
    this.entry = { key, set };
  }

  clear(): void {
    this.entry = undefined;
  }
}

export function formatDiagnostic(d: Diagnostic): string {
  const who = d.kind && d.name ? `${d.kind}/${quotedPart(d.name)}: ` : '';
  return `${d.file}:${d.line}:${d.column}: ${who}${d.message}`;
}

/** What the load stage gives the others. */
export interface Loaded {
  /** The manifests' warnings (errors stop at this stage). */
  diagnostics: Diagnostic[];
  /** The desired resources, hashed with the state's key (made once, on first use). */
  desired: (state: GovopsState) => DesiredResource[];
  /** The manifests include DataSources (their live list is needed). */
  dataSources: boolean;
  /** The manifests as written (secret references, not values): the facts of a saved plan. */
  manifests: Manifest[];
}

/** The revision folder must exist: a missing one is an I/O failure of the source (retried), not an invalid revision. */
async function checkRoot(root: string): Promise<void> {
  try {
    const st = await stat(root);
    if (!st.isDirectory()) throw new Error(`${root} is not a folder`);
  } catch (err) {
    throw new UserError(`cannot read the revision folder ${root}: ${(err as Error).message}`, 'retried on the next attempt', {
      code: ErrorCode.sourceIo,
    });
  }
}

/** The revision's manifests, from the cache when this revision was read already. */
async function readManifests(opts: EngineOptions): Promise<LoadResult> {
  const { source } = opts;
  const paths = (source.paths.length ? source.paths : ['.']).map((p) => (p === STDIN_PATH ? p : path.resolve(source.root, p)));
  await checkRoot(source.root);
  const key =
    opts.loadCache && opts.revision !== undefined
      ? JSON.stringify([opts.revision, source.root, paths, source.sourceRoot, source.secretScope, source.secretsOrigin])
      : undefined;
  const cached = key !== undefined ? opts.loadCache!.get(key) : undefined;
  if (cached) return cached;
  const set = await loadManifests(paths, {
    cwd: source.root,
    // the state file (and its journal, lock) is never a manifest, even inside the folder; a PostgreSQL state has none
    stateFiles: isPgLocation(opts.statePath) ? undefined : [path.resolve(opts.statePath)],
    root: source.sourceRoot,
    secretScope: source.secretScope,
    secretsOrigin: source.secretsOrigin,
    stream: source.stream,
  });
  // Unreadable files are the source's trouble (retried): only a revision that was read is kept.
  if (key !== undefined && !set.diagnostics.some((d) => d.code === ErrorCode.sourceIo)) opts.loadCache!.set(key, set);
  return set;
}

/** The desired resources of the resolved manifests, made once under the state's fingerprint key. */
function desiredMaker(set: LoadResult, resolved: ReturnType<typeof resolveAllSecrets>['resolved']): Loaded['desired'] {
  // The resolved copies are needed only to make the desired resources: let go of them once made.
  let pending: typeof resolved | undefined = resolved;
  let made: { key: string; desired: DesiredResource[] } | undefined;
  return (state) => {
    if (made?.key === state.fingerprintKey) return made.desired;
    if (!pending) throw new Error('desired resources already made under another fingerprint key');
    const hashing = hashingFor(state.fingerprintKey);
    const list = pending;
    // the resolved copies are ours and dropped below: their objects become the bodies (owned, not copied again)
    const desired = list.map((r, i) => withManualStep(toDesired(r.manifest, set.manifests[i]!.source, r.secretPaths, hashing, true), set.manifests[i]!.manifest));
    pending = undefined;
    made = { key: state.fingerprintKey, desired };
    return desired;
  };
}

/** Manifests in error (or secrets that cannot be resolved): the revision is rejected, or retried when unreadable. */
function rejected(diagnostics: Diagnostic[], log: Logger): StageFailure {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  // Files that could not be read are the source's failure (retried); anything else rejects the revision.
  const io = errors.every((d) => d.code === ErrorCode.sourceIo);
  const failure = failureOf(io ? ErrorCode.sourceIo : ErrorCode.invalidRevision);
  // The result carries every diagnostic: the daemon logs them one per line, one-shot commands print them.
  log.debug({ errors: errors.length, code: failure.code }, io ? 'revision files could not be read; retrying' : 'revision rejected: invalid manifests or unresolvable secrets');
  return { stage: 'load', ok: false, diagnostics, outcomes: [], changed: false, error: `${formatDiagnostic(errors[0]!)}${more}`, failure };
}

/** Load, validate and resolve secrets; a failure is stage `load` (with every diagnostic). */
export async function loadStage(opts: EngineOptions, log: Logger): Promise<Loaded | StageFailure> {
  try {
    const set = await readManifests(opts);
    const diagnostics = [...set.diagnostics];
    if (diagnostics.some((d) => d.severity === 'error')) return rejected(diagnostics, log);
    const { resolved, diagnostics: secretDiags } = resolveAllSecrets(set.manifests, {
      env: opts.env ?? process.env,
      scope: opts.source.secretScope,
      secretsOrigin: opts.source.secretsOrigin,
    });
    pushAll(diagnostics, secretDiags);
    if (secretDiags.some((d) => d.severity === 'error')) return rejected(diagnostics, log);
    return {
      diagnostics,
      desired: desiredMaker(set, resolved),
      dataSources: set.manifests.some((m) => m.manifest.kind === 'DataSource'),
      manifests: set.manifests.map((m) => m.manifest),
    };
  } catch (err) {
    return thrownAt('load', err, []);
  }
}
