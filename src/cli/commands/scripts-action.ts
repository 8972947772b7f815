/** What `govops scripts` does (loaded only when it runs; declared in scripts.ts). */
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { ServiceApi } from '../../api/client-types.js';
import type { IntegrationBody } from '../../api/types.js';
import { ApiError, ErrorCode, UserError } from '../../errors.js';
import { liveIntegrationIdentity } from '../../plan/stale.js';
import type { ManagedResource } from '../../state/types.js';
import { formatDiagnostic } from '../../manifests/format.js';
import { acknowledgmentLine, ackPhaseOf } from '../../plan/acknowledgment.js';
import { lastScriptOfStep, scriptCommand } from '../../plan/manual-steps.js';
import { manualStepToken } from '../../reconcile/manual-step-token.js';
import { loadManifests } from '../../manifests/loader.js';
import { resolveSecrets } from '../../manifests/secrets.js';
import type { SecretScope } from '../../manifests/secret-scope.js';
import type { IntegrationManifest, LoadedManifest, ManifestSet } from '../../manifests/types.js';
import { SCRIPT_PHASES, SCRIPT_PHASES_WITH_ID, type ScriptPhase } from '../../service/kinds.js';
import { SCRIPT_KINDS, isIntegrationType, naturalKey, type IntegrationType } from '../../kinds/registry.js';
import { getResource, loadState, stateExists } from '../../state/store.js';
import { describeStateLocation } from '../../state/location.js';
import type { GovopsState } from '../../state/types.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom } from '../context.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { stdinStream } from '../stdin.js';
import { writeFileAtomic } from '../../util/fs.js';
import { printable } from '../../util/terminal.js';
import type { ScriptsFlags } from './scripts.js';
import { withArticle } from '../../util/strings.js';

export interface ScriptRequest {
  name: string;
  phase: ScriptPhase;
  paths: string[];
  cwd: string;
  statePath: string;
  env: Record<string, string | undefined>;
  /** Which secrets the manifest may reference (default: GOVOPS_SECRET_* variables, files inside the root). */
  secretScope?: SecretScope;
  /** The state was named (--state, GOVOPS_STATE, GOVOPS_STATE_URL): it must exist (a typo is not "no state"). */
  stateNamed?: boolean;
}

/**
 * The state the script's phase reads. One named must exist, as for the webhooks and state commands: read as empty, a
 * mistyped --state silently fell back to the integration found by its natural key in the service (or to "no such
 * script"). Without one, the default that does not exist yet records nothing.
 */
async function readState(req: { statePath: string; stateNamed?: boolean }): Promise<GovopsState> {
  if (req.stateNamed && !(await stateExists(req.statePath))) {
    throw new UserError(
      `there is no govops state at ${describeStateLocation(req.statePath)}`,
      'check --state / GOVOPS_STATE (and --state-key for a PostgreSQL state); leave it out to find the integration by its natural key in the service',
    );
  }
  return loadState(req.statePath);
}

export interface ScriptDeps {
  load: (paths: string[], options: { cwd: string; secretScope?: SecretScope }) => Promise<ManifestSet>;
  api: ServiceApi;
  logger: Logger;
}

export interface ScriptResult {
  script: string;
  /** Live id used in the path (edit, delete). */
  id?: string;
  manifest: LoadedManifest<IntegrationManifest>;
}

/** What to do after running each script (interface 4.1, "Follow-up"). */
const FOLLOW_UP: Record<ScriptPhase, string> = {
  create: 'run it in the platform, then create the integration (govops apply)',
  'initial-create': 'run it in the platform, then fetch the remaining script with --phase create',
  edit: 'run it in the platform, then update the integration (govops apply)',
  delete: 'run it in the platform, then delete the integration (govops apply --prune)',
  cleanup: 'run it in the platform; fetch --phase post-cleanup next where the kind has that script, otherwise delete the failed integration',
  'post-cleanup': 'run it in the platform, then delete the failed integration',
};

