/**
 * `govops preview [PATH...]`: what a pull request would change, as Markdown for a PR comment (with a
 * hidden marker so a bot can edit its comment in place). Plans against the live service when it can;
 * otherwise an offline, manifest-level preview. Exit 0 no changes, 2 changes, 1 invalid or failed.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { renderPreview } from '../../preview/render.js';
import { runPreview } from '../../preview/preview.js';
import { addPlanOptions, parseCount, type PlanFlags } from './plan.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom } from '../context.js';

interface PreviewFlags extends PlanFlags {
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
    const ctx = contextFrom(command);
    const maxDeletes = parseCount('--max-deletes', flags.maxDeletes);
    const result = await runPreview({
      root: process.cwd(),
      paths,
      ...(flags.base !== undefined ? { base: flags.base } : {}),
      statePath: flags.state,
      plan: { prune: Boolean(flags.prune), allowReplace: Boolean(flags.allowReplace), ...(maxDeletes !== undefined ? { maxDeletes } : {}) },
      env: process.env,
      logger: ctx.logger,
      connect: () => clientFromOptions(flags, ctx.logger),
      ...(flags.requireLive ? { requireLive: true } : {}),
    });
    const markdown = renderPreview(result);
    const text = ctx.options.output === 'json' ? `${JSON.stringify({ ...result, markdown }, null, 2)}\n` : markdown;
    if (flags.out) await writeFile(flags.out, text);
    else ctx.stdout.write(text);
    if (result.error !== undefined) ctx.stderr.write(`error: ${result.error}\n`);
    else if (!result.valid) ctx.stderr.write('error: invalid manifests (see the comment)\n');
    if (result.liveError !== undefined) ctx.stderr.write(`warning: live state not consulted: ${result.liveError}\n`);
    process.exitCode = result.exitCode;
  });
}
