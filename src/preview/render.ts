/** Markdown for a pull-request comment from a PreviewResult (pure). Secrets never reach the result. */
import type { Diagnostic } from '../manifests/types.js';
import { renderMarkdown } from '../plan/render-markdown.js';
import { value } from '../plan/render-text.js';
import { formatDiagnostic } from '../reconcile/engine.js';
import type { ManifestChange, ManifestFieldChange } from './manifest-diff.js';
import type { PreviewResult } from './types.js';

/** Text for a table cell: no pipes, newlines or HTML. */
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').replace(/</g, '&lt;');
/** Text inside a fenced block: it cannot close the fence. */
const fenced = (s: string): string => s.replace(/```/g, "'''");
const code = (s: string): string => `\`${s.replace(/`/g, "'")}\``;

const STATUS: Record<string, string> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' };

function header(r: PreviewResult): string[] {
  const facts = [
    r.revision ? `**Revision** ${code(r.revision)}` : '**Revision** (not a git work tree)',
    ...(r.base ? [`**Base** ${code(r.base.ref)} (merge-base ${code(r.base.mergeBase.slice(0, 7))})`] : []),
    r.mode === 'live' ? '**Compared with** the live service' : '**Compared with** manifests only (offline)',
  ];
  return [r.marker, '### govops preview', '', facts.join(' · '), ''];
}

function status(r: PreviewResult): string[] {
  const errors = r.diagnostics.filter((d) => d.severity === 'error').length;
  if (!r.valid) return [`**Validation failed:** ${errors} error(s) in the manifests. Nothing can be planned or applied until they are fixed.`, ''];
  const out: string[] = [];
  if (r.liveError !== undefined) {
    out.push(
      `> **Live state was not consulted:** ${cell(r.liveError)}.`,
      `> ${r.offline?.baseCompared ? 'This is a manifest-level diff against the base revision; the service may differ from it.' : 'Only the manifests were checked (pass --base REF to compare with the base revision).'}`,
      '',
    );
  }
  if (r.error !== undefined) out.push(`**Preview failed:** ${cell(r.error)}`, '');
  return out;
}

function changedFiles(r: PreviewResult): string[] {
  if (!r.base) return [];
  const out = [`#### Manifest files changed since ${code(r.base.ref)}`, ''];
  if (r.base.files.length === 0) return [...out, 'None.', ''];
  out.push('| Change | File |', '|---|---|');
  for (const f of r.base.files) {
    const name = f.from !== undefined ? `${f.from} → ${f.file}` : f.file;
    out.push(`| ${STATUS[f.status] ?? f.status} | ${cell(name)} |`);
  }
  return [...out, ''];
}

function diagnostics(title: string, list: Diagnostic[]): string[] {
  if (list.length === 0) return [];
  return [`#### ${title}`, '', '```text', ...list.map((d) => fenced(formatDiagnostic(d))), '```', ''];
}

function unknownSecrets(r: PreviewResult): string[] {
  if (r.unknownSecrets.length === 0) return [];
  const out = [
    '#### Sensitive values not checked',
    '',
    `${r.unknownSecrets.length} secret reference(s) cannot be resolved here (CI usually has no production secrets). ` +
      'Their values are treated as unchanged, so **secret rotation cannot be previewed**.',
    '',
    '| Resource | Field | Value | Reference |',
    '|---|---|---|---|',
  ];
  for (const u of r.unknownSecrets) {
    out.push(`| ${cell(`${u.resourceKind}/${u.name}`)} | ${code(u.path)} | (sensitive, not checked) | ${cell(u.ref)} |`);
  }
  return [...out, ''];
}

function livePlan(r: PreviewResult): string[] {
  if (!r.plan) return [];
  const md = renderMarkdown(r.plan).replace(/^### govops plan\n/, '#### Plan against the live service\n');
  return [md.trimEnd(), ''];
}

function fieldLine(f: ManifestFieldChange): string {
  if (f.sensitive) return `~ ${f.path} = (sensitive)`;
  if (f.before === undefined) return `+ ${f.path} = ${value(f.after)}`;
  if (f.after === undefined) return `- ${f.path} = ${value(f.before)}`;
  return `~ ${f.path}: ${value(f.before)} -> ${value(f.after)}`;
}

const SYMBOL: Record<ManifestChange['action'], string> = { added: '+', removed: '-', changed: '~' };

function offline(r: PreviewResult): string[] {
  const o = r.offline;
  if (!o) return [];
  if (!o.baseCompared) {
    const out = ['#### Resources in the manifests', '', `${o.resources.length} resource(s); no base given, so what changed is unknown.`, ''];
    if (o.resources.length) {
      out.push('| Resource | File |', '|---|---|');
      for (const m of o.resources) out.push(`| ${cell(`${m.resourceKind}/${m.name}`)} | ${cell(m.file)} |`);
      out.push('');
    }
    return out;
  }
  const out = ['#### Manifest changes (offline)', ''];
  if (o.changes.length === 0) return [...out, 'No changes: the manifests define the same resources as the base.', ''];
  out.push('| | Resource | Type | Change |', '|---|---|---|---|');
  for (const c of o.changes) {
    out.push(`| \`${SYMBOL[c.action]}\` | ${cell(`${c.resourceKind}/${c.name}`)} | ${c.integrationType ?? ''} | ${c.action} |`);
  }
  const count = (a: ManifestChange['action']) => o.changes.filter((c) => c.action === a).length;
  out.push('', `**Manifests: ${count('added')} added, ${count('changed')} changed, ${count('removed')} removed.**`, '');
  const lines: string[] = [];
  for (const c of o.changes) {
    lines.push(`${SYMBOL[c.action]} ${c.resourceKind}/${c.name}${c.integrationType ? ` (${c.integrationType})` : ''} ${c.action}`);
    for (const f of c.changes) lines.push(`      ${fieldLine(f)}`);
    lines.push(`      # ${c.source.file}:${c.source.line}:${c.source.column}`, '');
  }
  out.push('<details><summary>Details</summary>', '', '```diff', fenced(lines.join('\n').trimEnd()), '```', '', '</details>', '');
  return out;
}

export function renderPreview(r: PreviewResult): string {
  const out = [
    ...header(r),
    ...status(r),
    ...changedFiles(r),
    ...diagnostics('Validation failed', r.diagnostics.filter((d) => d.severity === 'error')),
    ...diagnostics('Warnings', r.diagnostics.filter((d) => d.severity === 'warning')),
    ...unknownSecrets(r),
    ...livePlan(r),
    ...offline(r),
  ];
  if (!r.valid) out.push('_No plan was made._', '');
  else if (r.mode === 'offline' && r.error === undefined) out.push('_No live plan: what `govops apply` does may differ from this._', '');
  return `${out.join('\n').trimEnd()}\n`;
}
