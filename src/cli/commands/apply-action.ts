/** What `govops apply` does (loaded only when it runs; declared in apply.ts). */
import type { Command } from 'commander';
import { UserError } from '../../errors.js';
import { renderMarkdown } from '../../plan/render-markdown.js';
import { reconcile } from '../../reconcile/engine.js';
import { applyJson, failureSummary, outcomeMarkdown, outcomeTable, progressLine } from '../../reconcile/report.js';
import { applyTuningFrom } from '../apply-options.js';
import { clientFromOptions, resolveConnection } from '../connection.js';
import { serviceBaseUrl } from '../../api/transport.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';
import { GOVOPS_VERSION } from '../version.js';
import { printable, printableLines } from '../../util/terminal.js';
import { looksLikeSavedPlan, readSavedPlan } from '../../reconcile/saved-plan.js';
import type { ReconcileOptions, ReconcileResult } from '../../reconcile/types.js';
import { savedPlanSettings, sourceSettingsFrom } from '../settings.js';
import { assertStateLockHeld } from '../../state/lock.js';
import type { ApplyFlags } from './apply.js';
import { printDiagnostics, printPlan, reconcileOptions } from './plan-action.js';
import { counted, agree } from '../../util/plural.js';

/** Flags `apply FILE` refuses: the saved plan fixes them. */
const PLAN_FLAGS: Array<[keyof ApplyFlags, string]> = [
  ['prune', '--prune'],
  ['allowReplace', '--allow-replace'],
  ['maxDeletes', '--max-deletes'],
  ['allowEmpty', '--allow-empty'],
  ['resendSecrets', '--resend-secrets'],
  ['only', '--only'],
  ['revision', '--revision'],
];

/** The options of applying a saved plan: everything that decides the plan comes from the file. */
async function savedPlanOptions(file: string, flags: ApplyFlags, ctx: CliContext, command: Command): Promise<ReconcileOptions & { statePath: string }> {
  const given = PLAN_FLAGS.filter(([k]) => flags[k] !== undefined).map(([, flag]) => flag);
  // (these two always have a value, a default or from the environment: only the command line counts)
  if (command.getOptionValueSource('manualSteps') === 'cli') given.push('--manual-steps');
  if (command.getOptionValueSource('adopt') === 'cli') given.push('--no-adopt');
  if (given.length) {
    throw new UserError(`${given.join(', ')} cannot be given with a saved plan: ${file} fixes the options it was planned with`, `apply it as it is, or plan again with the options you want (govops plan --out FILE)`);
  }
  const saved = await readSavedPlan(file);
  // Terraform's rule: the values a govops fills in (defaults, normalisation) are not among the facts compared
  if (saved.govopsVersion !== GOVOPS_VERSION) {
    throw new UserError(
      `${file} was planned by ${saved.govopsVersion === undefined ? 'an earlier govops' : `govops ${printable(saved.govopsVersion)}`}; this is govops ${GOVOPS_VERSION}, which applies only the plans it made: nothing was applied`,
      'plan again with this govops (govops plan --out FILE), review, and apply the new plan',
    );
  }
  // Terraform's plan records its backend: a plan read from one service is not carried out in another (a staging plan of
  // creates applied where GOVOPS_URL names prod: nothing live there tells the two apart)
  const service = serviceBaseUrl(resolveConnection(flags).baseUrl);
  if (saved.service !== service) {
    throw new UserError(
      saved.service === undefined
        ? `${file} does not say which service it was planned against; this apply would send to ${service}: nothing was applied`
        : `${file} was planned against ${printable(saved.service)}; this apply would send to ${service}: nothing was applied`,
      saved.service === undefined
        ? 'plan again against this service (govops plan --out FILE), review, and apply the new plan'
        : 'apply it with the --url (or GOVOPS_URL) it was planned with, or plan again against this service and review that plan',
    );
  }
  // GOVOPS_NO_ADOPT is the operator's guard: a plan saved without it is not carried out where it is set.
  if (command.getOptionValueSource('adopt') === 'env' && saved.options.noAdopt !== true) {
    throw new UserError(
      `GOVOPS_NO_ADOPT is set, but ${file} was planned without --no-adopt: nothing was applied`,
      'plan again where GOVOPS_NO_ADOPT is set (govops plan --out FILE), review, and apply the new plan',
    );
  }
  // GOVOPS_MANUAL_STEPS=require is the same kind of guard: a plan saved with `trust` writes manual-flow integrations
  // without their acknowledged scripts, which this deployment requires
  if (command.getOptionValueSource('manualSteps') === 'env' && flags.manualSteps === 'require' && saved.options.manualSteps === 'trust') {
    throw new UserError(
      `GOVOPS_MANUAL_STEPS is require, but ${file} was planned with --manual-steps trust: nothing was applied`,
      'plan again where GOVOPS_MANUAL_STEPS is require (govops plan --out FILE), acknowledge the scripts, and apply the new plan',
    );
  }
  return {
    // a plan of a stream (`plan - --out FILE`) reads the stream again: `kustomize build … | govops apply FILE`
    source: sourceSettingsFrom(saved.paths, flags),
    plan: savedPlanSettings(saved.options),
    revision: saved.revision,
    apply: true,
    saved: { plan: saved.plan, facts: saved.facts },
    logger: ctx.logger,
    statePath: flags.state,
  };
}

