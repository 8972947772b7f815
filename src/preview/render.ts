/**
 * Markdown for the pull-request comment from a PreviewResult (pure). Order: the hidden marker, the facts,
 * the summary table, status notes, warnings; then the changes table and per-resource details, drift,
 * unknown secrets and changed files, shortened by `fitComment` to stay under the platform's limit.
 * Secrets never reach the result; every text from the pull request or the service is neutralised for where it
 * goes (text, HTML, code span, code block: src/util/markdown.ts), so it cannot change the comment's structure,
 * mention anyone or make a link.
 */
import { describeRef, isSecretRef } from '../manifests/secrets.js';
import type { Diagnostic } from '../manifests/types.js';
import { fieldLine, notComparableLine } from '../plan/render-text.js';
import { formatDiagnostic } from '../manifests/format.js';
import { COMMENT_LIMIT, fitComment, type Section } from './fit.js';
import type { ManifestFieldChange } from './manifest-diff.js';
import type { PrChangeKind } from './pr-diff.js';
import { renderManualSteps } from './render-manual.js';
import { mdCode, mdFenced, mdHtml, mdText } from '../util/markdown.js';
import { printable } from '../util/terminal.js';
import type { DriftEntry, DryRunResult, LiveAction, LiveFacts, PreviewResource, PreviewResult, PreviewWarning } from './types.js';
import { agree, counted } from '../util/plural.js';

/** Untrusted text as Markdown text (a table cell, a list item). */
export const cell = mdText;
const html = mdHtml;
const code = mdCode;
const fenced = mdFenced;
/**
 * One line of a code block: a line break inside (a YAML key, a file name: the pull request's author writes them) shown
 * as `\n`, so no text of theirs starts a line of the block (a forged diff line a reviewer would take for a change).
 */
const fencedLine = (s: string): string => mdFenced(printable(s));

const FILE_STATUS: Record<string, string> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' };
const PR_SYMBOL: Record<PrChangeKind, string> = { added: '+', removed: '-', renamed: '~', changed: '~' };
const LIVE_TEXT: Record<LiveAction, string> = {
  create: 'create',
  update: 'update in place',
  replace: 'replace (delete, then create)',
  delete: 'delete',
  adopt: 'adopt (no change in the service)',
  settle: 'wait until the service settles it (still creating or editing; nothing sent)',
  noop: 'nothing: the service already matches',
  none: 'nothing',
};
const DRY_ICON: Record<DryRunResult['status'], string> = {
  passed: '✅ passed',
  warning: '⚠️ warning',
  failed: '❌ failed',
  rejected: '❌ rejected',
  error: '⚠️ not run',
  skipped: '⏭️ skipped',
};
const TEST_ICON: Record<string, string> = { passed: '✅', failed: '❌', warning: '⚠️', skipped: '⏭️' };

/** A manifest value: secret references by name, never a value. */
function show(v: unknown): string {
  if (isSecretRef(v)) return `(secret ${describeRef(v)})`;
  return JSON.stringify(v, (_k, x: unknown) => (isSecretRef(x) ? `(secret ${describeRef(x)})` : x)) ?? 'null';
}

function prFieldLine(f: ManifestFieldChange): string {
  if (f.sensitive) return `~ ${f.path} = (sensitive)`;
  if (f.before === undefined) return `+ ${f.path} = ${show(f.after)}`;
  if (f.after === undefined) return `- ${f.path} = ${show(f.before)}`;
  return `~ ${f.path}: ${show(f.before)} -> ${show(f.after)}`;
}

/** `Kind/name`, neutralised for Markdown text (or with `esc`, for HTML). */
const title = (r: { resourceKind: string; name: string }, esc = mdText): string => esc(`${r.resourceKind}/${r.name}`);

/** Markdown (its own bold), the service's id and status neutralised. */
function liveText(l: LiveFacts): string {
  let t = l.adopt && l.action !== 'adopt' ? `adopt and ${LIVE_TEXT[l.action]}` : LIVE_TEXT[l.action];
  if (l.blocked !== undefined) t = `**${l.blockedCode === 'awaiting-manual-step' ? 'awaiting a manual step' : 'blocked'}**: ${t}`;
  const facts = [l.id !== undefined ? `id ${l.id}` : undefined, l.status].filter((x) => x !== undefined).map((x) => mdText(x));
  return facts.length ? `${t} (${facts.join(', ')})` : t;
}

