/** Human output of a reconcile: diagnostics, progress lines, the final table (text and markdown). */
import { formatDuration } from '../util/duration.js';
import { formatDiagnostic } from '../manifests/format.js';
import { printable, printableData } from '../util/terminal.js';
import { mdText } from '../util/markdown.js';
import type { Diagnostic } from '../manifests/types.js';
import type { ResourceOutcome, ReconcileResult } from './types.js';
import { PLAN_FORMAT_VERSION } from '../plan/types.js';
import { counted } from '../util/plural.js';

export function diagnosticLine(d: Diagnostic): string {
  return formatDiagnostic(d);
}

const MARK = { ok: '✓', failed: '✗', skipped: '-', blocked: '!', settling: '…' } as const;

/**
 * One line per finished resource: `[3/10] ✓ Integration/a create (1.2s)` on a TTY, plain otherwise. The
 * error is left out (`withError` false) when the outcome table printed next lists it.
 */
export function progressLine(o: ResourceOutcome, done: number, total: number, tty: boolean, withError = true): string {
  const what = printable(`${o.resourceKind}/${o.name}`);
  const err = o.error && withError ? `: ${printable(o.error)}` : '';
  if (tty) return `[${done}/${total}] ${MARK[o.result]} ${what} ${o.action} (${formatDuration(o.durationMs)})${err}`;
  return `${what}: ${o.action} ${o.result} (${formatDuration(o.durationMs)})${err}`;
}

function pad(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, r[i]!.length), 0));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

export function outcomeTable(untrusted: readonly ResourceOutcome[]): string {
  if (untrusted.length === 0) return 'Nothing to apply.\n';
  const outcomes = printableData(untrusted); // the service's error messages and validation test names
  // Each title built once, not twice per comparison (issue #26: ~130,000 comparisons sort 10,000 outcomes).
  const titled = outcomes.map((o) => ({ o, title: `${o.resourceKind}/${o.name}` }));
  // Code-unit order: the same as localeCompare's for manifest names (lower-case letters, digits, '-') and kinds, without
  // starting ICU's collator, ~20 ms of CPU in each process that printed this table (most apply runs).
  titled.sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
  const sorted = titled.map((t) => t.o);
  const rows = [['RESOURCE', 'ACTION', 'RESULT', 'DURATION']];
  for (const { o, title } of titled) rows.push([title, o.action, o.result, formatDuration(o.durationMs)]);
  const lines = pad(rows);
  const problems = sorted.filter((o) => o.result !== 'ok');
  if (problems.length) {
    lines.push('');
    for (const o of problems) {
      lines.push(`${o.resourceKind}/${o.name}: ${o.error ?? o.result}`);
      for (const t of o.validation ?? []) lines.push(`    validation test "${t.name}": ${t.status}`);
    }
  }
  const count = (r: ResourceOutcome['result']): number => outcomes.filter((o) => o.result === r).length;
  const blocked = count('blocked');
  const settling = count('settling');
  // held back (skipped: the deletion guard, a replace not allowed; blocked: a manual step) is no failure
  const verdict = count('failed') ? 'finished with failures' : blocked || count('skipped') ? 'incomplete' : 'complete';
  const waiting = blocked ? `, ${blocked} awaiting a manual step` : '';
  const still = settling ? `, ${settling} still settling (the next run looks again)` : '';
  lines.push('', `Apply ${verdict}: ${count('ok')} ok, ${count('failed')} failed, ${count('skipped')} skipped${waiting}${still}.`);
  return `${lines.join('\n')}\n`;
}

export function outcomeMarkdown(outcomes: readonly ResourceOutcome[]): string {
  if (outcomes.length === 0) return 'Nothing to apply.\n';
  const cell = mdText; // names and the service's messages: no mention, link or HTML in the summary
  const lines = ['### govops apply', '', '| Resource | Action | Result | Duration | Error |', '|---|---|---|---|---|'];
  for (const o of outcomes) {
    lines.push(`| ${cell(`${o.resourceKind}/${o.name}`)} | ${o.action} | ${o.result} | ${formatDuration(o.durationMs)} | ${cell(o.error ?? '')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The closing `error:` text of a failed plan or apply. Problems already printed one per line (the
 * manifests' diagnostics on stderr; the plan's errors in a text plan) are counted, not printed again.
 */
export function failureSummary(result: ReconcileResult, verb: 'planned' | 'applied', planPrinted: boolean): string {
  const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
  if (result.stage === 'load' && errors > 0) return `${counted(errors, 'error')} in the manifests (listed above): nothing was ${verb}`;
  const planErrors = result.plan?.errors.length ?? 0;
  if (result.stage === 'plan' && planErrors > 0 && planPrinted) return `the plan has ${counted(planErrors, 'error')} (listed above): nothing was ${verb}`;
  const failed = result.outcomes.filter((o) => o.result === 'failed' || o.result === 'skipped').length;
  // The guard's refusal names the flag that allows it: say it here too (CI shows stderr).
  const refusal = result.plan?.deletionRefusal ? `: ${result.plan.deletionRefusal.message}` : '';
  if (result.stage === 'apply' && failed > 0) return `${failed} of ${counted(result.outcomes.length, 'resource')} not applied (listed above)${refusal}`;
  return result.error ?? `reconcile failed at stage ${result.stage}`;
}

/**
 * The outcomes in the plan's order (its changes are sorted), whatever order the resources finished in: the same plan
 * gives the same document. An outcome the plan does not list (none today) keeps its place after the others.
 */
function inPlanOrder(result: ReconcileResult): ReconcileResult['outcomes'] {
  if (!result.plan || result.outcomes.length < 2) return result.outcomes;
  const rank = new Map(result.plan.changes.map((c, i) => [`${c.resourceKind}/${c.name}`, i]));
  const at = (o: ReconcileResult['outcomes'][number]): number => rank.get(`${o.resourceKind}/${o.name}`) ?? rank.size;
  return [...result.outcomes].sort((a, b) => at(a) - at(b)); // stable: ties keep their order
}

/** The JSON document `govops apply --output json` prints. */
export function applyJson(result: ReconcileResult): string {
  return `${JSON.stringify(
    {
      // the envelope embeds the plan: its version follows the plan's
      formatVersion: PLAN_FORMAT_VERSION,
      ok: result.ok,
      stage: result.stage,
      revision: result.revision,
      error: result.error,
      failure: result.failure,
      diagnostics: result.diagnostics,
      plan: result.plan,
      outcomes: inPlanOrder(result),
      ...(result.stale ? { stale: result.stale } : {}),
    },
    null,
    2,
  )}\n`;
}
