/** Terraform-like text rendering of a plan. Secrets never reach the plan, so they cannot reach the text. */
import { printableData, printableJson } from '../util/terminal.js';
import { blockedBesidesManualStep, isAwaitingManualStep } from './manual-steps.js';
import type { FailedCreation, FieldChange, ManualStepGate, NotComparable, Plan, PlanSummary, ResourceChange } from './types.js';
import { appendTo } from '../util/multimap.js';
import { agree, counted } from '../util/plural.js';

export interface TextOptions {
  color?: boolean;
}

const CODES = { red: 31, green: 32, yellow: 33, magenta: 35, cyan: 36, bold: 1, dim: 2 } as const;
type Paint = (code: keyof typeof CODES, text: string) => string;
const painter = (color: boolean): Paint => (code, text) => (color ? `\u001b[${CODES[code]}m${text}\u001b[0m` : text);

export function symbolFor(c: ResourceChange): string {
  switch (c.action) {
    case 'create':
      return '+';
    case 'update':
      return '~';
    case 'replace':
      return '-/+';
    case 'delete':
      return '-';
    case 'adopt':
      return '<=';
    case 'settle':
      return '...';
    default:
      return c.renamedFrom ? '~' : ' ';
  }
}

const COLOR_OF: Record<string, keyof typeof CODES> = {
  '+': 'green',
  '~': 'yellow',
  '-/+': 'magenta',
  '-': 'red',
  '<=': 'cyan',
  '...': 'dim',
};

/** A field's value as JSON, printable on a terminal (the one escaper: src/util/terminal.ts). */
export function value(v: unknown): string {
  return printableJson(v);
}

/** Field values are drawn by `value` (JSON, escaped there); every other string of the plan is made printable. */
const DRAWN_AS_JSON: ReadonlySet<string> = new Set(['before', 'after']);

export function describeAction(c: ResourceChange): string {
  const text = actionText(c);
  // A change something blocks (besides a manual step it awaits) is not going to happen: said so in its header too.
  return blockedBesidesManualStep(c) && text.startsWith('will be ') ? `would be ${text.slice('will be '.length)} (blocked)` : text;
}

function actionText(c: ResourceChange): string {
  if (c.suspended) return 'is suspended (govops/suspend): left alone';
  const adopt = c.adopt && c.action !== 'adopt' ? 'adopted and ' : '';
  switch (c.action) {
    case 'create':
      return 'will be created';
    case 'update':
      return `will be ${adopt}updated in place`;
    case 'replace':
      return `will be ${adopt}replaced (deleted, then created)`;
    case 'delete':
      return c.goneFromService ? 'is gone from the service and will be forgotten' : 'will be deleted';
    case 'adopt':
      return 'will be adopted (recorded in govops state; no change in the service)';
    case 'settle':
      return 'will be waited for: the service is still carrying out its create or edit (nothing sent)';
    default:
      return c.renamedFrom ? `was renamed from ${c.renamedFrom} (state only)` : 'no changes';
  }
}

export function fieldLine(f: FieldChange, action: ResourceChange['action']): string {
  const suffix = f.forcesReplace && action === 'replace' ? '   # forces replacement' : '';
  if (f.sensitive) {
    const sign = action === 'create' ? '+' : '~';
    return `${sign} ${f.path} = (sensitive)${suffix}`;
  }
  if (f.before === undefined) return `+ ${f.path} = ${value(f.after)}${suffix}`;
  if (f.after === undefined) return `- ${f.path} = ${value(f.before)}${suffix}`;
  return `~ ${f.path}: ${value(f.before)} -> ${value(f.after)}${suffix}`;
}

const HANDLING: Record<NotComparable['handling'], string> = {
  record: 'recorded in govops state as in the manifest, not sent (apply --resend-secrets sends them once)',
  resend: 're-sent once so govops state records what was sent (--resend-secrets)',
  send: 'sent with this change',
};

/** `? config.password: cannot be compared (...): what apply does`. */
export function notComparableLine(nc: NotComparable): string {
  return `? ${nc.paths.join(', ')}: cannot be compared (masked by the service, no fingerprint in govops state): ${HANDLING[nc.handling]}`;
}

/** `1 change is`, `2 changes are` (`verb`: `is` or `has`). */
function countOf(n: number, noun: string, verb: 'is' | 'has'): string {
  return `${counted(n, noun)} ${agree(n, verb, verb === 'is' ? 'are' : 'have')}`;
}

/** How many resources have credentials that cannot be compared, as a sentence ('' when none). */
export function notComparableSummary(plan: Plan): string {
  const n = plan.changes.filter((c) => c.notComparable).length;
  return n === 0 ? '' : `${countOf(n, 'resource', 'has')} credentials that cannot be compared (marked ?): not counted as changes.`;
}

export function summaryLine(s: PlanSummary): string {
  const settle = s.settle ? ` ${s.settle} to wait for (still creating or editing).` : '';
  return `Plan: ${s.create} to create, ${s.update} to update, ${s.replace} to replace, ${s.delete} to delete, ${s.adopt} to adopt.${settle}`;
}