/** What the pull request does to a resource; the old name neutralised with `esc` (Markdown text, or HTML). */
function prText(r: PreviewResource, esc = mdText): string {
  if (r.change === undefined) return '';
  if (r.change === 'renamed') return `renamed from ${esc(r.renamedFrom ?? '?')}${r.fields.length ? `, ${counted(r.fields.length, 'field')} changed` : ''}`;
  if (r.change === 'changed') return `changed (${counted(r.fields.length, 'field')})`;
  return r.change;
}

/* ---------------------------------------------------------------- head, summary, status */

function header(r: PreviewResult): string[] {
  const facts = [
    r.revision ? `**Revision** ${code(r.revision)}` : '**Revision** (not a git work tree)',
    ...(r.base ? [`**Base** ${code(r.base.ref)} (merge-base ${code(r.base.mergeBase.slice(0, 7))}${r.base.mergedOnto !== undefined ? `; moved on since: merged onto ${code(r.base.mergedOnto.slice(0, 7))}` : ''})`] : []),
    r.mode === 'live' ? '**Compared with** the live service' : '**Compared with** manifests only (offline)',
  ];
  return [r.marker, '### govops preview', '', facts.join(' · '), ''];
}

function counts(entries: Array<[string, number]>, zero = 'nothing'): string {
  const shown = entries.filter(([, n]) => n > 0).map(([label, n]) => `${n} ${label}`);
  return shown.length ? shown.join(' · ') : zero;
}

function summary(r: PreviewResult): string[] {
  const s = r.summary;
  const rows: string[] = ['| | |', '|---|---|'];
  if (r.base) {
    rows.push(`| **This pull request** | ${counts([['added', s.pr.added], ['changed', s.pr.changed], ['renamed', s.pr.renamed], ['removed', s.pr.removed]], 'changes no resource')} |`);
  }
  if (s.live) {
    const l = s.live;
    rows.push(
      `| **Merging it does** | ${counts([['to create', l.create], ['to update', l.update], ['to replace', l.replace], ['to delete', l.delete], ['to adopt', l.adopt], ['already as wanted', l.noop], ['left as is', l.none], ['⛔ blocked', s.blocked ?? 0], ['⏸️ awaiting a manual step', s.awaitingManualStep ?? 0]], 'nothing in the service')} |`,
    );
  } else {
    rows.push(`| **Merging it does** | not known: the service was not consulted |`);
  }
  if (s.dryRuns) {
    const d = s.dryRuns;
    const total = Object.values(d).reduce((a, b) => a + b, 0);
    rows.push(
      `| **Dry runs** | ${total === 0 ? 'none needed' : counts([['✅ passed', d.passed], ['⚠️ warning', d.warning], ['❌ failed', d.failed], ['❌ rejected', d.rejected], ['⚠️ not run', d.error], ['⏭️ skipped', d.skipped]])} |`,
    );
  } else if (r.valid && r.resources.some((x) => x.resourceKind === 'Integration')) {
    rows.push('| **Dry runs** | ⏭️ not sent: the service was not consulted |');
  }
  if (r.mode === 'live') {
    rows.push(`| **Drift** | ${s.drift === 0 ? 'none: the service matches the base revision' : `${counted(s.drift, 'resource')} ${agree(s.drift, 'differs', 'differ')} from the base revision (not from this pull request; merging applies them too)`} |`);
  }
  if (s.manualSteps > 0 || s.awaitingManualStep) {
    const waiting = s.awaitingManualStep ? `; ⏸️ ${counted(s.awaitingManualStep, 'change')} not applied until their manifests acknowledge the scripts` : '';
    rows.push(`| **Manual steps** | ${counted(s.manualSteps, 'script')} to run in the platform${waiting} |`);
  }
  if (r.unknownSecrets.length > 0) rows.push(`| **Secrets not checked** | ${counted(r.unknownSecrets.length, 'reference')} not available here |`);
  const verdict =
    r.exitCode === 1
      ? '❌ **Needs attention** (exit 1)'
      : r.changed
        ? r.mode === 'live'
          ? '**Merging changes the service** (exit 2)'
          : '**This pull request changes the manifests**: what merging does in the service is not known (exit 2)'
        : r.mode === 'live'
          ? '**Merging changes nothing in the service** (exit 0)'
          : '**No change** (exit 0)';
  return [...rows, '', verdict, ''];
}

