/** Markdown rendering for a pull-request comment: summary table, then collapsible details. */
import { describeAction, ignoredLine, isVisible, leftAloneLines, notComparableSummary, renderText, summaryLine, symbolFor, targetsLine } from './render-text.js';
import type { Plan } from './types.js';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderMarkdown(plan: Plan): string {
  const out: string[] = ['### govops plan', ''];
  const targeted = targetsLine(plan);
  if (targeted) out.push(`> ${cell(targeted)}`, '');
  for (const e of plan.errors) out.push(`> **Error:** ${cell(e)}`, '');
  for (const w of plan.warnings) out.push(`> **Warning:** ${cell(w)}`, '');
  const visible = plan.changes.filter(isVisible);
  if (visible.length === 0) {
    out.push('No changes: the service matches the manifests.', '');
  } else {
    out.push('| | Resource | Type | Action | Notes |', '|---|---|---|---|---|');
    for (const c of visible) {
      const notes = [
        ...(c.blocked ? [`**blocked:** ${c.blocked}`] : []),
        ...(c.manualScript ? [`manual step: \`${c.manualScript.command}\``] : []),
        ...(c.changes.some((f) => f.forcesReplace) && c.action === 'replace' ? ['forces replacement'] : []),
        ...(c.ignoredFields?.length ? [ignoredLine(c)] : []),
        ...(c.notComparable ? [`cannot be compared: ${c.notComparable.paths.map((p) => `\`${p}\``).join(', ')} (${c.notComparable.handling})`] : []),
      ];
      out.push(
        `| \`${symbolFor(c)}\` | ${cell(`${c.resourceKind}/${c.name}`)} | ${c.integrationType ?? ''} | ${cell(describeAction(c))} | ${cell(notes.join('; '))} |`,
      );
    }
    out.push('');
  }
  out.push(`**${summaryLine(plan.summary)}**`, '');
  const nc = notComparableSummary(plan);
  if (nc) out.push(nc, '');
  for (const line of leftAloneLines(plan)) out.push(line, '');
  if (visible.length > 0) {
    out.push('<details><summary>Details</summary>', '', '```diff', renderText(plan).trimEnd(), '```', '', '</details>', '');
  }
  return out.join('\n');
}
