/** What `govops preview` does (loaded only when it runs; declared in preview.ts). */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { renderPreview } from '../../preview/render.js';
import { runPreview } from '../../preview/preview.js';
import { secretRedactor } from '../../util/redact.js';
import { STDIN_PATH } from '../../manifests/stream.js';
import { UserError } from '../../errors.js';
import { printableLines } from '../../util/terminal.js';
import { clientFromOptions } from '../connection.js';
import { contextFrom } from '../context.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { planSettingsFrom } from '../settings.js';
import type { PreviewFlags } from './preview.js';

/** The comment's last pass (as stdout's): the values a manifest's author chose are left to its parts (RedactScope). */
const redactOutput = (text: string): string => secretRedactor.redactOutput(text, 'operator');

export async function previewAction(paths: string[], flags: PreviewFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  // Both revisions are read from Git objects; a rendered environment (docs/environments.md) is planned instead.
  if (paths.includes(STDIN_PATH)) {
    throw new UserError(
      'govops preview cannot read a stream (-): it reads the manifest files of both revisions from Git objects and renders nothing',
      'to show a pull request what one rendered environment would do, plan it and post the plan: kubectl kustomize overlays/prod | govops plan - -o markdown --state ... > prod.md; govops comment prod.md --id prod (docs/environments.md)',
    );
  }
  const plan = planSettingsFrom(flags);
  const offline = flags.offline === true ? 'offline (--offline)' : typeof flags.offline === 'string' ? flags.offline : undefined;
  const result = await runPreview({
    root: process.cwd(),
    paths,
    ...(flags.base !== undefined ? { base: flags.base } : {}),
    statePath: flags.state,
    stateGiven: command.getOptionValueSource('state') !== 'default',
    plan,
    env: process.env,
    secretScope: secretScopeFromFlags(flags),
    logger: ctx.logger,
    connect: () => clientFromOptions(flags, ctx.logger),
    ...(flags.requireLive ? { requireLive: true } : {}),
    ...(offline !== undefined ? { offline } : {}),
    dryRun: flags.dryRun !== false,
    dryRunNewTargets: flags.dryRunNewTargets === true,
    scripts: flags.scripts !== false,
  });
  const markdown = renderPreview(result);
  const text = ctx.options.output === 'json' ? `${JSON.stringify({ ...result, markdown }, null, 2)}\n` : markdown;
  if (flags.out) await writeFile(flags.out, redactOutput(text));
  else ctx.stdout.write(text);
  // The lines on stderr quote the service (a refusal's message, a failed dry run's): escaped for the terminal, as the
  // comment is neutralised for Markdown.
  if (result.error !== undefined) ctx.stderr.write(`error: ${printableLines(result.error)}\n`);
  else if (!result.valid) ctx.stderr.write('error: invalid manifests (see the comment)\n');
  for (const w of result.warnings.filter((x) => x.kind === 'dry-run-failed' || x.kind === 'plan-error')) {
    ctx.stderr.write(`error: ${printableLines(`${w.resource ? `${w.resource}: ` : ''}${w.message}`)}\n`);
  }
  // (with --require-live the reason is the error above: said once)
  if (result.offlineReason !== undefined && flags.offline === undefined && !result.error?.includes(result.offlineReason)) ctx.stderr.write(`warning: live state not consulted: ${printableLines(result.offlineReason)}\n`);
  process.exitCode = result.exitCode;
}