function status(r: PreviewResult): string[] {
  const out: string[] = [];
  if (!r.valid) {
    const errors = r.diagnostics.filter((d) => d.severity === 'error').length;
    out.push(`**Validation failed:** ${counted(errors, 'error')} in the manifests. Nothing can be planned or applied until they are fixed.`, '');
  }
  if (r.offlineReason !== undefined) {
    out.push(`> **Live state was not consulted:** ${cell(r.offlineReason)}.`, `> ${r.base ? 'This shows what the pull request changes in the manifests; the service may differ from them.' : 'Only the manifests were checked (pass --base REF to compare with the base revision).'}`, '');
  }
  if (r.error !== undefined) out.push(`**Preview failed:** ${cell(r.error)}`, '');
  return out;
}

/* ---------------------------------------------------------------- sections */

const WARN_ICON: Record<PreviewWarning['kind'], string> = {
  replace: '🔁',
  delete: '🗑️',
  blocked: '⛔',
  'manual-step': '⏸️',
  'not-pruned': 'ℹ️',
  'dry-run-failed': '❌',
  'dry-run-error': '⚠️',
  'plan-error': '❌',
  'plan-warning': '⚠️',
  uncommitted: 'ℹ️',
  'base-moved': '⚠️',
  'base-invalid': 'ℹ️',
};

function warnings(r: PreviewResult): Section {
  return {
    head: ['#### Warnings', ''],
    items: r.warnings.map((w) => `- ${WARN_ICON[w.kind]} ${w.resource ? `**${cell(w.resource)}**: ` : ''}${cell(w.message)}`),
    tail: [''],
    more: (n) => `- … and ${counted(n, 'more warning')} (see the JSON output)`,
    short: ['#### Warnings', '', `${counted(r.warnings.length, 'warning')}: too long to show here (see the JSON output).`, ''],
    max: 8_000,
  };
}

function diagnosticsSection(heading: string, list: Diagnostic[]): Section {
  return {
    head: [`#### ${heading}`, '', '```text'],
    // one line each, as `govops validate` prints them: a line break a manifest's author put in a name, key or value
    // is shown as `\n`, so it cannot start a line of the block (a forged diagnostic)
    items: list.map((d) => fenced(formatDiagnostic(d))),
    tail: ['```', ''],
    more: (n) => `… and ${n} more`,
    short: [`#### ${heading}`, '', `${counted(list.length, 'message')}: run \`govops validate\` to see them.`, ''],
    max: 12_000,
  };
}

function changesTable(r: PreviewResult): Section {
  const live = r.mode === 'live';
  const rows = r.resources.map((x) => {
    const sym = x.change !== undefined ? PR_SYMBOL[x.change] : ' ';
    const cols = [`\`${sym}\``, title(x), x.integrationType ?? ''];
    if (r.base) cols.push(prText(x));
    const half = x.live?.action === 'replace' && x.dryRun?.request?.startsWith('DELETE') ? ' (delete half)' : '';
    if (live) cols.push(x.live ? liveText(x.live) : '', x.dryRun ? `${DRY_ICON[x.dryRun.status]}${half}` : '');
    return `| ${cols.join(' | ')} |`;
  });
  const headers = ['', 'Resource', 'Type', ...(r.base ? ['This pull request'] : []), ...(live ? ['In the service', 'Dry run'] : [])];
  const empty = r.base ? 'This pull request changes no integration or webhook.' : live ? 'No changes: the service matches the manifests.' : 'No resources.';
  if (rows.length === 0) return { head: ['#### Changes', '', empty, ''], items: [], more: () => '', short: [] };
  return {
    head: ['#### Changes', '', `| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`],
    items: rows,
    tail: [''],
    more: (n) => `| | … ${counted(n, 'more resource')} (see the JSON output) |${' |'.repeat(headers.length - 2)}`,
    short: ['#### Changes', '', `${counted(rows.length, 'resource')}: too many to list here (see the JSON output).`, ''],
    max: 24_000,
  };
}

