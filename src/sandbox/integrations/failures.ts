/**
 * Documented ways to make the sandbox fail, so clients can rehearse failure paths:
 * - a display host (host, workspaceUrl's host, object_store name, dataset_warehouse dataset) ending in
 *   `.invalid` fails the Basic Connection Test synchronously (422);
 * - one ending in `.late-fail.example` is accepted, then its creation ends in `createError`;
 * - a lakehouse `httpPath` containing `nometastore` is a 422 "metastore information could not be found";
 * - control rules: make a named validation test fail/warn (`POST /_sandbox/fail-tests`), or make the next
 *   N accepted creates/edits/deletes end in createError/editError/deleteError (`POST /_sandbox/fail-next`).
 */
export type Operation = 'create' | 'edit' | 'delete';
export const OPERATIONS: readonly Operation[] = ['create', 'edit', 'delete'];

export const INVALID_HOST_SUFFIX = '.invalid';
export const LATE_FAIL_SUFFIX = '.late-fail.example';
export const NO_METASTORE_MARKER = 'nometastore';

export interface FailTestRule {
  /** Exact test name, or `*` for every test. */
  name: string;
  status: 'failed' | 'warning';
  /** Only for this integration id. */
  id?: number;
  /** Only when the display host contains this text. */
  match?: string;
  /** Only for this operation. */
  operation?: Operation;
  /** Fire for the next N matching validations, then expire; absent = until cleared. */
  count?: number;
}

export interface FailNextRule {
  operation: Operation;
  count: number;
  id?: number;
  match?: string;
}

export interface Target {
  operation: Operation;
  id?: number;
  host: string;
}

function applies(rule: { id?: number; match?: string; operation?: Operation }, t: Target): boolean {
  if (rule.operation !== undefined && rule.operation !== t.operation) return false;
  if (rule.id !== undefined && rule.id !== t.id) return false;
  if (rule.match !== undefined && !t.host.includes(rule.match)) return false;
  return true;
}

function obj(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('the body must be a JSON object');
  return raw as Record<string, unknown>;
}

function optionalSelectors(r: Record<string, unknown>): { id?: number; match?: string; count?: number } {
  const out: { id?: number; match?: string; count?: number } = {};
  if (r.id !== undefined) {
    const id = Number(r.id);
    if (!Number.isInteger(id)) throw new Error('"id" must be an integer');
    out.id = id;
  }
  if (r.match !== undefined) {
    if (typeof r.match !== 'string') throw new Error('"match" must be a string');
    out.match = r.match;
  }
  if (r.count !== undefined) {
    if (typeof r.count !== 'number' || !Number.isInteger(r.count) || r.count < 1) {
      throw new Error('"count" must be a positive integer');
    }
    out.count = r.count;
  }
  return out;
}

export function parseFailTest(raw: unknown): FailTestRule {
  const r = obj(raw);
  if (typeof r.name !== 'string' || r.name === '') throw new Error('"name" (a validation test name or "*") is required');
  const status = r.status ?? 'failed';
  if (status !== 'failed' && status !== 'warning') throw new Error('"status" must be "failed" or "warning"');
  const rule: FailTestRule = { name: r.name, status, ...optionalSelectors(r) };
  if (r.operation !== undefined) {
    if (!OPERATIONS.includes(r.operation as Operation)) throw new Error('"operation" must be create, edit or delete');
    rule.operation = r.operation as Operation;
  }
  return rule;
}

export function parseFailNext(raw: unknown): FailNextRule {
  const r = obj(raw);
  if (!OPERATIONS.includes(r.operation as Operation)) throw new Error('"operation" must be create, edit or delete');
  const sel = optionalSelectors(r);
  return { operation: r.operation as Operation, ...sel, count: sel.count ?? 1 };
}

export class Failures {
  tests: FailTestRule[] = [];
  next: FailNextRule[] = [];

  clear(): void {
    this.tests = [];
    this.next = [];
  }

  /**
   * The forced status of a test. A rule's `count` is a number of validations: within one validation, pass `fired`
   * to collect the rules that fired and `spend` them once at its end (`*` forces every test of it); without
   * `fired`, the count is used up at once.
   */
  forcedStatus(testName: string, t: Target, fired?: Set<FailTestRule>): 'failed' | 'warning' | undefined {
    const rule = this.tests.find((r) => (r.name === '*' || r.name === testName) && applies(r, t));
    if (!rule) return undefined;
    if (fired) fired.add(rule);
    else this.spend([rule]);
    return rule.status;
  }

  /** Use up one `count` of each rule (those that fired in a validation); expired rules go. */
  spend(rules: Iterable<FailTestRule>): void {
    for (const rule of rules) {
      if (rule.count !== undefined && --rule.count <= 0) this.tests = this.tests.filter((r) => r !== rule);
    }
  }

  /** Whether this accepted operation must end in an error status (consumes a rule's count). */
  takeLateFailure(t: Target): boolean {
    if (t.operation === 'create' && t.host.endsWith(LATE_FAIL_SUFFIX)) return true;
    const rule = this.next.find((r) => r.operation === t.operation && applies(r, t));
    if (!rule) return false;
    if (--rule.count <= 0) this.next = this.next.filter((r) => r !== rule);
    return true;
  }
}
