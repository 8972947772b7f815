/**
 * The control API under /_sandbox: request log, reset, fault injection, failure rules, out-of-band edits and
 * finishing transitions. Its routes carry no scheme of the interface (auth 'none'); the server guards every
 * control request instead (control-guard.ts: the admin token unless --dev, no cross-site browser request, no
 * webhook delivery, JSON bodies only).
 */
import { HttpError, type Route, type SandboxRequest } from './http.js';
import { parseFaultInput, parseStuck, type FaultInput, type FaultSet } from './faults.js';
import type { RequestLog } from './requestlog.js';
import { parseFailNext, parseFailTest, type Failures } from './integrations/failures.js';
import type { IntegrationStore } from './integrations/store.js';
import { TEST } from './integrations/validation.js';
import { fullView } from './integrations/view.js';
import { isPlainObject } from '../util/object.js';

export interface ControlDeps {
  log: RequestLog;
  faults: FaultSet;
  failures: Failures;
  store: IntegrationStore;
  reset(): void;
  setStuck(on: boolean | readonly string[]): void;
}

/** Every validation test name the sandbox reports (interface 2.2). */
const TEST_NAMES: readonly string[] = Object.values(TEST);

function badRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, (err as Error).message);
  }
}

/** Deep merge for out-of-band edits: objects merge, `null` deletes a key, everything else replaces. */
export function mergeConfig(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isPlainObject(v) && isPlainObject(out[k])) out[k] = mergeConfig(out[k] as Record<string, unknown>, v);
    else out[k] = v;
  }
  return out;
}

function faultsView(faults: FaultSet) {
  return { rules: faults.list(), stuckTransitions: faults.stuckTransitions, stuckStatuses: faults.stuckStatuses };
}

/** All of the body is checked before any of it is applied: a 400 changes nothing. */
function addFaults(deps: ControlDeps, req: SandboxRequest) {
  const body = req.body;
  let inputs: unknown[] = [];
  let stuck: boolean | string[] | undefined;
  if (Array.isArray(body)) inputs = body;
  else if (isPlainObject(body) && 'type' in body) inputs = [body];
  else if (isPlainObject(body)) {
    if (body.rules !== undefined) {
      if (!Array.isArray(body.rules)) throw new HttpError(400, '"rules" must be an array');
      inputs = body.rules;
    }
    if (body.stuckTransitions !== undefined) stuck = badRequest(() => parseStuck(body.stuckTransitions));
  } else throw new HttpError(400, 'Send a fault rule, an array of rules, or {rules, stuckTransitions}');
  const parsed: FaultInput[] = badRequest(() => inputs.map(parseFaultInput));
  if (stuck !== undefined) deps.setStuck(stuck);
  const added = parsed.map((p) => deps.faults.add(p));
  return { status: 200, body: { added, ...faultsView(deps.faults) } };
}

export function controlRoutes(deps: ControlDeps): Route[] {
  const auth = 'none' as const;
  const faultsBody = () => faultsView(deps.faults);
  return [
    { method: 'GET', pattern: '/_sandbox/health', auth, handler: () => ({ status: 200, body: { status: 'ok', integrations: deps.store.size } }) },
    {
      method: 'POST',
      pattern: '/_sandbox/reset',
      auth,
      handler: () => {
        deps.reset();
        return { status: 200, body: { reset: true } };
      },
    },
    { method: 'GET', pattern: '/_sandbox/requests', auth, handler: () => ({ status: 200, body: { requests: deps.log.list() } }) },
    {
      method: 'DELETE',
      pattern: '/_sandbox/requests',
      auth,
      handler: () => {
        deps.log.clear();
        return { status: 200, body: { cleared: true } };
      },
    },
    { method: 'GET', pattern: '/_sandbox/faults', auth, handler: () => ({ status: 200, body: faultsBody() }) },
    { method: 'POST', pattern: '/_sandbox/faults', auth, handler: (req) => addFaults(deps, req) },
    {
      method: 'DELETE',
      pattern: '/_sandbox/faults',
      auth,
      handler: () => {
        deps.faults.clear();
        deps.setStuck(false);
        return { status: 200, body: faultsBody() };
      },
    },
    {
      method: 'DELETE',
      pattern: '/_sandbox/faults/:id',
      auth,
      handler: (req) => {
        if (!deps.faults.remove(Number(req.params.id))) throw new HttpError(404, `No fault rule ${req.params.id}`);
        return { status: 200, body: faultsBody() };
      },
    },
    {
      method: 'GET',
      pattern: '/_sandbox/failures',
      auth,
      handler: () => ({ status: 200, body: { tests: deps.failures.tests, next: deps.failures.next } }),
    },
    {
      method: 'POST',
      pattern: '/_sandbox/fail-tests',
      auth,
      handler: (req) => {
        const rule = badRequest(() => parseFailTest(req.body));
        if (rule.name !== '*' && !TEST_NAMES.includes(rule.name)) {
          // exact names only: one that no validation has would never fire, and the rehearsal would pass unnoticed
          throw new HttpError(400, `unknown validation test ${JSON.stringify(rule.name)}: use "*" or one of ${TEST_NAMES.map((n) => JSON.stringify(n)).join(', ')}`);
        }
        deps.failures.tests.push(rule);
        return { status: 200, body: { tests: deps.failures.tests } };
      },
    },
    {
      method: 'DELETE',
      pattern: '/_sandbox/fail-tests',
      auth,
      handler: () => {
        deps.failures.tests = [];
        return { status: 200, body: { tests: [] } };
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/fail-next',
      auth,
      handler: (req) => {
        const rule = badRequest(() => parseFailNext(req.body));
        deps.failures.next.push(rule);
        return { status: 200, body: { next: deps.failures.next } };
      },
    },
    {
      method: 'DELETE',
      pattern: '/_sandbox/fail-next',
      auth,
      handler: () => {
        deps.failures.next = [];
        return { status: 200, body: { next: [] } };
      },
    },
    {
      method: 'PATCH',
      pattern: '/_sandbox/integrations/:id',
      auth,
      handler: (req) => {
        const item = deps.store.get(Number(req.params.id));
        if (!item) throw new HttpError(404, `Integration ${req.params.id} not found`);
        const body = req.body;
        if (!isPlainObject(body)) throw new HttpError(400, 'Send {config?: {...merged...}, status?: string}');
        if (body.config !== undefined && !isPlainObject(body.config)) throw new HttpError(400, '"config" must be an object');
        if (body.status !== undefined && typeof body.status !== 'string') throw new HttpError(400, '"status" must be a string');
        const patch: Parameters<IntegrationStore['update']>[1] = {};
        if (isPlainObject(body.config)) {
          patch.config = mergeConfig(item.config, body.config);
          patch.sent = mergeConfig(item.sent ?? item.config, body.config);
        }
        if (typeof body.status === 'string') Object.assign(patch, { status: body.status, pendingUntil: undefined, pendingFail: undefined });
        deps.store.update(item, patch);
        return { status: 200, body: fullView(item) };
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/transitions/finish',
      auth,
      handler: () => ({ status: 200, body: { completed: deps.store.finishAll() } }),
    },
  ];
}
