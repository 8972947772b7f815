/** What `govops apply` does (loaded only when it runs; declared in apply.ts). */
import type { Command } from 'commander';
import { UserError } from '../../errors.js';
import { renderMarkdown } from '../../plan/render-markdown.js';
import { reconcile } from '../../reconcile/engine.js';
import { applyJson, failureSummary, outcomeMarkdown, outcomeTable, progressLine } from '../../reconcile/report.js';
import { parseDuration } from '../../util/duration.js';
import { applyTuningFrom } from '../apply-options.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';
import { looksLikeSavedPlan, readSavedPlan } from '../../reconcile/saved-plan.js';
import type { ReconcileOptions } from '../../reconcile/types.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { stdinStream } from '../stdin.js';
import { parseCount } from '../flags.js';
import type { ApplyFlags } from './apply.js';
import { printDiagnostics, printPlan, reconcileOptions } from './plan-action.js';

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
  if (command.getOptionValueSource('manualSteps') === 'cli') given.push('--manual-steps');
  if (given.length) {
    throw new UserError(`${given.join(', ')} cannot be given with a saved plan: ${file} fixes the options it was planned with`, `apply it as it is, or plan again with the options you want (govops plan --out FILE)`);
  }
  const saved = await readSavedPlan(file);
  const o = saved.options;
  return {
    root: process.cwd(),
    paths: saved.paths,
    // a plan of a stream (`plan - --out FILE`) reads the stream again: `kustomize build … | govops apply FILE`
    ...stdinStream(saved.paths),
    ...(saved.revision !== undefined ? { revision: saved.revision } : {}),
    secretScope: secretScopeFromFlags(flags),
    apply: true,
    prune: Boolean(o.prune),
    allowReplace: Boolean(o.allowReplace),
    ...(o.resendSecrets ? { resendSecrets: true } : {}),
    ...(typeof o.maxDeletes === 'number' ? { maxDeletes: o.maxDeletes } : {}),
    ...(o.allowEmpty ? { allowEmpty: true } : {}),
    ...(Array.isArray(o.only) && o.only.length ? { only: o.only } : {}),
    manualSteps: o.manualSteps === 'trust' ? 'trust' : 'require',
    saved: { plan: saved.plan, facts: saved.facts },
    logger: ctx.logger,
    statePath: flags.state,
  };
}

export async function applyAction(paths: string[], flags: ApplyFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const concurrency = parseCount('--concurrency', flags.concurrency, 1)!;
  let timeoutMs: number;
  try {
    timeoutMs = parseDuration(flags.timeout);
  } catch (err) {
    throw new UserError(`--timeout: ${(err as Error).message}`);
  }
  const tuning = applyTuningFrom(flags);
  const opts = (await looksLikeSavedPlan(paths)) ? await savedPlanOptions(paths[0]!, flags, ctx, command) : await reconcileOptions(paths, flags, ctx, true);
  const text = ctx.options.output === 'text';
  const tty = Boolean((ctx.stdout as NodeJS.WriteStream).isTTY);
  const progressOut = text ? ctx.stdout : ctx.stderr;
  // First signal: finish the calls in flight, save, start nothing new. Second: abort the calls in flight too.
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
  // a connection per slot, and some for the poller and webhook batches
  const api = clientFromOptions(flags, ctx.logger, { connections: concurrency + 8 });
  try {
    const result = await reconcile(api, {
      ...opts,
      ...tuning,
      concurrency,
      timeoutMs,
      signal: abort.signal,
      forceSignal: force.signal,
      env: process.env,
      onPlan: (plan) => {
        if (text) printPlan(plan, ctx);
      },
      onOutcome: (o, done, total) => {
        if (done === 1 && text) progressOut.write('\n');
        // In text the outcome table below lists each error: the progress line does not repeat it.
        progressOut.write(`${progressLine(o, done, total, tty && text, !text)}\n`);
      },
    });
    printDiagnostics(result, ctx);
    if (ctx.options.output === 'json') ctx.stdout.write(applyJson(result));
    else if (ctx.options.output === 'markdown') {
      if (result.plan && !result.stale) ctx.stdout.write(renderMarkdown(result.plan));
      if (result.stage === 'apply' || result.outcomes.length) ctx.stdout.write(`\n${outcomeMarkdown(result.outcomes)}`);
    } else {
      // text: the plan was printed before applying (onPlan), progress lines as resources finished
      if (result.outcomes.length) ctx.stdout.write(`\n${outcomeTable(result.outcomes)}`);
      else if (result.ok) ctx.stdout.write('\nNothing to apply.\n');
    }
    if (result.stale?.length) {
      ctx.stderr.write(`error: the saved plan ${paths[0]} is stale; nothing was applied. Since it was made:\n${result.stale.map((r) => `  - ${r}\n`).join('')}Plan again (govops plan --out FILE), review, and apply the new plan.\n`);
      process.exitCode = EXIT.error;
      return;
    }
    if (!result.ok) {
      ctx.stderr.write(`error: ${failureSummary(result, 'applied', ctx.options.output === 'text')}\n`);
      process.exitCode = EXIT.error;
      return;
    }
    const awaiting = result.outcomes.filter((o) => o.result === 'blocked');
    if (awaiting.length) {
      ctx.stderr.write(
        `blocked: ${awaiting.length} change(s) await a manual step and were not applied (exit ${EXIT.awaitingManualStep}): ` +
          `${awaiting.map((o) => `${o.resourceKind}/${o.name}`).join(', ')}. Run the scripts the plan names, add the ` +
          `govops/manual-step annotation it shows, and apply again.\n`,
      );
      process.exitCode = EXIT.awaitingManualStep;
      return;
    }
    process.exitCode = EXIT.ok;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await api.close();
  }
}
