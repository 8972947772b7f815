/** What `govops plan` does, and the plan helpers apply reuses (loaded only when they run; declared in plan.ts). */
import type { Diagnostic } from '../../manifests/types.js';
import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UserError } from '../../errors.js';
import { STDIN_PATH } from '../../manifests/stream.js';
import { isManifestFileName, savedPlan, writeSavedPlan } from '../../reconcile/saved-plan.js';
import { lockPathFor, withStateLock } from '../../state/lock.js';
import { loadState, saveState, stateExists } from '../../state/store.js';
import { isAwaitingManualStep, shellWord } from '../../plan/manual-steps.js';
import { isPgLocation } from '../../state/location.js';
import { renderJson } from '../../plan/render-json.js';
import { renderMarkdown } from '../../plan/render-markdown.js';
import { renderText } from '../../plan/render-text.js';
import type { Plan } from '../../plan/types.js';
import { reconcile } from '../../reconcile/engine.js';
import { applyJson, diagnosticLine, failureSummary } from '../../reconcile/report.js';
import type { ReconcileOptions, ReconcileResult } from '../../reconcile/types.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';
import { GOVOPS_VERSION } from '../version.js';
import { printableLines } from '../../util/terminal.js';
import { planSettingsFrom, sourceSettingsFrom } from '../settings.js';
import type { PlanFlags } from './plan.js';

/**
 * The options of one reconcile: the source and plan settings from the flags, the revision from --revision or the
 * manifests' Git work tree (`askRevision`, asked by the command as it starts).
 */
export async function reconcileOptions(
  paths: string[],
  flags: PlanFlags,
  ctx: CliContext,
  apply: boolean,
  revisionAsked: Promise<string | undefined>,
): Promise<ReconcileOptions & { statePath: string }> {
  const plan = planSettingsFrom(flags);
  const source = sourceSettingsFrom(paths, flags);
  const revision = await revisionAsked;
  return { source, plan, revision: revision || undefined, apply, logger: ctx.logger, statePath: flags.state };
}

/** Diagnostics to stderr (errors and warnings), as `file:line:col: ...`. */
export function printDiagnostics(result: ReconcileResult, ctx: CliContext): void {
  for (const d of result.diagnostics) ctx.stderr.write(`${diagnosticLine(d)}\n`);
}

/** The plan in the output format; a markdown plan (a pull-request comment) carries the manifests' warnings too. */
export function printPlan(plan: Plan | undefined, ctx: CliContext, diagnostics: readonly Diagnostic[] = []): void {
  if (!plan) return;
  const mode = ctx.options.output;
  if (mode === 'json') ctx.stdout.write(renderJson(plan));
  else if (mode === 'markdown') ctx.stdout.write(renderMarkdown(plan, diagnostics));
  else ctx.stdout.write(renderText(plan, { color: ctx.color }));
}

/**
 * `plan --out` needs a saved state: the plan's fingerprints are keyed with its key, which `apply FILE` must find
 * again. A missing one is created (under the lock) holding only a new key, no resource; nothing else is written, and
 * a state that exists is not locked (a PostgreSQL state was looked for as a file: never found, so every `plan --out`
 * took the lock, and failed GOVOPS_STATE_LOCKED while the daemon or an apply was writing).
 */
async function ensureStateFile(statePath: string): Promise<void> {
  if (await stateExists(statePath)) return;
  await withStateLock(statePath, async () => {
    if (await stateExists(statePath)) return;
    await saveState(statePath, await loadState(statePath));
  });
}

/**
 * The command that applies a saved plan: with the --state and --state-key given on the command line (its fingerprint
 * key checks the plan; without them, apply FILE reads another state and refuses the plan). A PostgreSQL URL is not
 * printed (it may hold a password): named only.
 */
function applyCommand(file: string, state: string, command: Command): string {
  const base = `govops apply ${shellWord(file)}`;
  // a PostgreSQL state's key (GOVOPS_STATE_URL with --state-key): the apply that leaves it out reads the `default` key's
  const stateKey = (command.optsWithGlobals() as { stateKey?: string }).stateKey;
  const key = isPgLocation(state) && stateKey !== undefined && command.getOptionValueSourceWithGlobals('stateKey') === 'cli' ? ` --state-key ${shellWord(stateKey)}` : '';
  if (command.getOptionValueSource('state') !== 'cli') return `${base}${key}`;
  return isPgLocation(state) ? `${base} --state URL${key} (the PostgreSQL state it was planned with)` : `${base} --state ${shellWord(state)}`;
}