export function resourceTitle(c: ResourceChange): string {
  if (c.resourceKind === 'DataSource' && c.integration) {
    const under = c.integration.name !== undefined ? `Integration/${c.integration.name}` : `integration ${c.integration.liveId ?? '?'}`;
    return `${c.resourceKind}/${c.name} (in ${under})`;
  }
  return `${c.resourceKind}/${c.name}${c.integrationType ? ` (${c.integrationType})` : ''}`;
}

/** The manual-flow gate of a change: the scripts, in order, and the acknowledgment (plain lines, no indent). */
export function manualStepLines(gate: ManualStepGate): string[] {
  const many = gate.scripts.length > 1;
  const scripts = gate.scripts.map((s, i) => `!   ${many ? `${i + 1}. ` : ''}${s.command}`);
  switch (gate.status) {
    case 'awaiting': {
      const lines = [`! awaiting manual step: ${gate.reason ?? 'not acknowledged'}`, `! run in the platform the script${many ? 's' : ''} printed by:`, ...scripts];
      if (gate.acknowledgment) lines.push(`! then add to metadata.annotations:`, `!   ${gate.acknowledgment.line}`);
      return lines;
    }
    case 'acknowledged':
      return [`# manual step acknowledged (${gate.acknowledgment?.value ?? ''}): the platform script${many ? 's' : ''} ran`];
    case 'trusted':
      return [`# manual step not checked (--manual-steps trust): run ${gate.scripts.map((s) => s.command).join(', then ')} in the platform first`];
  }
}

/** An integration whose creation failed, in the manual flow: the two ways out. */
export function failedCreationLines(f: FailedCreation): string[] {
  const lines = [`! the creation failed (status ${f.status}). Either fix it: ${f.fix};`];
  if (f.cleanup.length) {
    lines.push(`! or remove it: run in the platform the cleanup script${f.cleanup.length > 1 ? 's' : ''} printed by:`);
    f.cleanup.forEach((s, i) => lines.push(`!   ${f.cleanup.length > 1 ? `${i + 1}. ` : ''}${s.command}`));
    lines.push(`! ${f.remove}`);
  } else {
    lines.push(`! or remove it: ${f.remove}`);
  }
  return lines;
}

/** A note (`# reason`) on this many resources or more is printed once, after the list, with their names. */
export const GROUPED_NOTE_MIN = 5;
/** A plan listing more resources than this also opens with its summary line. */
export const SUMMARY_FIRST_OVER = 10;

/** The note lines of a change: its reasons and what cannot be compared. */
function notesOf(c: ResourceChange): string[] {
  return c.notComparable ? [notComparableLine(c.notComparable), ...c.reasons.map((r) => `# ${r.message}`)] : c.reasons.map((r) => `# ${r.message}`);
}

/** Notes repeated on GROUPED_NOTE_MIN resources or more: note -> the resources' titles, in plan order. */
export function repeatedNotes(changes: readonly ResourceChange[]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const c of changes) {
    for (const r of new Set(notesOf(c))) appendTo(by, r, `${c.resourceKind}/${c.name}`);
  }
  for (const [r, names] of by) if (names.length < GROUPED_NOTE_MIN) by.delete(r);
  return by;
}

function groupedNoteLines(grouped: Map<string, string[]>, paint: Paint): string[] {
  if (grouped.size === 0) return [];
  const out = ['Notes on several resources (not repeated above):'];
  for (const [note, names] of grouped) {
    const shown = names.slice(0, 5).join(', ');
    const more = names.length > 5 ? `, and ${names.length - 5} more` : '';
    out.push(paint('dim', `  ${note}`), paint('dim', `    ${names.length} resources: ${shown}${more}`));
  }
  return [...out, ''];
}

function renderChange(c: ResourceChange, paint: Paint, grouped: ReadonlyMap<string, unknown> = new Map()): string[] {
  const sym = symbolFor(c);
  const color = COLOR_OF[sym];
  const head = `${sym.padStart(3)} ${resourceTitle(c)}`;
  const lines = [
    `  # ${resourceTitle(c)} ${describeAction(c)}${c.liveId ? ` (id ${c.liveId})` : ''}`,
    color ? paint(color, head) : head,
  ];
  for (const f of c.changes) lines.push(`        ${fieldLine(f, c.action)}`);
  if (c.notComparable && !grouped.has(notComparableLine(c.notComparable))) lines.push(paint('cyan', `        ${notComparableLine(c.notComparable)}`));
  for (const r of c.reasons) if (!grouped.has(`# ${r.message}`)) lines.push(paint('dim', `        # ${r.message}`));
  if (c.failedCreation) lines.push(...failedCreationLines(c.failedCreation).map((l) => paint('yellow', `        ${l}`)));
  if (c.manualStep) {
    lines.push(...manualStepLines(c.manualStep).map((l) => (c.manualStep!.status === 'awaiting' ? paint('red', `        ${l}`) : `        ${l}`)));
  } else if (c.manualScript) {
    lines.push(`        ! manual step: run the ${c.manualScript.phase} script in the platform first: ${c.manualScript.command}`);
  }
  // an awaiting manual step is the block (shown above); anything else that blocks the change is shown too
  const blocked = blockedBesidesManualStep(c);
  if (blocked) lines.push(paint('red', `        ! blocked: ${blocked}`));
  if (c.ignoredFields?.length) lines.push(paint('dim', `        # ${ignoredLine(c)}`));
  if (c.source) lines.push(paint('dim', `        # ${c.source.file}:${c.source.line}:${c.source.column}`));
  return lines;
}

