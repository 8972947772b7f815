/**
 * `govops preview [PATH...] --base REF`: what a pull request changes, as Markdown for a PR comment (with a
 * hidden marker so a bot can edit its comment in place): per touched resource the change, the live action,
 * a server-side dry run and the manual-flow scripts; drift separately. Offline (manifests only) when the
 * service cannot be consulted. Exit 0 no changes, 2 changes, 1 invalid, failed dry run or other failure.
 * The work is in preview-action.ts, loaded when the command runs.
 */
import type { Command } from 'commander';
import { addPlanOptions, type PlanFlags } from './plan.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface PreviewFlags extends PlanFlags {
  base?: string;
  out?: string;
  requireLive?: boolean;
  /** `--offline` alone is `true`; with a reason, the reason. */
  offline?: string | boolean;
  dryRun?: boolean;
  dryRunNewTargets?: boolean;
  scripts?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('preview')
    .description(COMMAND_SUMMARIES.preview.description)
    .option('--base <ref>', 'compare the commit HEAD with its merge-base with REF (both read from Git objects)')
    .option('--out <file>', 'write the comment (or the JSON with -o json) to FILE instead of stdout')
    .option('--require-live', 'fail (exit 1) instead of falling back to an offline preview when the service cannot be consulted')
    .option('--offline [reason]', 'do not contact the service (e.g. a pull request from a fork); the reason is shown in the comment')
    .option('--no-dry-run', 'do not send server-side dry runs')
    .option('--dry-run-new-targets', 'also dry-run integrations the base revision does not have (sends their secrets to hosts the pull request chose)')
    .option('--no-scripts', 'do not fetch the manual-flow scripts');
  // (no standard input: both revisions are read from Git objects)
  addPlanOptions(cmd, 'manifest files or folders, read at both revisions from Git objects (default: .)').action(async (paths: string[], flags: PreviewFlags, command: Command) => {
    const { previewAction } = await import('./preview-action.js');
    await previewAction(paths, flags, command);
  });
}