function findManifest(set: ManifestSet, name: string): LoadedManifest<IntegrationManifest> {
  const all = set.manifests;
  const hit = all.find((m) => m.manifest.kind === 'Integration' && m.manifest.metadata.name === name);
  if (hit) return hit as LoadedManifest<IntegrationManifest>;
  const errors = set.diagnostics.filter((d) => d.severity === 'error');
  const other = all.find((m) => m.manifest.metadata.name === name);
  if (other) throw new UserError(`${name} is ${withArticle(other.manifest.kind)}; scripts exist only for integrations`);
  const names = all.filter((m) => m.manifest.kind === 'Integration').map((m) => m.manifest.metadata.name);
  throw new UserError(
    `no Integration named "${name}" in the given paths`,
    errors.length
      ? `some manifests have errors and were not loaded:\n${errors.map((d) => formatDiagnostic(d)).join('\n')}`
      : names.length
        ? `integrations found: ${names.sort().join(', ')}`
        : 'pass the folder or files holding the manifests as PATH arguments',
  );
}

/** Find the integration's manifest and check that the phase applies to it (manual flow, a kind with that script). */
async function scriptManifest(
  req: Pick<ScriptRequest, 'name' | 'phase' | 'paths' | 'cwd' | 'secretScope' | 'stateNamed'> & { statePath?: string },
  load: ScriptDeps['load'],
): Promise<LoadedManifest<IntegrationManifest>> {
  const set = await load(req.paths, { cwd: req.cwd, ...(req.secretScope ? { secretScope: req.secretScope } : {}) });
  const loaded = findManifest(set, req.name);
  const where = `${loaded.source.file}:${loaded.source.line}:${loaded.source.column}`;
  const own = set.diagnostics.filter(
    (d) => d.severity === 'error' && ((d.kind === 'Integration' && d.name === req.name) || (!d.name && d.file === loaded.source.file)),
  );
  if (own.length) throw new UserError(`Integration/${req.name} is invalid:\n${own.map((d) => formatDiagnostic(d)).join('\n')}`);

  if (phaseApplies(req.phase, loaded.manifest.spec.type, loaded.manifest.spec.autoBootstrap !== true)) return loaded;
  // A delete (or a failed creation's clean-up) is a step on the integration the service holds: when the manifest
  // no longer says manual flow (autoBootstrap now true, or another type: a replace), the integration govops
  // recorded is the one the plan waits on, and its step is what is asked for.
  if (LIVE_PHASES.has(req.phase) && req.statePath !== undefined) {
    const recorded = getResource(await readState({ statePath: req.statePath, stateNamed: req.stateNamed }), 'Integration', req.name);
    const sameBody = req.phase === 'delete' || recorded?.type === loaded.manifest.spec.type; // (the clean-up posts the manifest's config)
    if (recorded && sameBody && phaseApplies(req.phase, recorded.type, recorded.autoBootstrap === false)) return loaded;
  }
  const { type, autoBootstrap } = loaded.manifest.spec;
  if (!SCRIPT_KINDS[req.phase].has(type)) {
    const phases = SCRIPT_PHASES.filter((p) => SCRIPT_KINDS[p].has(type));
    throw new UserError(
      `the service has no ${req.phase} script for ${withArticle(type)} integration (${where})`,
      phases.length ? `${type} has scripts for: ${phases.join(', ')}` : `${type} integrations have no scripts: govops creates them directly`,
    );
  }
  if (autoBootstrap === true) {
    throw new UserError(
      `Integration/${req.name} has autoBootstrap: true (${where}); scripts are for the manual flow only`,
      'with autoBootstrap true the service sets up the platform itself; set autoBootstrap: false to use scripts',
    );
  }
  return loaded;
}

/** Phases that act on the integration as the service holds it (its id, or its failed creation), not on the manifest's next version. */
const LIVE_PHASES: ReadonlySet<ScriptPhase> = new Set(['delete', 'cleanup', 'post-cleanup']);

/** The kind has the phase's script and the integration is in the manual flow. */
function phaseApplies(phase: ScriptPhase, type: string | undefined, manual: boolean): boolean {
  return manual && isIntegrationType(type) && SCRIPT_KINDS[phase].has(type);
}

