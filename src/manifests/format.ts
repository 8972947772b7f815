/** How diagnostics are printed: `path:line:col: Kind/name: message` (warnings say so). */
import { quotedPart } from '../util/cut.js';
import { printable } from '../util/terminal.js';
import type { Diagnostic, LoadedManifest } from './types.js';
import { counted } from '../util/plural.js';

/** Where a manifest starts, as `file:line:col` (for messages naming another manifest). */
export function where(m: LoadedManifest): string {
  return `${m.source.file}:${m.source.line}:${m.source.column}`;
}

/** One line: every part from a manifest (file, kind, name, message quoting a key or value) made printable. */
export function formatDiagnostic(d: Diagnostic, color = false): string {
  const [kind, name, file, message] = [d.kind, d.name === undefined ? undefined : quotedPart(d.name), d.file, d.message].map((s) => (s === undefined ? s : printable(s)));
  const who = kind && name ? `${kind}/${name}: ` : kind ? `${kind}: ` : '';
  const sev = d.severity === 'warning' ? (color ? '\u001b[33mwarning\u001b[0m: ' : 'warning: ') : '';
  const loc = `${file}:${d.line}:${d.column}:`;
  const msg = d.severity === 'error' && color ? `\u001b[31m${message}\u001b[0m` : message;
  return `${color ? `\u001b[1m${loc}\u001b[0m` : loc} ${sev}${who}${msg}`;
}

export function summarize(diagnostics: readonly Diagnostic[], files: number, manifests: number): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  return `${counted(files, 'file')}, ${counted(manifests, 'valid manifest')}: ${counted(errors, 'error')}, ${counted(warnings, 'warning')}`;
}
