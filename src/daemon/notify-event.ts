/**
 * The notification a reconcile gives rise to (after Flux's notification-controller and Argo CD notifications),
 * as a CloudEvents 1.0 event in structured JSON mode. Pure: id and time are injected.
 *
 * One event per reconcile that did something worth telling, typed by what happened:
 * `io.govops.reconcile.applied` (changes applied, all ok), `.failed` (something was not applied, or the
 * service could not be reached), `.rejected` (invalid manifests, unresolvable secrets, plan errors: the revision
 * is rejected whole), `.blocked` (something was held back for a person to act on: a manual step awaiting its
 * acknowledgment, the deletion guard, a replace not allowed; other changes may have been applied), `.drift` (the plan has changes it did not apply: out-of-band drift at a resync without --self-heal,
 * or any pending change under --observe). A reconcile with nothing to do gives none.
 *
 * The data holds the revision, a summary and per-resource results: names, actions, codes and messages, never a
 * secret (the plan holds none; messages from the service pass the redactor when the event is serialised).
 */
import { ErrorCode } from '../errors.js';
import { isAwaitingManualStep } from '../plan/manual-steps.js';
import type { PlanSummary } from '../plan/types.js';
import { heldBack } from './classify.js';
import type { Attempt } from './loop.js';
import { counted } from '../util/plural.js';

export const EVENT_TYPES = ['applied', 'failed', 'rejected', 'blocked', 'drift'] as const;
export type EventKind = (typeof EVENT_TYPES)[number];
export const EVENT_TYPE_PREFIX = 'io.govops.reconcile.';

export interface ResourceResult {
  kind: 'Integration' | 'DataSource' | 'Webhook';
  name: string;
  action: string;
  /** `applied`, `failed`, `skipped` (not started), `blocked` (held back), `pending` (planned, not applied: drift/observe). */
  result: 'applied' | 'failed' | 'skipped' | 'blocked' | 'pending';
  liveId?: string;
  code?: string;
  message?: string;
}

export interface EventData {
  revision: string;
  reason: Attempt['reason'];
  /** The reconcile's verdict (`applied`, `failed`, `invalid`, `unreachable`, `drift`). */
  result: string;
  /** The daemon runs with --observe: nothing is ever applied. */
  observe: boolean;
  summary?: PlanSummary;
  message: string;
  code?: string;
  resources: ResourceResult[];
  /** Rejected revisions: the first problems, as `file:line:col: message`. */
  problems?: string[];
  /** The mass-deletion guard's refusal, when it held deletes back. */
  deletionGuard?: { rule: string; refused: number; limit: number; message: string };
  /** What govops reconciles (repository or folder), credentials removed. */
  source?: string;
}

export interface CloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  /**
   * CloudEvents extension attribute: the replica that sent the event (`--identity`). `source` names the producing
   * context, the same for every event of a host; two replicas (or a restart) are told apart by this.
   */
  govopsidentity?: string;
  data: EventData;
}

/**
 * What kind of event an attempt is, if any. Something held back that a person must act on (a manual step, the
 * deletion guard) makes it `blocked`, even when other changes were applied (they are listed too).
 */
export function eventKind(a: Attempt): EventKind | undefined {
  const outcomes = a.result?.outcomes ?? [];
  switch (a.verdict) {
    case 'blocked':
      return 'blocked';
    case 'applied':
      return outcomes.some(heldBack) ? 'blocked' : 'applied';
    case 'drift':
      return 'drift';
    case 'invalid':
      return 'rejected';
    case 'in-sync':
      // Only changes awaiting a manual step are left: nothing was written, but a person must act.
      return outcomes.some(heldBack) || (a.result?.plan?.changes.some(isAwaitingManualStep) ?? false) ? 'blocked' : undefined;
    case 'failed':
    case 'unreachable': {
      const notOk = outcomes.filter((o) => o.result !== 'ok' && o.result !== 'settling');
      return notOk.length > 0 && notOk.every(heldBack) ? 'blocked' : 'failed';
    }
  }
}