function dryRunBlock(d: DryRunResult): string[] {
  const out = [`**Dry run**${d.request ? ` ${code(d.request)}` : ''}: ${DRY_ICON[d.status]}${d.reason ? ` — ${cell(d.reason)}` : ''}`, ''];
  if (d.tests.length) {
    out.push('| Test | Status | Result |', '|---|---|---|');
    for (const t of d.tests) {
      const result = t.result.map((row) => (typeof row === 'string' ? row : typeof (row as { message?: unknown })?.message === 'string' ? (row as { message: string }).message : JSON.stringify(row)));
      out.push(`| ${cell(t.name)} | ${TEST_ICON[t.status] ?? ''} ${cell(t.status)} | ${cell(result.join('; '))} |`);
    }
    out.push('');
  }
  return out;
}

function detail(x: PreviewResource): string {
  const failed = x.dryRun?.status === 'failed' || x.dryRun?.status === 'rejected';
  const what = [x.change !== undefined ? prText(x, html) : undefined, x.live ? LIVE_TEXT[x.live.action] : undefined].filter(Boolean).join(' → ');
  const out = [`<details${failed ? ' open' : ''}><summary><b>${title(x, html)}</b>${x.integrationType ? ` (${x.integrationType})` : ''}: ${what}</summary>`, ''];
  if (x.fields.length) {
    const where = x.source ? `      # ${x.source.file}:${x.source.line}:${x.source.column}` : '';
    out.push(x.change === 'added' ? '**Manifest** (new):' : '**Manifest changes:**', '', '```diff', ...x.fields.map((f) => fencedLine(prFieldLine(f))), ...(where ? [fencedLine(where)] : []), '```', '');
  } else if (x.change === 'removed') {
    out.push(`**Manifest removed**${x.source ? ` (was ${code(`${x.source.file}:${x.source.line}`)})` : ''}.`, '');
  }
  if (x.live) {
    const l = x.live;
    out.push(`**In the service:** ${liveText(l)}`, '');
    if (l.changes.length || l.notComparable) {
      const lines = l.changes.map((f) => fencedLine(`${fieldLine(f, l.action === 'none' ? 'noop' : l.action)}${f.fromPr ? '' : '   # drift: not from this pull request'}`));
      if (l.notComparable) lines.push(fencedLine(notComparableLine(l.notComparable)));
      out.push('```diff', ...lines, '```', '');
    }
    for (const reason of l.reasons) out.push(`- ${cell(reason)}`);
    // a wait for a manual step is explained with its scripts (renderManualSteps)
    if (l.blocked !== undefined && l.blockedCode !== 'awaiting-manual-step') out.push(`- ⛔ blocked: ${cell(l.blocked)}`);
    if (l.reasons.length || l.blocked !== undefined) out.push('');
  }
  if (x.dryRun) out.push(...dryRunBlock(x.dryRun));
  if (x.manualSteps?.length || x.manualAck) out.push(...renderManualSteps(x.name, x.manualSteps ?? [], x.manualAck, x.source?.file));
  out.push('</details>', '');
  return out.join('\n');
}

function details(r: PreviewResult): Section {
  const shown = r.resources.filter((x) => x.fields.length || x.live?.changes.length || x.live?.notComparable || x.live?.reasons.length || x.dryRun || x.manualSteps?.length || x.manualAck || x.change === 'removed');
  // failures first, so shortening drops the quiet ones
  const rank = (x: PreviewResource): number => (x.dryRun?.status === 'failed' || x.dryRun?.status === 'rejected' ? 0 : x.live?.blocked !== undefined ? 1 : 2);
  const ordered = shown.map((x, i) => ({ x, i })).sort((a, b) => rank(a.x) - rank(b.x) || a.i - b.i).map(({ x }) => x);
  return {
    head: ordered.length ? ['#### Details', ''] : [],
    items: ordered.map(detail),
    more: (n) => `_${counted(n, 'more resource')} not detailed here, to keep the comment under GitHub's size limit: see the JSON output (\`govops preview -o json\`)._\n`,
    short: ordered.length ? ['#### Details', '', `_Not shown (too long for a comment): see the JSON output._`, ''] : [],
  };
}

