/**
 * Pure: a revision is reconciled from its own folder (a worktree or a snapshot copy), but reports
 * must name files as the user knows them (`manifests/a.yaml:12`, `examples/a.yaml:3`).
 */
import { isAbsolute, relative } from 'node:path';
import { relocateChange, relocateText } from '../plan/manual-steps.js';
import type { ReconcileResult } from '../reconcile/types.js';
import { formatDiagnostic } from '../reconcile/load.js';
import type { Diagnostic } from '../manifests/types.js';

export function displayPathMapper(root: string, display: string, cwd = process.cwd()): (text: string) => string {
  const prefixes = [...new Set([root, relative(cwd, root)])].filter((p) => p !== '' && p !== '.');
  const replacement = display === '' ? '' : `${display.replace(/\/+$/, '')}/`;
  return (text) => {
    let out = text;
    for (const p of prefixes.sort((a, b) => b.length - a.length)) {
      out = out.split(`${p}/`).join(replacement);
    }
    return out;
  };
}

/** A `file` field: mapped, or (relative to the revision folder) prefixed with the display folder. */
export function displayFile(file: string, root: string, display: string, map: (text: string) => string): string {
  const mapped = map(file);
  if (mapped !== file || isAbsolute(file) || display === '') return mapped;
  void root;
  return `${display.replace(/\/+$/, '')}/${file}`;
}

export function rewriteResultPaths(result: ReconcileResult, root: string, display: string, cwd = process.cwd()): ReconcileResult {
  const map = displayPathMapper(root, display, cwd);
  const file = (f: string): string => displayFile(f, root, display, map);
  const changes = new Map((result.plan?.changes ?? []).map((c) => [`${c.resourceKind}/${c.name}`, c]));
  /** An outcome's error names the change's `govops scripts` commands with the file as the revision folder has it. */
  const outcomeError = (o: ReconcileResult['outcomes'][number], error: string): string => {
    const c = changes.get(`${o.resourceKind}/${o.name}`);
    return map(c?.source ? relocateText(error, c, file(c.source.file)) : error);
  };
  const diagnostics = result.diagnostics.map((d) => ({ ...d, file: file(d.file), message: map(d.message) }));
  // the same variant with its texts rewritten (an error is kept exactly where there was one)
  return {
    ...result,
    diagnostics,
    error: result.error === undefined ? undefined : errorText(result.error, result.diagnostics, diagnostics, map),
    outcomes: result.outcomes.map((o) => (o.error === undefined ? o : { ...o, error: outcomeError(o, o.error) })),
    plan: result.plan && {
      ...result.plan,
      errors: result.plan.errors.map(map),
      warnings: result.plan.warnings.map((w) => ({ ...w, message: map(w.message) })),
      changes: result.plan.changes.map((c) => (c.source ? relocateChange(c, file(c.source.file)) : c)),
    },
  } as ReconcileResult;
}

/**
 * A failed load's error begins with its first error diagnostic (`m/a.yaml:3:1: …`, relative to the revision's
 * folder): that part is written again from the rewritten diagnostic, so the display folder is there as in
 * `diagnostics`; the rest of the text is mapped like any other.
 */
function errorText(error: string, before: readonly Diagnostic[], after: readonly Diagnostic[], map: (text: string) => string): string {
  const i = before.findIndex((d) => error.startsWith(formatDiagnostic(d)));
  if (i < 0) return map(error);
  const head = formatDiagnostic(before[i]!);
  return formatDiagnostic(after[i]!) + map(error.slice(head.length));
}