function resources(a: Attempt): ResourceResult[] {
  const plan = a.result?.plan;
  const out: ResourceResult[] = [];
  const outcomes = new Map((a.result?.outcomes ?? []).map((o) => [`${o.resourceKind}/${o.name}/${o.duplicateOf ?? ''}`, o]));
  for (const c of plan?.changes ?? []) {
    const acting = c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined;
    if (!acting) continue;
    const o = outcomes.get(`${c.resourceKind}/${c.name}/${c.duplicateOf ?? ''}`);
    // A wait for an integration still creating or editing (`settle`) is no change: told only when it failed (not when
    // the wait ended first: `settling`, looked at again by the next run).
    if (c.action === 'settle' && !c.adopt && (o === undefined || o.result === 'ok' || o.result === 'settling')) continue;
    const r: ResourceResult = { kind: c.resourceKind, name: c.name, action: o?.action ?? (c.adopt && c.action !== 'adopt' ? `adopt+${c.action}` : c.action), result: 'pending' };
    if (o) {
      r.result = o.result === 'ok' ? 'applied' : heldBack(o) ? 'blocked' : o.result === 'settling' ? 'pending' : o.result;
      if (o.liveId !== undefined) r.liveId = o.liveId;
      if (o.code !== undefined) r.code = o.code;
      if (o.error !== undefined && o.result !== 'ok') r.message = o.error;
    } else if (c.blocked) {
      // The code an apply gives it (src/apply: outcome.ts, runner.ts), so a resync without --self-heal that finds it
      // still held back (a plan, no outcome) is the same news as the revision that held it, not a second alert.
      r.result = 'blocked';
      r.code = isAwaitingManualStep(c) ? ErrorCode.awaitingManualStep : ErrorCode.blocked;
      r.message = c.blocked.message;
    }
    if (r.liveId === undefined && c.liveId !== undefined) r.liveId = c.liveId;
    out.push(r);
  }
  return out;
}

function message(kind: EventKind, a: Attempt, rs: readonly ResourceResult[], observe: boolean): string {
  const count = (result: ResourceResult['result']): number => rs.filter((r) => r.result === result).length;
  switch (kind) {
    case 'applied':
      return `revision ${a.revision}: ${counted(count('applied'), 'change')} applied`;
    case 'drift':
      return observe
        ? `revision ${a.revision}: ${counted(rs.length, 'change')} pending, not applied (--observe)`
        : `revision ${a.revision}: drift detected, ${counted(rs.length, 'change')} not applied (--self-heal is off)`;
    case 'blocked':
      return `revision ${a.revision}: ${counted(count('blocked'), 'change')} blocked${count('applied') ? `, ${count('applied')} applied` : ''}`;
    case 'rejected':
      return `revision ${a.revision} rejected: ${a.error ?? 'invalid'}`;
    case 'failed':
      return `revision ${a.revision}: ${a.error ?? a.verdict}`;
  }
}

/**
 * The event of an attempt, or undefined when there is nothing to tell. `source` is the event's CloudEvents
 * `source` (a URI reference naming this govops), `identity` the replica's (`--identity`, extension `govopsidentity`),
 * `origin` the reconciled source's description.
 */
export function eventFor(
  a: Attempt,
  ctx: { id: string; time: string; source: string; identity?: string; origin?: string; observe: boolean },
): CloudEvent | undefined {
  const kind = eventKind(a);
  if (!kind) return undefined;
  const rs = resources(a);
  const data: EventData = {
    revision: a.revision,
    reason: a.reason,
    result: a.verdict,
    observe: ctx.observe,
    message: message(kind, a, rs, ctx.observe),
    resources: rs,
  };
  const plan = a.result?.plan;
  if (plan) data.summary = { ...plan.summary };
  if (a.failure) data.code = a.failure.code;
  if (kind === 'rejected') {
    const problems = (a.result?.diagnostics ?? []).filter((d) => d.severity === 'error').slice(0, 20);
    data.problems = problems.length
      ? problems.map((d) => `${d.file}:${d.line}:${d.column}: ${d.kind && d.name ? `${d.kind}/${d.name}: ` : ''}${d.message}`)
      : (plan?.errors ?? []).slice(0, 20);
  }
  if (plan?.deletionRefusal) {
    const g = plan.deletionRefusal;
    data.deletionGuard = { rule: g.rule, refused: g.refused, limit: g.limit, message: g.message };
  }
  if (ctx.origin) data.source = ctx.origin;
  return {
    specversion: '1.0',
    id: ctx.id,
    source: ctx.source,
    type: `${EVENT_TYPE_PREFIX}${kind}`,
    subject: a.revision,
    time: ctx.time,
    datacontenttype: 'application/json',
    ...(ctx.identity !== undefined ? { govopsidentity: ctx.identity } : {}),
    data,
  };
}

/** What makes two events the same news (type, revision, per-resource results): a repeat is not sent again. */
export function eventSignature(e: CloudEvent): string {
  const rs = e.data.resources.map((r) => `${r.kind}/${r.name}:${r.action}:${r.result}:${r.code ?? ''}`).sort();
  return JSON.stringify([e.type, e.subject, e.data.code ?? '', rs, e.data.problems ?? []]);
}
