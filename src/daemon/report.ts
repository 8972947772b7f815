/**
 * What the daemon tells its log and /status about a reconcile, so a person reading the terminal needs
 * nothing else: every problem of a rejected revision as its own `file:line:col` line, and drift by
 * resource and field (live value against the manifest's, `(sensitive)` for credentials, a long value cut).
 * Pure apart from the logger calls.
 */
import type { Logger } from 'pino';
import type { Plan, PlanChange } from '../plan/types.js';
import { formatDiagnostic } from '../reconcile/engine.js';
import type { ReconcileResult } from '../reconcile/types.js';
import { redactText } from '../util/redact.js';
import { counted } from '../util/plural.js';

/** One field that differs: the live value and the manifest's, or only `sensitive` for a credential. */
export interface DriftField {
  path: string;
  live?: unknown;
  desired?: unknown;
  sensitive?: true;
}

export interface DriftedResource {
  kind: PlanChange['resourceKind'];
  name: string;
  /** What the plan does about it (`update`, `create` when it was deleted behind govops' back...). */
  action: string;
  fields: DriftField[];
}

export interface DriftReport {
  revision: string;
  /** When the resync found it. */
  at: string;
  /** Put back by the resync (`--self-heal`), or only reported. */
  repaired: boolean;
  resources: DriftedResource[];
}

/**
 * The most characters of one value (its JSON, a string as it is) that drift shows: in the log line (twice: the
 * message and `fields`), in /status and in notifications. A manifest author's 1 MB value that the service refuses
 * was 2 MB of log at every resync, and 1 MB of every /status answer; `govops plan` shows the whole value.
 */
export const DRIFT_VALUE_MAX_CHARS = 1_024;

/**
 * A value as drift shows it: as it is, or, when longer than DRIFT_VALUE_MAX_CHARS, its beginning as text with its
 * length. Cut after the secrets in force are redacted, so a cut never leaves the first part of a secret unmatched.
 */
export function driftValue(v: unknown): unknown {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  if (text === undefined || text.length <= DRIFT_VALUE_MAX_CHARS) return v;
  const cut = redactText(text).slice(0, DRIFT_VALUE_MAX_CHARS).replace(/[\uD800-\uDBFF]$/, '');
  return `${cut}… (${text.length} characters in all; govops plan shows the whole value)`;
}

/** The fields of a change, credentials masked, long values cut (driftValue). */
export function driftFields(c: PlanChange): DriftField[] {
  return c.changes.map((f) => {
    if (f.sensitive) return { path: f.path, sensitive: true };
    const out: DriftField = { path: f.path };
    if (f.before !== undefined) out.live = driftValue(f.before);
    if (f.after !== undefined) out.desired = driftValue(f.after);
    return out;
  });
}

/** Resources whose live state differs from the manifests, with the fields. */
export function driftOf(plan: Plan): DriftedResource[] {
  return plan.changes
    // (an integration still creating or editing, waited for by `settle`, differs in no field: no drift)
    .filter((c) => ((c.action !== 'noop' && c.action !== 'settle') || c.adopt) && c.duplicateOf === undefined)
    .map((c) => ({ kind: c.resourceKind, name: c.name, action: c.adopt && c.action === 'noop' ? 'adopt' : c.action, fields: driftFields(c) }));
}

const shown = (v: unknown): string => (v === undefined ? '(unset)' : JSON.stringify(v));

function fieldText(f: DriftField): string {
  if (f.sensitive) return `${f.path} differs (sensitive)`;
  return `${f.path} is ${shown(f.live)} in the service, ${shown(f.desired)} in the manifest`;
}

const ACTION_TEXT: Record<string, string> = {
  create: 'missing from the service',
  delete: 'in the service without a manifest',
  replace: 'differs in a field that cannot be edited',
  adopt: 'not recorded as managed',
};

/** `Integration/sql: config.port is 1444 in the service, 1433 in the manifest`. */
export function driftLine(r: DriftedResource): string {
  const what = r.fields.length ? r.fields.map(fieldText).join('; ') : (ACTION_TEXT[r.action] ?? r.action);
  return `${r.kind}/${r.name}: ${what}`;
}

/** A rejected revision: a summary line, then one line per problem (errors, then warnings). */
export function logRejected(logger: Logger, result: ReconcileResult | undefined, error: string | undefined): void {
  const diagnostics = result?.diagnostics ?? [];
  const errors = diagnostics.filter((d) => d.severity === 'error');
  logger.error(
    { errors: errors.length, ...(errors.length ? {} : { error }) },
    `revision rejected (${errors.length || 'an'} error${errors.length === 1 ? '' : 's'}); the last good revision stays in force`,
  );
  for (const d of errors) logger.error({ file: d.file, line: d.line, column: d.column }, formatDiagnostic(d));
  for (const d of diagnostics.filter((x) => x.severity === 'warning')) {
    logger.warn({ file: d.file, line: d.line, column: d.column }, formatDiagnostic(d));
  }
}

/**
 * Drift found by a resync: a summary line, then one line per resource naming the fields. `repair-failed`: the
 * resync applied (--self-heal) and the apply failed, so `drift.resources` are those left as they were; `held-back`:
 * the apply held them back for a person (a replace without --allow-replace, a manual step...).
 */
export function logDrift(logger: Logger, drift: DriftReport, how?: 'repair-failed' | 'held-back'): void {
  const n = drift.resources.length;
  const resources = counted(n, 'resource');
  const why = how === 'repair-failed' ? 'the repair failed, see the last error' : 'held back for a person, see /status resources';
  logger.warn(
    { drifted: n, repaired: drift.repaired },
    drift.repaired
      ? `drift detected and repaired: ${resources} put back to the manifests`
      : how
        ? `drift detected and not repaired (${why}): ${resources} differ from the manifests`
        : `drift detected (not applied: --self-heal is off): ${resources} differ from the manifests`,
  );
  for (const r of drift.resources) logger.warn({ resource: `${r.kind}/${r.name}`, action: r.action, fields: r.fields }, `drift: ${driftLine(r)}`);
}
