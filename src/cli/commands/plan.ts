/**
 * `govops plan [PATH...]`: show what apply would do. Read-only: only the two list requests are made.
 * This file only declares the command and the options plan, apply and preview share; the work is in
 * plan-action.ts, loaded when the command runs.
 */
import type { Command } from 'commander';
import type { ManualStepsMode } from '../../plan/types.js';
import { stateOption } from '../state-option.js';
import { addConnectionOptions, type ConnectionFlags } from '../connection-options.js';
import { manualStepsOption, noAdoptOption } from '../flags.js';
import { addSecretOptions, type SecretFlags } from '../secret-options.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface PlanFlags extends ConnectionFlags, SecretFlags {
  state: string;
  prune?: boolean;
  allowReplace?: boolean;
  resendSecrets?: boolean;
  maxDeletes?: string;
  allowEmpty?: boolean;
  revision?: string;
  manualSteps?: ManualStepsMode;
  /** `--no-adopt` (commander's name): false when given. */
  adopt?: boolean;
  /** `--only Kind/name` patterns (repeatable). */
  only?: string[];
}

/** Collect a repeatable option's values. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The paths argument of plan and apply. */
const PLAN_PATHS = 'manifest files or folders, or - for a multi-document YAML stream on standard input (default: .)';

/** Options plan, apply and preview share (`paths`: the help of the paths argument, when it differs). */
export function addPlanOptions<C extends Command>(cmd: C, paths = PLAN_PATHS): C {
  cmd
    .argument('[paths...]', paths)
    .addOption(stateOption())
    .option('--prune', 'delete resources govops manages whose manifest is gone (never anything else)')
    .option('--allow-replace', 'allow replacing (delete + create) integrations whose non-editable attributes changed')
    .option(
      '--max-deletes <n>',
      'allow at most N deletes and replaces (default: deletes of at most 25% of the managed resources); over it, none is done',
    )
    .option('--allow-empty', 'let an empty manifest set prune (refused by default: it usually means a broken checkout)')
    .option('--resend-secrets', 'send once the credentials govops cannot compare (adopted resources: masked by the service, no fingerprint in state) instead of recording them as they are in the manifest')
    .option(
      '--only <Kind/name>',
      'plan and act on these resources only (repeatable; globs * ? [..] allowed, e.g. "Webhook/pager-*"); a delete only of a resource named exactly',
      collect,
    )
    .addOption(noAdoptOption())
    .addOption(manualStepsOption());
  addSecretOptions(cmd);
  return addConnectionOptions(cmd);
}

/**
 * The revision `plan`/`apply` will record (`revisionFor`), asked as the command starts: its git calls run while the
 * action's modules load.
 */
export function askRevision(paths: readonly string[], flags: { revision?: string }): Promise<string | undefined> {
  return import('../../reconcile/revision.js').then((r) => r.revisionFor(paths, flags.revision));
}

/** `--revision` (plan and apply only: they record it). */
export function addRevisionOption<C extends Command>(cmd: C): C {
  cmd.option('--revision <rev>', 'revision recorded in the plan and state (default: git HEAD of the manifests, "-dirty" if a manifest has uncommitted changes)');
  return cmd;
}

export function register(program: Command): void {
  const cmd = program
    .command('plan')
    .description(COMMAND_SUMMARIES.plan.description)
    .option('--detailed-exitcode', 'exit 0 when there are no changes, 2 when there are, 1 on error')
    .option('--out <file>', 'also save the plan to FILE (JSON, no secret values) for `govops apply FILE`, which carries out exactly this plan or refuses');
  addPlanOptions(addRevisionOption(cmd)).action(async (paths: string[], flags: PlanFlags & { detailedExitcode?: boolean; out?: string }, command: Command) => {
    const revision = askRevision(paths, flags);
    const { planAction } = await import('./plan-action.js');
    await planAction(paths, flags, command, revision);
  });
}
