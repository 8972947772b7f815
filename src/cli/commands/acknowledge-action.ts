/** What `govops acknowledge` does (loaded only when it runs; declared in acknowledge.ts). */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../../errors.js';
import { setAnnotation } from '../../manifests/annotate.js';
import { formatDiagnostic } from '../../manifests/format.js';
import { loadManifests } from '../../manifests/loader.js';
import type { IntegrationManifest, LoadedManifest } from '../../manifests/types.js';
import { ackPhaseOf, acknowledgmentValue, MANUAL_STEP_ANNOTATION, parseAcknowledgments } from '../../plan/acknowledgment.js';
import { manualStepToken } from '../../reconcile/manual-step-token.js';
import { SCRIPT_KINDS } from '../../kinds/registry.js';
import { lastScriptOfStep, scriptCommand } from '../../plan/manual-steps.js';
import { contextFrom, EXIT } from '../context.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { writeFileAtomic } from '../../util/fs.js';
import { printable } from '../../util/terminal.js';
import type { AcknowledgeFlags } from './acknowledge.js';
import { counted } from '../../util/plural.js';

export async function acknowledgeAction(paths: string[], opts: AcknowledgeFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const cwd = process.cwd();
  const set = await loadManifests(paths, { cwd, secretScope: secretScopeFromFlags(opts) });
  const errors = set.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length) throw new UserError(`the manifests have errors; nothing written:\n${errors.map((d) => formatDiagnostic(d)).join('\n')}`);
  const integrations = set.manifests.filter((m): m is LoadedManifest<IntegrationManifest> => m.manifest.kind === 'Integration');
  const phase = ackPhaseOf(opts.phase);
  const only = opts.only ? new Set(opts.only) : undefined;
  if (only) {
    const known = new Set(integrations.map((m) => m.manifest.metadata.name));
    const missing = [...only].filter((n) => !known.has(n));
    if (missing.length) throw new UserError(`no Integration named ${missing.join(', ')} in the given paths`);
  }
  // per file: name -> the annotation's new value (this phase's entry replaced, the others kept)
  const byFile = new Map<string, Map<string, string>>();
  const skipped: string[] = [];
  const notYet: string[] = [];
  for (const m of integrations) {
    const { name } = m.manifest.metadata;
    if (only && !only.has(name)) continue;
    const { type, autoBootstrap, config } = m.manifest.spec;
    if (autoBootstrap !== false || !SCRIPT_KINDS[opts.phase].has(type)) {
      if (only) skipped.push(`Integration/${name}: ${autoBootstrap !== false ? 'not in the manual flow (its autoBootstrap is not false)' : `${type} has no ${opts.phase} script`}`);
      continue;
    }
    // A step of two scripts (initial-create + create, cleanup + post-cleanup) is acknowledged once its last ran:
    // its token lets the create or delete through, and the interface runs the second script before that.
    const last = lastScriptOfStep(opts.phase, type);
    if (last !== opts.phase) {
      notYet.push(`Integration/${name}: its ${phase} step ends with the ${last} script: run ${scriptCommand(name, last, m.source.file)} in the platform, then govops acknowledge --phase ${last}`);
      continue;
    }
    const token = manualStepToken(phase, type, config);
    const given = parseAcknowledgments(m.manifest.metadata.annotations?.[MANUAL_STEP_ANNOTATION]);
    // Already acknowledged: left as written (rewritten with this phase last, the order flipped at every run of another phase)
    if (given.some((a) => a.phase === phase && a.token === token)) continue;
    const kept = given.filter((a) => a.phase !== phase);
    const value = acknowledgmentValue([...kept, { phase, token }]);
    const file = path.resolve(cwd, m.source.file);
    if (!byFile.has(file)) byFile.set(file, new Map());
    byFile.get(file)!.set(name, value);
  }
  for (const s of skipped) ctx.stderr.write(`skipped ${s}\n`);
  // (the name is a manifest's, the file the repository's: escaped for the terminal)
  for (const s of notYet) ctx.stderr.write(`not acknowledged yet ${printable(s)}\n`);
  let written = 0;
  let failed = 0;
  for (const [file, values] of byFile) {
    // a file name is the repository's (a commit chose it): escaped for the terminal in every line naming it
    const shown = printable(path.relative(cwd, file) || file);
    const res = setAnnotation(await fs.readFile(file, 'utf8'), 'Integration', MANUAL_STEP_ANNOTATION, values);
    if (!res.ok) {
      failed++;
      ctx.stderr.write(`${shown}: not rewritten (${res.reason}); add under metadata.annotations by hand:\n`);
      for (const [name, value] of values) ctx.stderr.write(`  Integration/${name}: ${MANUAL_STEP_ANNOTATION}: "${value}"\n`);
      continue;
    }
    if (res.edited.length === 0) continue;
    if (!opts.dryRun) await writeKeepingMode(file, res.text);
    written += res.edited.length;
    for (const name of res.edited) ctx.stdout.write(`${opts.dryRun ? 'would acknowledge' : 'acknowledged'} Integration/${name} (${values.get(name)}) in ${shown}\n`);
  }
  ctx.stderr.write(`${counted(written, 'manifest')} ${opts.dryRun ? 'would be ' : ''}acknowledged for the ${phase} phase${failed ? `, ${counted(failed, 'file')} to edit by hand` : ''}\n`);
  process.exitCode = failed ? EXIT.error : EXIT.ok;
}

/**
 * Atomically, with the file's mode kept. A manifest that is a symbolic link (the loader took it: its target is
 * inside the root) is written where it points: the link stays a link, and its target is the file the plan reads.
 */
async function writeKeepingMode(file: string, text: string): Promise<void> {
  const real = await fs.realpath(file);
  const { mode } = await fs.stat(real);
  await writeFileAtomic(real, text, { mode: mode & 0o777, what: 'the acknowledgment' });
}
