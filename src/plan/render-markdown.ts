/**
 * Markdown rendering for a pull-request comment: summary table, then collapsible details. Every text from the
 * manifests or the service is neutralised for where it goes (src/util/markdown.ts): no mention, link or HTML.
 */
import { quotedPart } from '../util/cut.js';
import { mdCode, mdFenced, mdText } from '../util/markdown.js';
import { blockedBesidesManualStep } from './manual-steps.js';
import { describeAction, ignoredLine, isVisible, leftAloneLines, noChangesLine, notComparableSummary, renderText, summaryLine, symbolFor, targetsLine } from './render-text.js';
import type { Diagnostic } from '../manifests/types.js';
import type { Plan, ResourceChange } from './types.js';

/** A cell built from neutralised parts: they may not end the row. */
const cell = (s: string): string => s.replace(/\r?\n/g, ' ');

const code = mdCode;

/** The Type column: the integration kind, or for a data source the integration it is registered under. */
function typeCell(c: ResourceChange): string {
  if (c.resourceKind === 'DataSource') return c.integration?.name !== undefined ? `data source in Integration/${mdText(c.integration.name)}` : 'data source';
  return c.integrationType ?? '';
}

/** The manual-flow gate in one table cell. */
export function manualStepNotes(c: ResourceChange): string[] {
  const notes: string[] = [];
  if (c.failedCreation) {
    const f = c.failedCreation;
    const cleanup = f.cleanup.length ? ` or clean up with ${f.cleanup.map((x) => code(x.command)).join(' then ')}, ${mdText(f.remove)}` : ` or ${mdText(f.remove)}`;
    notes.push(`**creation failed** (${mdText(f.status)}): ${mdText(f.fix)};${cleanup}`);
  }
  const g = c.manualStep;
  if (!g) return notes;
  const run = g.scripts.map((x) => code(x.command)).join(' then ');
  if (g.status === 'awaiting') {
    const add = g.acknowledgment ? `, then add the annotation ${code(g.acknowledgment.line)}` : '';
    notes.push(`**awaiting manual step:** ${mdText(g.reason ?? 'not acknowledged')}. Run ${run} in the platform${add}`);
  } else if (g.status === 'acknowledged') {
    notes.push(`manual step acknowledged (${code(g.acknowledgment?.value ?? '')})`);
  } else {
    notes.push(`manual step not checked (--manual-steps trust): ${run}`);
  }
  return notes;
}

/**
 * The plan as a pull-request comment. `diagnostics`: the manifests' own; their warnings (`file:line:col: ...`, printed
 * on stderr too) are in the comment, which a reviewer reading only it would otherwise never see.
 */
export function renderMarkdown(plan: Plan, diagnostics: readonly Diagnostic[] = []): string {
  const out: string[] = ['### govops plan', ''];
  const targeted = targetsLine(plan);
  if (targeted) out.push(`> ${mdText(targeted)}`, '');
  for (const e of plan.errors) out.push(`> **Error:** ${mdText(e)}`, '');
  for (const w of plan.warnings) out.push(`> **Warning:** ${mdText(w.message)}`, '');
  for (const d of diagnostics) {
    if (d.severity !== 'warning') continue;
    const who = d.kind ? `${d.kind}${d.name !== undefined ? `/${quotedPart(d.name)}` : ''}: ` : '';
    out.push(`> **Warning:** ${code(`${d.file}:${d.line}:${d.column}`)} ${mdText(`${who}${d.message}`)}`, '');
  }
  const visible = plan.changes.filter(isVisible);
  if (visible.length === 0) {
    out.push(noChangesLine(plan), '');
  } else {
    out.push('| | Resource | Type | Action | Notes |', '|---|---|---|---|---|');
    for (const c of visible) {
      const notes = [
        ...manualStepNotes(c),
        ...(blockedBesidesManualStep(c) ? [`**blocked:** ${mdText(c.blocked?.message ?? '')}`] : []),
        ...(!c.manualStep && c.manualScript ? [`manual step: ${code(c.manualScript.command)}`] : []),
        ...(c.changes.some((f) => f.forcesReplace) && c.action === 'replace' ? ['forces replacement'] : []),
        ...(c.ignoredFields?.length ? [mdText(ignoredLine(c))] : []),
        ...(c.notComparable ? [`cannot be compared: ${c.notComparable.paths.map((p) => code(p)).join(', ')} (${c.notComparable.handling})`] : []),
      ];
      out.push(
        `| \`${symbolFor(c)}\` | ${mdText(`${c.resourceKind}/${c.name}`)} | ${cell(typeCell(c))} | ${mdText(describeAction(c))} | ${cell(notes.join('; '))} |`,
      );
    }
    out.push('');
  }
  out.push(`**${summaryLine(plan.summary)}**`, '');
  const nc = notComparableSummary(plan);
  if (nc) out.push(nc, '');
  for (const line of leftAloneLines(plan)) out.push(mdText(line), '');
  if (visible.length > 0) {
    out.push('<details><summary>Details</summary>', '', '```diff', mdFenced(renderText(plan).trimEnd()), '```', '', '</details>', '');
  }
  return out.join('\n');
}
