/**
 * The manual-flow gate (pure). An integration with `autoBootstrap: false` is set up by a script an admin
 * runs in the platform (interface 1.2, 4.1 script table); govops cannot run it. A create, edit or delete
 * of such an integration, of a kind that has a script for that phase, is therefore written only when the
 * manifest acknowledges the script for the configuration at hand (`govops/manual-step: "PHASE:TOKEN"`,
 * tokens from src/manifests/manual-step.ts). Otherwise the change is `awaiting` (and blocked); the rest
 * of the plan is unaffected. `--manual-steps trust` marks the gates `trusted` and blocks nothing.
 *
 * Phases per change (script table, each kind's `scripts` in src/kinds/): create -> `initial-create` + `create`
 * (kinds with both) or `create`; update (including the PUT that fixes a failed creation) -> `edit`; delete ->
 * `delete`, or for an integration whose creation failed `cleanup` (+ `post-cleanup` where the kind has it); replace -> the
 * delete's phase, then the create's.
 */
import type { LiveIntegration } from '../api/types.js';
import { MANUAL_STEP_ANNOTATION as ANNOTATION, type AckPhase, type Acknowledgment } from './acknowledgment.js';
import type { ManagedResource } from '../state/types.js';
import { type ScriptPhase } from '../service/kinds.js';
import { SCRIPT_KINDS, isIntegrationType, type IntegrationType } from '../kinds/registry.js';
import type { DesiredIntegration, ManualScriptStep, ManualStepGate, ManualStepsMode, ResourceChange } from './types.js';
import { blocked, type Blocked } from './notes.js';
import { escapeRegExp } from '../util/strings.js';

export interface GateContext {
  desired: ReadonlyMap<string, DesiredIntegration>;
  /** Live integrations by id. */
  live: ReadonlyMap<string, LiveIntegration>;
  /** State entries of integrations by name (orphans have only these). */
  state: ReadonlyMap<string, ManagedResource>;
  mode: ManualStepsMode;
}

interface Requirement {
  ack: AckPhase;
  scripts: ScriptPhase[];
}