/** `ignored (govops/ignore-fields, never compared): config.port, ...` */
export function ignoredLine(c: ResourceChange): string {
  return `ignored (govops/ignore-fields, never compared${c.action === 'create' ? '; sent on create' : ''}): ${(c.ignoredFields ?? []).join(', ')}`;
}

/** Shown in a plan: what apply acts on, and suspended resources. */
export function isVisible(c: ResourceChange): boolean {
  return c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined || c.suspended === true;
}

/** `Targeted plan (--only ...): N other resource(s) not planned.` ('' for a plan without --only). */
export function targetsLine(plan: Plan): string {
  if (!plan.targets) return '';
  const n = plan.targets.untargeted;
  return `Targeted plan (--only ${plan.targets.only.join(' --only ')}): ${counted(n, 'other resource')} not planned; nothing is pruned that --only does not name exactly.`;
}

/** What a plan without changes says: of the targeted resources only, in a targeted plan (others may differ). */
export function noChangesLine(plan: Plan): string {
  return plan.targets ? 'No changes in the targeted resources.' : 'No changes: the service matches the manifests.';
}

/** Lines about what the plan leaves alone: suspended resources, ignored fields of unchanged resources. */
export function leftAloneLines(plan: Plan): string[] {
  const out: string[] = [];
  const suspended = plan.changes.filter((c) => c.suspended).length;
  if (suspended) out.push(`${counted(suspended, 'resource')} suspended (govops/suspend): left alone.`);
  const ignored = plan.changes.filter((c) => c.ignoredFields?.length && !isVisible(c));
  if (ignored.length) {
    out.push(`Fields ignored (govops/ignore-fields, never compared): ${ignored.map((c) => `${c.resourceKind}/${c.name}: ${c.ignoredFields!.join(', ')}`).join('; ')}.`);
  }
  return out;
}

/**
 * Only resources with something to do (and suspended ones) are shown; noops are counted, not listed. A long plan
 * opens with its summary too, and a note shared by many resources is printed once after the list.
 */
export function renderText(untrusted: Plan, options: TextOptions = {}): string {
  // Names, messages and keys come from manifests and the service: no control character reaches the terminal.
  const plan = printableData(untrusted, DRAWN_AS_JSON);
  const paint = painter(options.color ?? false);
  const out: string[] = [];
  const visible = plan.changes.filter(isVisible);
  const targeted = targetsLine(plan);
  if (targeted) out.push(paint('yellow', targeted), '');
  for (const e of plan.errors) out.push(paint('red', `Error: ${e}`));
  for (const w of plan.warnings) out.push(paint('yellow', `Warning: ${w.message}`));
  if (plan.errors.length || plan.warnings.length) out.push('');
  if (visible.length === 0) {
    out.push(noChangesLine(plan));
  } else {
    if (visible.length > SUMMARY_FIRST_OVER) out.push(paint('bold', summaryLine(plan.summary)), '');
    // a plan with errors is never applied (plan, apply, the daemon): its changes are what would follow once fixed
    out.push(
      plan.errors.length
        ? 'Nothing is applied while the plan has errors. Once they are fixed, govops would perform the following actions:'
        : 'govops will perform the following actions:',
      '',
    );
    const grouped = repeatedNotes(visible);
    for (const c of visible) out.push(...renderChange(c, paint, grouped), '');
    out.push(...groupedNoteLines(grouped, paint));
    // a change awaiting a manual step that something else blocks too is blocked (apply skips it, exit 1)
    const awaiting = visible.filter(isAwaitingManualStep).length;
    const blocked = visible.filter((c) => c.blocked).length - awaiting;
    if (awaiting) out.push(paint('red', `${countOf(awaiting, 'change', 'is')} awaiting a manual step and will not be applied until the manifest acknowledges it.`));
    if (blocked) out.push(paint('red', `${countOf(blocked, 'change', 'is')} blocked and will not be applied.`));
  }
  out.push(paint('bold', summaryLine(plan.summary)));
  const nc = notComparableSummary(plan);
  if (nc) out.push(nc);
  out.push(...leftAloneLines(plan));
  return `${out.join('\n')}\n`;
}
