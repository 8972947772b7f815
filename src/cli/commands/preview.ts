/**
 * `govops preview [PATH...]`: what a pull request would change, as Markdown for a PR comment (with a
 * hidden marker so a bot can edit its comment in place). Plans against the live service when it can;
 * otherwise an offline, manifest-level preview. Exit 0 no changes, 2 changes, 1 invalid or failed.
 * The work is in preview-action.ts, loaded when the command runs.
 */
import type { Command } from 'commander';
import { addPlanOptions, type PlanFlags } from './plan.js';

export interface PreviewFlags extends PlanFlags {
  base?: string;
  out?: string;
  requireLive?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('preview')
    .description('render what a pull request would change, as Markdown for a PR comment (exit 0 none, 2 changes, 1 error)')
    .option('--base <ref>', 'compare with the merge-base of HEAD and REF (lists changed manifest files; offline diff base)')
    .option('--out <file>', 'write the comment (or the JSON with -o json) to FILE instead of stdout')
    .option('--require-live', 'fail (exit 1) instead of falling back to an offline preview when the service cannot be consulted');
  addPlanOptions(cmd).action(async (paths: string[], flags: PreviewFlags, command: Command) => {
    const { previewAction } = await import('./preview-action.js');
    await previewAction(paths, flags, command);
  });
}