/**
 * The acknowledgment of a phase for the manifest as it is (offline: no service call, no secret resolved).
 * `initial-create` is acknowledged as `create`, `post-cleanup` as `cleanup`.
 */
export async function acknowledgmentFor(
  req: Pick<ScriptRequest, 'name' | 'phase' | 'paths' | 'cwd' | 'secretScope' | 'stateNamed'> & { statePath?: string },
  load: ScriptDeps['load'],
): Promise<{ line: string; manifest: LoadedManifest<IntegrationManifest> }> {
  const loaded = await scriptManifest(req, load);
  const phase = ackPhaseOf(req.phase);
  const token = manualStepToken(phase, loaded.manifest.spec.type, loaded.manifest.spec.config);
  return { line: acknowledgmentLine([{ phase, token }]), manifest: loaded };
}

/** Find the integration, check the phase applies, resolve secrets, find its id when needed, fetch the script. */
export async function fetchScript(req: ScriptRequest, deps: ScriptDeps): Promise<ScriptResult> {
  const loaded = await scriptManifest(req, deps.load);
  const { type } = loaded.manifest.spec;

  const resolved = resolveSecrets(loaded, { env: req.env, ...(req.secretScope ? { scope: req.secretScope } : {}) });
  const unresolved = resolved.diagnostics.filter((d) => d.severity === 'error');
  if (unresolved.length) {
    throw new UserError(`cannot resolve the secrets of Integration/${req.name}:\n${unresolved.map((d) => formatDiagnostic(d)).join('\n')}`);
  }
  for (const d of resolved.diagnostics) deps.logger.warn(formatDiagnostic(d));
  const spec = resolved.manifest.spec;
  const body: IntegrationBody = { type, autoBootstrap: false, config: spec.config ?? {} };

  let id: string | undefined;
  if (SCRIPT_PHASES_WITH_ID.has(req.phase)) id = await liveId(req, body, deps);
  deps.logger.debug({ name: req.name, phase: req.phase, id }, 'fetching script');
  const script = await deps.api.generateScript(req.phase, id === undefined ? { body } : { id, body });
  return id === undefined ? { script, manifest: loaded } : { script, id, manifest: loaded };
}

/** The live id: from govops state first, then by natural key in the service. */
async function liveId(req: ScriptRequest, body: IntegrationBody, deps: ScriptDeps): Promise<string> {
  const state = await readState(req);
  const owned = getResource(state, 'Integration', req.name);
  if (owned && owned.id !== '') {
    await assertStillRecorded(owned, req, deps.api);
    return owned.id;
  } // a pending create has no id yet: found by natural key below
  const key = naturalKey(body.type, body.config);
  const matches = (await deps.api.listIntegrations()).filter((i) => i.type === body.type && naturalKey(i.type, i.config) === key);
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) {
    throw new UserError(
      `Integration/${req.name} does not exist in the service (not in ${req.statePath}, and no live ${key})`,
      `the ${req.phase} script is for an existing integration; for a new one use --phase create`,
    );
  }
  throw new UserError(`${matches.length} live integrations match ${key} (ids ${matches.map((m) => m.id).join(', ')}); cannot tell which is Integration/${req.name}`);
}

/**
 * The recorded id must still name the integration govops recorded: a service may give a deleted integration's id to
 * a new one (the plan forgets such a record, src/plan/stale.ts), and the script would then be for another team's
 * integration, to be run in its platform.
 */
async function assertStillRecorded(owned: ManagedResource, req: ScriptRequest, api: ServiceApi): Promise<void> {
  let live;
  try {
    live = await api.getIntegration(owned.id);
  } catch (err) {
    if (err instanceof ApiError && err.code === ErrorCode.apiNotFound) {
      throw new UserError(`Integration/${req.name}: its id ${owned.id} (recorded in ${req.statePath}) is not in the service any more`, 'govops plan shows what happens to it next');
    }
    throw err;
  }
  const now = liveIntegrationIdentity(live);
  const other = owned.identity !== undefined ? owned.identity !== now : owned.type !== undefined && live.type !== owned.type;
  if (other) {
    throw new UserError(
      `Integration/${req.name}: its recorded id ${owned.id} now names another integration (${now}; recorded ${owned.identity ?? owned.type})`,
      'the id was given to a new integration after the recorded one was deleted: no script is fetched for it; govops plan forgets the stale record',
    );
  }
}

