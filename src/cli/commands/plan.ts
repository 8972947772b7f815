/** `govops plan [PATH...]`: show what apply would do. Read-only: only the two list requests are made. */
import { Option, type Command } from 'commander';
import { UserError } from '../../errors.js';
import { renderJson } from '../../plan/render-json.js';
import { renderMarkdown } from '../../plan/render-markdown.js';
import { renderText } from '../../plan/render-text.js';
import type { Plan } from '../../plan/types.js';
import { reconcile } from '../../reconcile/engine.js';
import { gitRevision } from '../../reconcile/revision.js';
import { applyJson, diagnosticLine } from '../../reconcile/report.js';
import type { ReconcileOptions, ReconcileResult } from '../../reconcile/types.js';
import { DEFAULT_STATE_PATH } from '../../state/store.js';
import { addConnectionOptions, clientFromOptions, type ConnectionFlags } from '../connection.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';

export interface PlanFlags extends ConnectionFlags {
  state: string;
  prune?: boolean;
  allowReplace?: boolean;
  maxDeletes?: string;
  revision?: string;
}

/** Options plan and apply share. */
export function addPlanOptions<C extends Command>(cmd: C): C {
  cmd
    .argument('[paths...]', 'manifest files or folders (default: .)')
    .addOption(new Option('--state <path>', 'govops state file').default(DEFAULT_STATE_PATH))
    .option('--prune', 'delete resources govops manages whose manifest is gone (never anything else)')
    .option('--allow-replace', 'allow replacing (delete + create) integrations whose non-editable attributes changed')
    .option('--max-deletes <n>', 'refuse a plan that deletes (or replaces) more than N resources');
  return addConnectionOptions(cmd);
}

export function parseCount(flag: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min) throw new UserError(`${flag} must be a whole number >= ${min}, got "${text}"`);
  return Number(text);
}

/** `--revision` (plan and apply only: they record it). */
export function addRevisionOption<C extends Command>(cmd: C): C {
  cmd.option('--revision <rev>', 'revision recorded in the plan and state (default: git HEAD of the manifests, "-dirty" if a manifest has uncommitted changes)');
  return cmd;
}

/** The options of one reconcile, with the revision from --revision or the manifests' Git work tree. */
export async function reconcileOptions(
  paths: string[],
  flags: PlanFlags,
  ctx: CliContext,
  apply: boolean,
): Promise<ReconcileOptions & { statePath: string }> {
  const maxDeletes = parseCount('--max-deletes', flags.maxDeletes);
  const root = process.cwd();
  const list = paths.length ? paths : ['.'];
  const revision = flags.revision?.trim() || (await gitRevision(root, list));
  return {
    ...(revision ? { revision } : {}),
    root,
    paths: list,
    apply,
    prune: Boolean(flags.prune),
    allowReplace: Boolean(flags.allowReplace),
    ...(maxDeletes !== undefined ? { maxDeletes } : {}),
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

export function register(program: Command): void {
  const cmd = program
    .command('plan')
    .description('show the changes apply would make (create, update, replace, delete, adopt)')
    .option('--detailed-exitcode', 'exit 0 when there are no changes, 2 when there are, 1 on error');
  addPlanOptions(addRevisionOption(cmd)).action(async (paths: string[], flags: PlanFlags & { detailedExitcode?: boolean }, command: Command) => {
    const ctx = contextFrom(command);
    const opts = await reconcileOptions(paths, flags, ctx, false);
    const api = clientFromOptions(flags, ctx.logger);
    try {
      const result = await reconcile(api, { ...opts, env: process.env });
      printDiagnostics(result, ctx);
      if (result.plan) printPlan(result.plan, ctx);
      else if (ctx.options.output === 'json') ctx.stdout.write(applyJson(result));
      if (!result.ok) {
        ctx.stderr.write(`error: ${result.error ?? `reconcile failed at stage ${result.stage}`}\n`);
        process.exitCode = EXIT.error;
        return;
      }
      process.exitCode = flags.detailedExitcode && result.changed ? EXIT.changes : EXIT.ok;
    } finally {
      await api.close();
    }
  });
}
