/**
 * `govops apply [PATH...]`: plan, then carry the plan out (dry run, real call, status polling per
 * resource). It never prompts (like `terraform apply -auto-approve`): review with `govops plan` first.
 * `govops apply FILE` carries out a plan saved by `govops plan --out FILE`, or refuses when it is stale.
 * The work is in apply-action.ts, loaded when the command runs.
 */
import type { Command } from 'commander';
import { addApplyTuningOptions, type ApplyTuningFlags } from '../apply-options.js';
import { addPlanOptions, addRevisionOption, askRevision, type PlanFlags } from './plan.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface ApplyFlags extends PlanFlags, ApplyTuningFlags {
  concurrency: string;
  timeout: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('apply')
    .description(COMMAND_SUMMARIES.apply.description)
    .option('--concurrency <n>', 'resources applied at the same time', '8')
    .option('--timeout <duration>', 'overall time limit for the apply, e.g. 10m', '10m');
  addApplyTuningOptions(cmd);
  addPlanOptions(addRevisionOption(cmd)).action(async (paths: string[], flags: ApplyFlags, command: Command) => {
    const revision = askRevision(paths, flags); // (unused when applying a saved plan)
    const { applyAction } = await import('./apply-action.js');
    await applyAction(paths, flags, command, revision);
  });
}
