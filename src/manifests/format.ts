/** How diagnostics are printed: `path:line:col: Kind/name: message` (warnings say so). */
import type { Diagnostic, LoadedManifest } from './types.js';

/** Where a manifest starts, as `file:line:col` (for messages naming another manifest). */
export function where(m: LoadedManifest): string {
  return `${m.source.file}:${m.source.line}:${m.source.column}`;
}

export function formatDiagnostic(d: Diagnostic, color = false): string {
  const who = d.kind && d.name ? `${d.kind}/${d.name}: ` : d.kind ? `${d.kind}: ` : '';
  const sev = d.severity === 'warning' ? (color ? '\u001b[33mwarning\u001b[0m: ' : 'warning: ') : '';
  const loc = `${d.file}:${d.line}:${d.column}:`;
  const msg = d.severity === 'error' && color ? `\u001b[31m${d.message}\u001b[0m` : d.message;
  return `${color ? `\u001b[1m${loc}\u001b[0m` : loc} ${sev}${who}${msg}`;
}

export function summarize(diagnostics: readonly Diagnostic[], files: number, manifests: number): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  return `${plural(files, 'file')}, ${plural(manifests, 'valid manifest')}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