/** A word safe in a POSIX shell as it is, or single-quoted. */
export function shellWord(s: string): string {
  return /^[\w./@:=+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function scriptCommand(name: string, phase: ScriptPhase, file?: string, ack = false): string {
  return `govops scripts ${shellWord(name)} --phase ${phase}${file ? ` ${shellWord(file)}` : ''}${ack ? ' --ack' : ''}`;
}

/**
 * The script that ends the step `phase` is part of, for this kind: `create` after `initial-create`, `post-cleanup`
 * after `cleanup` where the kind has it; else `phase`. The step's acknowledgment is written once that one ran.
 */
export function lastScriptOfStep(phase: ScriptPhase, type: IntegrationType): ScriptPhase {
  if (phase === 'initial-create' && SCRIPT_KINDS.create.has(type)) return 'create';
  if (phase === 'cleanup' && SCRIPT_KINDS['post-cleanup'].has(type)) return 'post-cleanup';
  return phase;
}

function createRequirement(type: IntegrationType, autoBootstrap: boolean | undefined): Requirement | undefined {
  if (autoBootstrap !== false || !SCRIPT_KINDS.create.has(type)) return undefined;
  const scripts: ScriptPhase[] = SCRIPT_KINDS['initial-create'].has(type) ? ['initial-create', 'create'] : ['create'];
  return { ack: 'create', scripts };
}

function editRequirement(type: IntegrationType, autoBootstrap: boolean | undefined): Requirement | undefined {
  if (autoBootstrap !== false || !SCRIPT_KINDS.edit.has(type)) return undefined;
  return { ack: 'edit', scripts: ['edit'] };
}

/** Delete of a created integration: the delete script; of one whose creation failed: the cleanup scripts. */
function deleteRequirement(type: IntegrationType, autoBootstrap: boolean | undefined, status: string | undefined): Requirement | undefined {
  if (autoBootstrap !== false) return undefined;
  if (status === 'createError') return cleanupRequirement(type);
  if (!SCRIPT_KINDS.delete.has(type)) return undefined;
  return { ack: 'delete', scripts: ['delete'] };
}

function cleanupRequirement(type: IntegrationType): Requirement | undefined {
  if (!SCRIPT_KINDS.cleanup.has(type)) return undefined;
  return { ack: 'cleanup', scripts: SCRIPT_KINDS['post-cleanup'].has(type) ? ['cleanup', 'post-cleanup'] : ['cleanup'] };
}

function requirements(c: ResourceChange, d: DesiredIntegration | undefined, live: LiveIntegration | undefined, st: ManagedResource | undefined): Requirement[] {
  const desiredType = d?.body.type;
  const recorded = live?.type ?? st?.type;
  // (a live type govops does not know has no scripts; its change is blocked anyway)
  const liveType = isIntegrationType(recorded) ? recorded : undefined;
  const liveAuto = live?.autoBootstrap ?? st?.autoBootstrap;
  const out: Array<Requirement | undefined> = [];
  switch (c.action) {
    case 'create':
      if (desiredType) out.push(createRequirement(desiredType, d.body.autoBootstrap));
      break;
    case 'update':
      if (desiredType) out.push(editRequirement(desiredType, d.body.autoBootstrap));
      break;
    case 'delete':
      if (!c.goneFromService && liveType) out.push(deleteRequirement(liveType, liveAuto, live?.status));
      break;
    case 'replace':
      if (liveType) out.push(deleteRequirement(liveType, liveAuto, live?.status));
      if (desiredType) out.push(createRequirement(desiredType, d.body.autoBootstrap));
      break;
    default:
      break;
  }
  return out.filter((r): r is Requirement => r !== undefined);
}

function describe(acks: readonly Acknowledgment[]): string {
  return acks.map((a) => `${a.phase}:${a.token}`).join(' ');
}

/** Why the annotation does not acknowledge `expected` (undefined when it does). */
function mismatch(expected: readonly Acknowledgment[], given: readonly Acknowledgment[]): string | undefined {
  const missing = expected.filter((e) => !given.some((g) => g.phase === e.phase && g.token === e.token));
  if (missing.length === 0) return undefined;
  if (given.length === 0) return `the manifest has no ${ANNOTATION} annotation`;
  const stale = missing.filter((m) => given.some((g) => g.phase === m.phase));
  if (stale.length > 0) {
    const old = given.filter((g) => stale.some((s) => s.phase === g.phase));
    return (
      `the annotation acknowledges ${describe(old)}, a script run for another configuration (it changed since): ` +
      `run the script again for this configuration`
    );
  }
  return `the annotation acknowledges ${describe(given)}, but this change needs ${describe(missing)}`;
}

/**
 * An update that only changes credentials (every changed field a secret) of an integration that is not a failed
 * creation: the non-secret configuration, which is what a script is made for, stays as it is.
 */
function credentialsOnly(c: ResourceChange, live: LiveIntegration | undefined): boolean {
  return c.action === 'update' && live?.status !== 'createError' && c.changes.length > 0 && c.changes.every((f) => f.sensitive && !f.forcesReplace);
}

/**
 * The entry of the annotation that acknowledges a script (create or edit) run for the configuration as it is now,
 * if any: a credential rotation needs no new script once the platform was prepared for this configuration.
 */
function acknowledgedConfiguration(facts: NonNullable<DesiredIntegration['manualStep']>): Acknowledgment | undefined {
  return facts.acknowledged.find((a) => (a.phase === 'create' || a.phase === 'edit') && a.token === facts.tokens[a.phase]);
}

function gateFor(c: ResourceChange, reqs: Requirement[], d: DesiredIntegration | undefined, mode: ManualStepsMode, rotation = false): ManualStepGate {
  const file = c.source?.file;
  const scripts: ManualScriptStep[] = reqs.flatMap((r) => r.scripts.map((phase) => ({ phase, command: scriptCommand(c.name, phase, file) })));
  const gate: ManualStepGate = { status: 'awaiting', scripts };
  const facts = d?.manualStep;
  if (d && facts) {
    const expected = reqs.map((r) => ({ phase: r.ack, token: facts.tokens[r.ack] }));
    const value = describe(expected);
    gate.acknowledgment = { value, line: `${ANNOTATION}: "${value}"` };
  }
  if (mode === 'trust') {
    gate.status = 'trusted';
    return gate;
  }
  if (!d) {
    gate.reason =
      `no manifest to acknowledge it in: restore the manifest with metadata.annotations "govops/delete": "true", ` +
      `run ${reqs.flatMap((r) => r.scripts).map((p) => scriptCommand(c.name, p)).join(', then ')}, ` +
      `add the ${ANNOTATION} annotation it prints and apply with --prune (or run with --manual-steps trust)`;
    return gate;
  }
  if (!facts) {
    gate.reason = `the acknowledgment is unknown: ${scriptCommand(c.name, reqs[0]!.scripts[reqs[0]!.scripts.length - 1]!, file, true)} prints it`;
    return gate;
  }
  const why = mismatch(
    reqs.map((r) => ({ phase: r.ack, token: facts.tokens[r.ack] })),
    facts.acknowledged,
  );
  const prepared = why !== undefined && rotation ? acknowledgedConfiguration(facts) : undefined;
  if (prepared) {
    // the script that ran for this configuration covers it: the token leaves secret values out (decisions.md)
    const value = describe([prepared]);
    gate.acknowledgment = { value, line: `${ANNOTATION}: "${value}"` };
    gate.status = 'acknowledged';
  } else if (why === undefined) gate.status = 'acknowledged';
  else gate.reason = why;
  return gate;
}

const AWAITING = 'awaiting manual step';

/** One line for a blocked change: what to run and what to add. */
export function awaitingSummary(gate: ManualStepGate): string {
  const run = gate.scripts.map((s) => s.command).join(', then ');
  const add = gate.acknowledgment ? `, then add to metadata.annotations: ${gate.acknowledgment.line}` : '';
  return `${AWAITING} (${gate.reason ?? 'not acknowledged'}): run ${run} in the platform${add}`;
}

/** A `blocked` set by the gate (not by another reason). */
export function blockedByManualStep(b: Blocked): boolean {
  return b.code === 'awaiting-manual-step';
}

/**
 * Gate every manual-flow change of `changes` in place: set `manualStep`, and for an `awaiting` one `blocked`
 * (unless something else blocks it already). For an integration in `createError` also set `failedCreation`.
 */
export function gateManualSteps(changes: ResourceChange[], ctx: GateContext): void {
  for (const c of changes) {
    // (an adoption --no-adopt refuses waits for the operator, not for a script: no gate until it is adopted)
    if (c.resourceKind !== 'Integration' || c.blocked?.code === 'adopt-not-allowed') continue;
    const d = ctx.desired.get(c.name);
    const live = c.liveId !== undefined ? ctx.live.get(c.liveId) : undefined;
    const st = ctx.state.get(c.renamedFrom ?? c.name);
    if (live?.status === 'createError' && live.autoBootstrap === false && isIntegrationType(live.type)) addFailedCreation(c, live, live.type, d);
    const reqs = requirements(c, d, live, st);
    if (reqs.length === 0) continue;
    const gate = gateFor(c, reqs, d, ctx.mode, credentialsOnly(c, live));
    c.manualStep = gate;
    const first = gate.scripts[0]!;
    c.manualScript = { phase: first.phase, command: gate.scripts.map((s) => s.command).join(' && ') };
    if (gate.status === 'awaiting' && !c.blocked) c.blocked = blocked('awaiting-manual-step', awaitingSummary(gate));
  }
}

function addFailedCreation(c: ResourceChange, live: LiveIntegration, type: IntegrationType, d: DesiredIntegration | undefined): void {
  const cleanup = cleanupRequirement(type);
  const file = c.source?.file;
  const edit = SCRIPT_KINDS.edit.has(type) ? ` after ${scriptCommand(c.name, 'edit', file)} ran in the platform` : '';
  const token = d?.manualStep?.tokens.cleanup;
  c.failedCreation = {
    status: live.status,
    fix: `correct the configuration (or the platform) and govops fixes it with a PUT${edit}`,
    cleanup: (cleanup?.scripts ?? []).map((phase) => ({ phase, command: scriptCommand(c.name, phase, file) })),
    remove: cleanup
      ? `then have govops DELETE it: metadata.annotations "govops/delete": "true"` +
        `${token ? ` and ${ANNOTATION}: "cleanup:${token}"` : ''}, apply with --prune`
      : `have govops DELETE it: metadata.annotations "govops/delete": "true", apply with --prune`,
  };
}

/**
 * The change waits for a manual step, and for nothing else: one that something else blocks too (a replace without
 * --allow-replace) is a blocked change, not one a script would let through (apply: exit 1, not 3).
 */
export function isAwaitingManualStep(c: ResourceChange): boolean {
  return c.manualStep?.status === 'awaiting' && (c.blocked === undefined || blockedByManualStep(c.blocked));
}

/** What blocks the change besides its awaiting manual step (shown on its own), or undefined. */
export function blockedBesidesManualStep(c: ResourceChange): string | undefined {
  if (!c.blocked || (isAwaitingManualStep(c) && blockedByManualStep(c.blocked))) return undefined;
  return c.blocked.message;
}

/** The plan without the changes awaiting a manual step: what apply carries out. */
export function withoutAwaiting<P extends { changes: readonly ResourceChange[] }>(plan: P): P {
  return { ...plan, changes: plan.changes.filter((c) => !isAwaitingManualStep(c)) };
}

/**
 * The change with its manifest file named `file` instead (the daemon reconciles a revision from its own
 * folder and reports files as the user knows them): `source` and every `govops scripts` command in the
 * manual-step texts.
 */
export function relocateChange<C extends ResourceChange>(c: C, file: string): C {
  if (!c.source || c.source.file === file) return c;
  const fix = relocator(c.source.file, file);
  const out: C = { ...c, source: { ...c.source, file } };
  if (c.blocked !== undefined) out.blocked = { ...c.blocked, message: fix(c.blocked.message) };
  if (c.manualScript) out.manualScript = { ...c.manualScript, command: fix(c.manualScript.command) };
  if (c.manualStep) {
    out.manualStep = { ...c.manualStep, scripts: c.manualStep.scripts.map((s) => ({ ...s, command: fix(s.command) })) };
    if (c.manualStep.reason !== undefined) out.manualStep.reason = fix(c.manualStep.reason);
  }
  if (c.failedCreation) {
    const f = c.failedCreation;
    out.failedCreation = { ...f, fix: fix(f.fix), remove: fix(f.remove), cleanup: f.cleanup.map((s) => ({ ...s, command: fix(s.command) })) };
  }
  return out;
}

/** Rewrite the `govops scripts` commands inside a text about change `c` the same way. */
export function relocateText(text: string, c: ResourceChange, file: string): string {
  if (!c.source || c.source.file === file) return text;
  return relocator(c.source.file, file)(text);
}

/** Rewrites the file of every `govops scripts ... --phase P FILE` command in a text from `from` to `to`. */
function relocator(from: string, to: string): (text: string) => string {
  const re = new RegExp(`(--phase [a-z-]+) ${escapeRegExp(shellWord(from))}(?=$|[\\s,'"])`, 'g');
  return (text) => text.replace(re, `$1 ${shellWord(to)}`);
}