export async function scriptsAction(name: string, paths: string[], opts: ScriptsFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  if (opts.out === '-') {
    // written to a file named `-`, with nothing on stdout: `--out - | psql` ran no script
    throw new UserError('--out -: --out names the file to write the script to', 'leave --out out: the script is printed on standard output');
  }
  const req = { name, phase: opts.phase, paths, cwd: process.cwd(), secretScope: secretScopeFromFlags(opts), statePath: opts.state, stateNamed: command.getOptionValueSource('state') !== 'default' };
  // `-`: the manifests from standard input (read once, whichever load asks)
  const stream = stdinStream(paths);
  const load: typeof loadManifests = (p, o) => loadManifests(p, { ...o, ...stream });
  if (opts.ack) {
    // offline: the token comes from the manifest alone
    const ack = await acknowledgmentFor(req, load);
    ctx.stdout.write(`${ack.line}\n`);
    // the step's one token lets the create (delete) through: after the first of two scripts it is not time yet
    const last = lastScriptOfStep(opts.phase, ack.manifest.manifest.spec.type);
    if (last !== opts.phase) {
      ctx.stderr.write(`add it once the ${last} script ran too (${printable(scriptCommand(name, last, ack.manifest.source.file))}): it lets the ${last === 'create' ? 'create' : 'delete'} through\n`);
    }
    return;
  }
  const api = clientFromOptions(opts, ctx.logger);
  try {
    const res = await fetchScript({ ...req, env: process.env }, { load, api, logger: ctx.logger });
    const text = res.script.endsWith('\n') ? res.script : `${res.script}\n`;
    if (opts.out) {
      // Scripts may name users and roles: written private
      await writeFileAtomic(opts.out, text, { mode: 0o600, what: 'the script' });
      ctx.stderr.write(`wrote the ${opts.phase} script for Integration/${name}${res.id ? ` (id ${printable(res.id)})` : ''} to ${opts.out}\n`);
    } else {
      // The script is the product asked for (it may carry the credentials it sets up): not redacted.
      ctx.rawStdout.write(text);
    }
    ctx.stderr.write(`next: ${FOLLOW_UP[opts.phase]}\n`);
    const ack = await acknowledgmentFor(req, async () => ({ manifests: [res.manifest], diagnostics: [] }));
    const src = res.manifest.source;
    // the file name is the repository's: escaped for the terminal
    ctx.stderr.write(`${ackIntro(opts.phase, res.manifest.manifest.spec.type)} (Integration/${name}, ${printable(src.file)}:${src.line}):\n${ack.line}\n`);
  } finally {
    await api.close();
  }
}

/** What the acknowledgment printed after each script stands for. */
const ACK_INTRO: Record<ScriptPhase, string> = {
  create: 'once it ran, acknowledge it under metadata.annotations',
  'initial-create': 'once this script and the --phase create one ran, acknowledge both under metadata.annotations',
  edit: 'once it ran, acknowledge it under metadata.annotations',
  delete: 'once it ran, acknowledge it under metadata.annotations (next to "govops/delete": "true")',
  cleanup: 'once it ran, acknowledge it under metadata.annotations (next to "govops/delete": "true")',
  'post-cleanup': 'once it ran, acknowledge the cleanup under metadata.annotations (next to "govops/delete": "true")',
};

/**
 * The intro of the acknowledgment after a script: a step of two scripts is acknowledged once both ran (the token lets
 * the create or delete through), so after the first, and for sql_analytics' cleanup, it says to wait for the second.
 */
function ackIntro(phase: ScriptPhase, type: IntegrationType): string {
  if (phase === 'cleanup' && lastScriptOfStep(phase, type) === 'post-cleanup') {
    return 'once this script and the --phase post-cleanup one ran, acknowledge both under metadata.annotations (next to "govops/delete": "true")';
  }
  return ACK_INTRO[phase];
}
