/** What `govops plan` does, and the plan helpers apply reuses (loaded only when they run; declared in plan.ts). */
import type { Command } from 'commander';
import { isAwaitingManualStep } from '../../plan/manual-steps.js';
import { renderJson } from '../../plan/render-json.js';
import { renderMarkdown } from '../../plan/render-markdown.js';
import { renderText } from '../../plan/render-text.js';
import type { Plan } from '../../plan/types.js';
import { reconcile } from '../../reconcile/engine.js';
import { gitRevision } from '../../reconcile/revision.js';
import { applyJson, diagnosticLine, failureSummary } from '../../reconcile/report.js';
import type { ReconcileOptions, ReconcileResult } from '../../reconcile/types.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';
import { parseCount } from '../flags.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import type { PlanFlags } from './plan.js';

/** The options of one reconcile, with the revision from --revision or the manifests' Git work tree. */
export async function reconcileOptions(
  paths: string[],
  flags: PlanFlags,
  ctx: CliContext,
  apply: boolean,
): Promise<ReconcileOptions & { statePath: string }> {
  const maxDeletes = parseCount('--max-deletes', flags.maxDeletes);
  const secretScope = secretScopeFromFlags(flags);
  const root = process.cwd();
  const list = paths.length ? paths : ['.'];
  const revision = flags.revision?.trim() || (await gitRevision(root, list));
  return {
    ...(revision ? { revision } : {}),
    root,
    paths: list,
    secretScope,
    apply,
    prune: Boolean(flags.prune),
    allowReplace: Boolean(flags.allowReplace),
    manualSteps: flags.manualSteps ?? 'require',
    ...(flags.resendSecrets ? { resendSecrets: true } : {}),
    ...(maxDeletes !== undefined ? { maxDeletes } : {}),
    ...(flags.allowEmpty ? { allowEmpty: true } : {}),
    logger: ctx.logger,
    statePath: flags.state,
  };
}

/** Diagnostics to stderr (errors and warnings), as `file:line:col: ...`. */
export function printDiagnostics(result: ReconcileResult, ctx: CliContext): void {
  for (const d of result.diagnostics) ctx.stderr.write(`${diagnosticLine(d)}\n`);
}

export function printPlan(plan: Plan | undefined, ctx: CliContext): void {
  if (!plan) return;
  const mode = ctx.options.output;
  if (mode === 'json') ctx.stdout.write(renderJson(plan));
  else if (mode === 'markdown') ctx.stdout.write(renderMarkdown(plan));
  else ctx.stdout.write(renderText(plan, { color: ctx.color }));
}

export async function planAction(paths: string[], flags: PlanFlags & { detailedExitcode?: boolean }, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const opts = await reconcileOptions(paths, flags, ctx, false);
  const api = clientFromOptions(flags, ctx.logger);
  try {
    const result = await reconcile(api, { ...opts, env: process.env });
    printDiagnostics(result, ctx);
    if (result.plan) printPlan(result.plan, ctx);
    else if (ctx.options.output === 'json') ctx.stdout.write(applyJson(result));
    if (!result.ok) {
      ctx.stderr.write(`error: ${failureSummary(result, 'planned', ctx.options.output === 'text')}\n`);
      process.exitCode = EXIT.error;
      return;
    }
    // a change awaiting a manual step is still a change (`changed` leaves it out: it is not drift)
    const pending = result.changed || (result.plan?.changes.some(isAwaitingManualStep) ?? false);
    process.exitCode = flags.detailedExitcode && pending ? EXIT.changes : EXIT.ok;
  } finally {
    await api.close();
  }
}
