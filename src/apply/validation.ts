/** Validation results of the service: which tests failed, and a failure carrying them. */
import { ApiError, ErrorCode, GovopsError, type ErrorCodeValue } from '../errors.js';
import type { ValidationResults, ValidationTest } from '../api/types.js';
import { isPlainObject } from '../util/object.js';

// `warning` passes: the service reports it on success too (issue 8: a plan must apply against a service that warns)
const OK_STATUSES = new Set(['passed', 'skipped', 'warning']);
/** The overall status normalize.ts gives a body that has none: not counted. */
const ABSENT = 'unknown';

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

export interface ValidationVerdict {
  verdict: 'passed' | 'warning' | 'failed';
  /** Tests whose status is not passed, skipped or warning (a status the interface does not list fails). */
  failing: TestSummary[];
  /** The overall `validationResults.status` when it fails on its own (no failing test named). */
  overall?: string;
}

/**
 * The one rule for validation results, used by apply and preview alike: a test or the overall status other than
 * passed, skipped or warning fails (the overall status counts even when no test failed: a service may answer a
 * failing dry run with 200 and only the overall `failed`); an absent overall status is not counted; a warning
 * passes, shown as a warning.
 */
export function validationVerdict(results: ValidationResults | undefined): ValidationVerdict {
  const failing = failingTests(results);
  const status = results?.status ?? ABSENT;
  const overallFails = status !== ABSENT && !OK_STATUSES.has(status);
  if (failing.length > 0 || overallFails) return { verdict: 'failed', failing, ...(overallFails ? { overall: status } : {}) };
  const warned = status === 'warning' || summarizeTests(results).some((t) => t.status === 'warning');
  return { verdict: warned ? 'warning' : 'passed', failing };
}

/** Validation results riding along in an error body (422), when the service sends them. */
export function resultsFromError(err: unknown): ValidationResults | undefined {
  if (!(err instanceof ApiError) || !isPlainObject(err.body)) return undefined;
  const vr = err.body.validationResults;
  if (isPlainObject(vr) && Array.isArray(vr.validationTests)) return vr as unknown as ValidationResults;
  return undefined;
}

/** An apply step failed; `validation` holds the tests the service reported, if any. */
export class ApplyFailure extends GovopsError {
  override readonly name = 'ApplyFailure';
  readonly validation?: TestSummary[];
  /** The resource exists in the service after the failure (e.g. createError): record its id. */
  readonly liveId?: string;
  /** A settle timeout: the last status seen, as `describeUnsettled` words it (`last status: creating`). */
  readonly unsettled?: string;
  constructor(
    readonly code: ErrorCodeValue,
    message: string,
    extra: { validation?: TestSummary[]; liveId?: string; cause?: unknown; unsettled?: string } = {},
  ) {
    super(message, extra.cause !== undefined ? { cause: extra.cause } : undefined);
    if (extra.validation) this.validation = extra.validation;
    if (extra.liveId !== undefined) this.liveId = extra.liveId;
    if (extra.unsettled !== undefined) this.unsettled = extra.unsettled;
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
  code: ErrorCodeValue = ErrorCode.validationFailed,
  /** The service's answer it came from (a 422), when there was one. */
  cause?: ApiError,
): ApplyFailure {
  const { failing, overall } = validationVerdict(results);
  const detail = failing.length ? describeTests(failing) : overall !== undefined ? `overall validation status ${overall}, no failing test named` : fallback;
  return new ApplyFailure(code, `${what}${detail ? `: ${detail}` : ''}`, {
    validation: summarizeTests(results),
    ...(liveId !== undefined ? { liveId } : {}),
    ...(cause !== undefined ? { cause } : {}),
  });
}
