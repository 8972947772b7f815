/** What `govops apply` does (loaded only when it runs; declared in apply.ts). */
import type { Command } from 'commander';
import { UserError } from '../../errors.js';
import { renderMarkdown } from '../../plan/render-markdown.js';
import { reconcile } from '../../reconcile/engine.js';
import { applyJson, failureSummary, outcomeMarkdown, outcomeTable, progressLine } from '../../reconcile/report.js';
import { parseDuration } from '../../util/duration.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom, EXIT } from '../context.js';
import { parseCount } from '../flags.js';
import type { ApplyFlags } from './apply.js';
import { printDiagnostics, printPlan, reconcileOptions } from './plan-action.js';

export async function applyAction(paths: string[], flags: ApplyFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const concurrency = parseCount('--concurrency', flags.concurrency, 1)!;
  let timeoutMs: number;
  try {
    timeoutMs = parseDuration(flags.timeout);
  } catch (err) {
    throw new UserError(`--timeout: ${(err as Error).message}`);
  }
  const opts = await reconcileOptions(paths, flags, ctx, true);
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
  const api = clientFromOptions(flags, ctx.logger);
  try {
    const result = await reconcile(api, {
      ...opts,
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
      if (result.plan) ctx.stdout.write(renderMarkdown(result.plan));
      if (result.stage === 'apply' || result.outcomes.length) ctx.stdout.write(`\n${outcomeMarkdown(result.outcomes)}`);
    } else {
      // text: the plan was printed before applying (onPlan), progress lines as resources finished
      if (result.outcomes.length) ctx.stdout.write(`\n${outcomeTable(result.outcomes)}`);
      else if (result.ok) ctx.stdout.write('\nNothing to apply.\n');
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