/** First signal: finish the calls in flight, save, start nothing new. Second: abort the calls in flight too. */
function interruptions(ctx: CliContext): { signal: AbortSignal; forceSignal: AbortSignal; release(): void } {
  const abort = new AbortController();
  const force = new AbortController();
  const onSignal = (): void => {
    if (!abort.signal.aborted) {
      ctx.stderr.write('interrupted: finishing the calls in flight and saving the state, starting nothing new (again to abort them)\n');
      abort.abort();
    } else if (!force.signal.aborted) {
      ctx.stderr.write('interrupted again: aborting the calls in flight; the state records what may have been sent\n');
      force.abort();
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: abort.signal,
    forceSignal: force.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/**
 * Progress lines gathered and written together: one write per turn of the event loop (or per 64 KiB) instead of one
 * per resource (10,000 writes through the redactor for 10,000 webhooks finishing in a few batches, issue #26). The
 * bytes and their order are the same; a line waits at most for the end of the current turn.
 */
export class LineBuffer {
  private text = '';
  private scheduled?: NodeJS.Immediate;
  constructor(private readonly out: NodeJS.WritableStream) {}

  write(line: string): void {
    this.text += line;
    if (this.text.length >= 65_536) this.flush();
    else this.scheduled ??= setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.text === '') return;
    const text = this.text;
    this.text = '';
    this.out.write(text);
  }
}

/** The plan before applying (text), then a progress line as each resource finishes. */
function progress(ctx: CliContext): Pick<ReconcileOptions, 'onPlan' | 'onOutcome'> & { flush(): void } {
  const text = ctx.options.output === 'text';
  const tty = Boolean((ctx.stdout as NodeJS.WriteStream).isTTY);
  const progressOut = new LineBuffer(text ? ctx.stdout : ctx.stderr);
  return {
    onPlan: (plan) => {
      if (text) printPlan(plan, ctx);
    },
    onOutcome: (o, done, total) => {
      if (done === 1 && text) progressOut.write('\n');
      // In text the outcome table below lists each error: the progress line does not repeat it.
      progressOut.write(`${progressLine(o, done, total, tty && text, !text)}\n`);
    },
    flush: () => progressOut.flush(),
  };
}

/** The result on stdout: JSON, markdown, or (text) the outcome table after the progress lines. */
function printResult(result: ReconcileResult, ctx: CliContext): void {
  printDiagnostics(result, ctx);
  if (ctx.options.output === 'json') ctx.stdout.write(applyJson(result));
  else if (ctx.options.output === 'markdown') {
    if (result.plan && !result.stale) ctx.stdout.write(renderMarkdown(result.plan, result.diagnostics));
    if (result.stage === 'apply' || result.outcomes.length) ctx.stdout.write(`\n${outcomeMarkdown(result.outcomes)}`);
  } else {
    // text: the plan was printed before applying (onPlan), progress lines as resources finished
    if (result.outcomes.length) ctx.stdout.write(`\n${outcomeTable(result.outcomes)}`);
    else if (result.ok) ctx.stdout.write('\nNothing to apply.\n');
  }
}

/** The exit code, with what stopped the apply (stale saved plan, failure, changes awaiting a manual step) on stderr. */
function exitCode(result: ReconcileResult, paths: string[], ctx: CliContext): number {
  if (result.stale?.length) {
    ctx.stderr.write(`error: the saved plan ${paths[0]} is stale; nothing was applied. Since it was made:\n${result.stale.map((r) => `  - ${printable(r)}\n`).join('')}Plan again (govops plan --out FILE), review, and apply the new plan.\n`);
    return EXIT.error;
  }
  if (!result.ok) {
    // the service's own words may be in it (a refusal's message): escaped for the terminal, as every error line
    ctx.stderr.write(`error: ${printableLines(failureSummary(result, 'applied', ctx.options.output === 'text'))}\n`);
    return EXIT.error;
  }
  const awaiting = result.outcomes.filter((o) => o.result === 'blocked');
  if (!awaiting.length) return EXIT.ok;
  ctx.stderr.write(
    `blocked: ${counted(awaiting.length, 'change')} ${agree(awaiting.length, 'awaits', 'await')} a manual step and ${agree(awaiting.length, 'was', 'were')} not applied (exit ${EXIT.awaitingManualStep}): ` +
      `${awaiting.map((o) => `${o.resourceKind}/${o.name}`).join(', ')}. Run the scripts the plan names, add the ` +
      `govops/manual-step annotation it shows, and apply again.\n`,
  );
  return EXIT.awaitingManualStep;
}

export async function applyAction(paths: string[], flags: ApplyFlags, command: Command, revision: Promise<string | undefined>): Promise<void> {
  const ctx = contextFrom(command);
  const tuning = applyTuningFrom(flags);
  const saved = await looksLikeSavedPlan(paths);
  // a saved plan carries its own revision: the one asked for the paths is not needed
  if (saved) revision.catch(() => undefined);
  const opts = saved ? await savedPlanOptions(paths[0]!, flags, ctx, command) : await reconcileOptions(paths, flags, ctx, true, revision);
  const stop = interruptions(ctx);
  // a connection per slot, and some for the poller and webhook batches; no write leaves once a PostgreSQL state's lock
  // is lost (its session ended: another writer may hold it by then)
  const api = clientFromOptions(flags, ctx.logger, {
    connections: (tuning.concurrency ?? 8) + 8,
    writeGate: (method, path) => assertStateLockHeld(opts.statePath, `${method} ${path}`),
  });
  const { flush, ...report } = progress(ctx);
  try {
    const result = await reconcile(api, { ...opts, tuning, signal: stop.signal, forceSignal: stop.forceSignal, env: process.env, ...report });
    flush();
    printResult(result, ctx);
    process.exitCode = exitCode(result, paths, ctx);
  } finally {
    flush();
    stop.release();
    await api.close();
  }
}
