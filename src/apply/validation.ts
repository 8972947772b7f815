/** Validation results of the service: which tests failed, and a failure carrying them. */
import { ApiError, ErrorCode, GovopsError, type FailureClass } from '../errors.js';
import type { ValidationResults, ValidationTest } from '../api/types.js';
import { isPlainObject } from '../util/object.js';

// `warning` passes: the service reports it on success too (issue 8: a plan must apply against a service that warns)
const OK_STATUSES = new Set(['passed', 'skipped', 'warning']);

export interface TestSummary {
  name: string;
  status: string;
}

export function summarizeTests(results: ValidationResults | undefined): TestSummary[] {
  return (results?.validationTests ?? []).map((t: ValidationTest) => ({ name: String(t.name), status: String(t.status) }));
}

export function failingTests(results: ValidationResults | undefined): TestSummary[] {
  return summarizeTests(results).filter((t) => !OK_STATUSES.has(t.status));
}

/** Validation results riding along in an error body (422), when the service sends them. */
export function resultsFromError(err: unknown): ValidationResults | undefined {
  if (!(err instanceof ApiError) || !isPlainObject(err.body)) return undefined;
  const vr = err.body.validationResults;
  if (isPlainObject(vr) && Array.isArray(vr.validationTests)) return vr as unknown as ValidationResults;
  return undefined;
}

/** Codes an apply step fails with, and their class. */
const APPLY_CODES: Readonly<Record<string, FailureClass>> = {
  [ErrorCode.validationFailed]: 'terminal',
  [ErrorCode.statusError]: 'terminal',
  [ErrorCode.alreadyExists]: 'terminal',
  [ErrorCode.blocked]: 'terminal',
  [ErrorCode.settleTimeout]: 'transient',
  [ErrorCode.conflictPersists]: 'transient',
  [ErrorCode.resourceGone]: 'transient',
  [ErrorCode.createUnsettled]: 'transient',
  [ErrorCode.cancelled]: 'transient',
};

/** An apply step failed; `validation` holds the tests the service reported, if any. */
export class ApplyFailure extends GovopsError {
  override readonly name = 'ApplyFailure';
  readonly failureClass: FailureClass;
  readonly validation?: TestSummary[];
  /** The resource exists in the service after the failure (e.g. createError): record its id. */
  readonly liveId?: string;
  constructor(
    readonly code: string,
    message: string,
    extra: { validation?: TestSummary[]; liveId?: string } = {},
  ) {
    super(message);
    this.failureClass = APPLY_CODES[code] ?? 'terminal';
    if (extra.validation) this.validation = extra.validation;
    if (extra.liveId !== undefined) this.liveId = extra.liveId;
  }
}

export function describeTests(tests: readonly TestSummary[]): string {
  return tests.map((t) => `${t.name}: ${t.status}`).join('; ');
}

/** `what: <failing tests>` — or `what: <fallback>` when the service named no failing test. */
export function validationFailure(
  what: string,
  results: ValidationResults | undefined,
  liveId?: string,
  fallback?: string,
  code: string = ErrorCode.validationFailed,
): ApplyFailure {
  const failing = failingTests(results);
  const detail = failing.length ? describeTests(failing) : fallback;
  return new ApplyFailure(code, `${what}${detail ? `: ${detail}` : ''}`, {
    validation: summarizeTests(results),
    ...(liveId !== undefined ? { liveId } : {}),
  });
}