/**
 * `--out` naming the state file (or its lock): the saved plan replaced the record of what govops owns, and every
 * resource it created would be someone else's to the next plan. Compared as files (a link, another spelling).
 */
async function refuseOutOntoState(out: string, statePath: string): Promise<void> {
  for (const file of [statePath, lockPathFor(statePath)]) {
    const [a, b] = await Promise.all([stat(out).catch(() => undefined), stat(file).catch(() => undefined)]);
    if (resolve(out) === resolve(file) || (a && b && a.dev === b.dev && a.ino === b.ino)) {
      throw new UserError(
        `--out ${out} is the state file${file === statePath ? '' : "'s lock"}: the saved plan would replace the record of what govops owns`,
        'save the plan elsewhere (govops plan --out reviewed.plan)',
      );
    }
  }
}

export async function planAction(
  paths: string[],
  flags: PlanFlags & { detailedExitcode?: boolean; out?: string },
  command: Command,
  revision: Promise<string | undefined>,
): Promise<void> {
  const ctx = contextFrom(command);
  if (flags.out === STDIN_PATH) {
    // `apply -` reads manifests from standard input: a plan saved as a file named `-` could never be applied by name
    revision.catch(() => undefined);
    throw new UserError('--out -: a saved plan is written to a file, which govops apply FILE reads back', 'name a file (govops plan --out reviewed.plan); the plan as JSON on standard output is -o json');
  }
  if (flags.out !== undefined && isManifestFileName(flags.out)) {
    // `apply NAME.yaml` reads manifests: the plan saved there could never be applied by the command printed for it
    revision.catch(() => undefined);
    throw new UserError(
      `--out ${flags.out}: govops apply reads a file named *.yaml or *.yml as manifests, so the plan saved there could not be applied`,
      'name the file otherwise (govops plan --out reviewed.plan), then govops apply reviewed.plan',
    );
  }
  const opts = await reconcileOptions(paths, flags, ctx, false, revision);
  if (flags.out !== undefined && !isPgLocation(opts.statePath)) await refuseOutOntoState(flags.out, opts.statePath);
  const api = clientFromOptions(flags, ctx.logger);
  try {
    if (flags.out) await ensureStateFile(opts.statePath);
    const result = await reconcile(api, { ...opts, env: process.env, recordFacts: Boolean(flags.out) });
    printDiagnostics(result, ctx);
    if (result.plan) printPlan(result.plan, ctx, result.diagnostics);
    else if (ctx.options.output === 'json') ctx.stdout.write(applyJson(result));
    if (!result.ok) {
      // the service's own words may be in it (a refusal's message): escaped for the terminal, as every error line
      ctx.stderr.write(`error: ${printableLines(failureSummary(result, 'planned', ctx.options.output === 'text'))}\n`);
      if (flags.out) ctx.stderr.write(`The plan was not saved to ${flags.out}.\n`);
      process.exitCode = EXIT.error;
      return;
    }
    if (flags.out && result.plan && result.facts) {
      await writeSavedPlan(
        flags.out,
        savedPlan({
          govopsVersion: GOVOPS_VERSION,
          service: api.baseUrl,
          revision: opts.revision,
          paths: opts.source.paths,
          options: opts.plan,
          facts: result.facts,
          plan: result.plan,
        }),
      );
      const note = `\nSaved the plan to ${flags.out}. To carry out exactly this plan (refused if anything it was made from changed): ${applyCommand(flags.out, flags.state, command)}\n`;
      (ctx.options.output === 'text' ? ctx.stdout : ctx.stderr).write(note);
    }
    // a change awaiting a manual step is still a change (`changed` leaves it out: it is not drift)
    const pending = result.changed || (result.plan?.changes.some(isAwaitingManualStep) ?? false);
    process.exitCode = flags.detailedExitcode && pending ? EXIT.changes : EXIT.ok;
  } finally {
    await api.close();
  }
}
