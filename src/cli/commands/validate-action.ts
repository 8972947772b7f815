/** What `govops validate` does (loaded only when it runs; declared in validate.ts). */
import type { Command } from 'commander';
import { contextFrom, EXIT } from '../context.js';
import { loadManifests } from '../../manifests/loader.js';
import { formatDiagnostic, summarize } from '../../manifests/format.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { stdinStream } from '../stdin.js';
import type { ValidateOptions } from './validate.js';

export async function validateAction(paths: string[], opts: ValidateOptions, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const result = await loadManifests(paths.length ? paths : ['.'], {
    cwd: process.cwd(),
    strict: Boolean(opts.strict),
    secretScope: secretScopeFromFlags(opts),
    ...stdinStream(paths),
  });
  const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
  if (ctx.options.output === 'json') {
    const list = result.diagnostics.map((d) => ({
      file: d.file,
      line: d.line,
      column: d.column,
      kind: d.kind ?? null,
      name: d.name ?? null,
      severity: d.severity,
      message: d.message,
    }));
    ctx.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
  } else {
    for (const d of result.diagnostics) ctx.stdout.write(`${formatDiagnostic(d, ctx.color)}\n`);
  }
  ctx.stderr.write(`${summarize(result.diagnostics, result.files.length, result.valid)}\n`);
  process.exitCode = errors > 0 ? EXIT.error : EXIT.ok;
}