function driftLines(d: DriftEntry): string {
  const lines = [`${d.action === 'noop' ? '=' : d.action === 'create' ? '+' : d.action === 'delete' ? '-' : '~'} ${d.resourceKind}/${d.name}: ${LIVE_TEXT[d.action]}${d.id !== undefined ? ` (id ${d.id})` : ''}${d.touched ? '   # also touched by this pull request' : ''}`];
  for (const f of d.changes) lines.push(`    ${fieldLine(f, d.action)}`);
  for (const reason of d.reasons) lines.push(`    # ${reason}`);
  return lines.map(fencedLine).join('\n');
}

function drift(r: PreviewResult): Section {
  if (r.drift.length === 0) return { head: [], items: [], more: () => '', short: [] };
  const summaryLine = `<details><summary>Drift: ${counted(r.drift.length, 'resource')} in the service ${r.drift.length === 1 ? 'differs' : 'differ'} from the base revision (not caused by this pull request; merging applies ${r.drift.length === 1 ? 'it' : 'them'} too)</summary>`;
  return {
    head: [summaryLine, '', '```diff'],
    items: r.drift.map(driftLines),
    tail: ['```', '', '</details>', ''],
    more: (n) => `… and ${counted(n, 'more resource')} (see the JSON output)`,
    short: [summaryLine, '', 'Too long to show here: see the JSON output.', '', '</details>', ''],
  };
}

function unknownSecrets(r: PreviewResult): Section {
  if (r.unknownSecrets.length === 0) return { head: [], items: [], more: () => '', short: [] };
  const summaryLine = `<details><summary>Sensitive values not checked: ${counted(r.unknownSecrets.length, 'secret reference')} cannot be resolved here</summary>`;
  return {
    head: [
      summaryLine,
      '',
      'CI usually has no production secrets. These values are treated as unchanged, so **secret rotation cannot be previewed**, and their integrations are not dry-run.',
      '',
      '| Resource | Field | Value | Reference |',
      '|---|---|---|---|',
    ],
    items: r.unknownSecrets.map((u) => `| ${cell(`${u.resourceKind}/${u.name}`)} | ${code(u.path)} | (sensitive, not checked) | ${cell(u.ref)} |`),
    tail: ['', '</details>', ''],
    more: (n) => `| … | ${counted(n, 'more')} | | |`,
    short: [summaryLine, '', 'Too many to list here: see the JSON output.', '', '</details>', ''],
  };
}

function changedFiles(r: PreviewResult): Section {
  if (!r.base) return { head: [], items: [], more: () => '', short: [] };
  const summaryLine = `<details><summary>Manifest files changed since <code>${html(r.base.ref)}</code>: ${r.base.files.length}</summary>`;
  if (r.base.files.length === 0) return { head: [], items: [], more: () => '', short: [] };
  return {
    head: [summaryLine, '', '| Change | File |', '|---|---|'],
    items: r.base.files.map((f) => `| ${FILE_STATUS[f.status] ?? f.status} | ${cell(f.from !== undefined ? `${f.from} → ${f.file}` : f.file)} |`),
    tail: ['', '</details>', ''],
    more: (n) => `| … | ${counted(n, 'more file')} |`,
    short: [summaryLine, '', 'Too many to list here.', '', '</details>', ''],
  };
}

export function renderPreview(r: PreviewResult, limit = COMMENT_LIMIT): string {
  const head = [...header(r), ...summary(r), ...status(r)];
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  const warns = r.diagnostics.filter((d) => d.severity === 'warning');
  const sections: Section[] = [
    ...(r.warnings.length ? [warnings(r)] : []),
    ...(errors.length ? [diagnosticsSection('Validation failed', errors)] : []),
  ];
  if (r.valid) sections.push(changesTable(r), details(r), drift(r), unknownSecrets(r));
  sections.push(changedFiles(r));
  if (warns.length) sections.push(diagnosticsSection('Manifest warnings', warns));
  if (!r.valid) sections.push({ head: ['_No plan was made._', ''], items: [], more: () => '', short: [] });
  return fitComment(head, sections, limit);
}
