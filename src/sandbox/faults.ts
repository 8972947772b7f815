/**
 * Fault injection for rehearsals and reliability tests: per endpoint (method + route pattern, a concrete
 * path, a `prefix*` or `*`) add latency, answer with an error status (5xx/429, optional Retry-After),
 * drop the connection, or force a 409. `rate` (0..1, default 1) makes a rule probabilistic; `count`
 * makes it deterministic: the rule fires for the next N matching requests, then expires. `exclusive`: when
 * the rule fires, no other rule touches the request (e.g. a slow create that must land).
 * Control routes (/_sandbox/...) are never faulted.
 */
export type FaultType = 'latency' | 'error' | 'drop' | 'conflict';
const TYPES: readonly FaultType[] = ['latency', 'error', 'drop', 'conflict'];
export const TRANSITIONS: readonly string[] = ['creating', 'editing', 'deleting'];

export function parseStuck(value: unknown): boolean | string[] {
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' && TRANSITIONS.includes(v))) return value as string[];
  throw new Error(`"stuckTransitions" must be true, false, or a list of ${TRANSITIONS.join(', ')}`);
}

export interface FaultRule {
  id: number;
  type: FaultType;
  /** HTTP method or `*` (default). */
  method: string;
  /** Route pattern (`/integrations/:id`), concrete path, `prefix*`, or `*` (default). */
  path: string;
  /** Probability a matching request is affected (default 1). */
  rate: number;
  /** Remaining matching requests the rule fires for; absent = unlimited. */
  count?: number;
  /** latency: added delay. */
  latencyMs?: number;
  /** error: status code (default 503). */
  status?: number;
  /** error: Retry-After header value in seconds. */
  retryAfter?: number;
  /** When this rule fires, the other rules leave the request alone. */
  exclusive?: boolean;
}

export type FaultInput = Partial<Omit<FaultRule, 'id'>> & { type: FaultType };

/** What to do with one request. */
export interface FaultDecision {
  delayMs: number;
  action?: { type: 'error'; status: number; retryAfter?: number } | { type: 'drop' } | { type: 'conflict' };
}

export function parseFaultInput(raw: unknown): FaultInput {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('a fault rule must be an object');
  const r = raw as Record<string, unknown>;
  if (!TYPES.includes(r.type as FaultType)) throw new Error(`fault "type" must be one of ${TYPES.join(', ')}`);
  const num = (k: string, min: number, max: number): number | undefined => {
    if (r[k] === undefined) return undefined;
    const v = r[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
      throw new Error(`fault "${k}" must be a number in ${min}..${max}`);
    }
    return v;
  };
  const str = (k: string): string | undefined => {
    if (r[k] === undefined) return undefined;
    if (typeof r[k] !== 'string' || r[k] === '') throw new Error(`fault "${k}" must be a non-empty string`);
    return r[k] as string;
  };
  const out: FaultInput = { type: r.type as FaultType };
  const method = str('method');
  if (method) out.method = method.toUpperCase();
  const path = str('path');
  if (path) out.path = path;
  const rate = num('rate', 0, 1);
  if (rate !== undefined) out.rate = rate;
  const count = num('count', 1, Number.MAX_SAFE_INTEGER);
  if (count !== undefined) out.count = Math.floor(count);
  const latencyMs = num('latencyMs', 0, 600_000);
  if (latencyMs !== undefined) out.latencyMs = latencyMs;
  const status = num('status', 400, 599);
  if (status !== undefined) out.status = Math.floor(status);
  const retryAfter = num('retryAfter', 0, 86_400);
  // a header of whole seconds (RFC 9110 delay-seconds): `2.5` was sent as is, a value clients read as no delay at all
  if (retryAfter !== undefined && !Number.isInteger(retryAfter)) throw new Error('fault "retryAfter" must be a whole number of seconds');
  if (retryAfter !== undefined) out.retryAfter = retryAfter;
  if (r.exclusive !== undefined) {
    if (typeof r.exclusive !== 'boolean') throw new Error('fault "exclusive" must be true or false');
    out.exclusive = r.exclusive;
  }
  if (out.type === 'latency' && out.latencyMs === undefined) throw new Error('a latency fault needs "latencyMs"');
  return out;
}

export function pathMatches(rulePath: string, pattern: string | undefined, path: string): boolean {
  if (rulePath === '*') return true;
  if (rulePath.endsWith('*')) return path.startsWith(rulePath.slice(0, -1));
  return rulePath === path || rulePath === pattern;
}

export class FaultSet {
  private rules: FaultRule[] = [];
  private nextId = 1;
  /** Transitional statuses that never finish while held (creating, editing, deleting). */
  private stuck = new Set<string>();

  /** True when any transition is held. */
  get stuckTransitions(): boolean {
    return this.stuck.size > 0;
  }

  get stuckStatuses(): string[] {
    return [...this.stuck];
  }

  /** Hold transitions: `true` = all, `false` = none, or the statuses to hold. */
  setStuck(value: boolean | readonly string[]): void {
    const statuses = value === true ? TRANSITIONS : value === false ? [] : value;
    for (const s of statuses) if (!TRANSITIONS.includes(s)) throw new Error(`stuck transitions: unknown status "${s}" (use ${TRANSITIONS.join(', ')})`);
    this.stuck = new Set(statuses);
  }

  isStuck(status: string): boolean {
    return this.stuck.has(status);
  }

  constructor(private readonly random: () => number = Math.random) {}

  add(input: FaultInput): FaultRule {
    const rule: FaultRule = { method: '*', path: '*', rate: 1, ...input, id: this.nextId++ };
    this.rules.push(rule);
    return rule;
  }

  remove(id: number): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length !== before;
  }

  clear(): void {
    this.rules = [];
    this.stuck.clear();
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** Decide the faults for a request (consumes `count`s of the rules that fire). */
  decide(method: string, pattern: string | undefined, path: string): FaultDecision {
    const decision: FaultDecision = { delayMs: 0 };
    if (this.rules.length === 0) return decision;
    /** The rules applied to this request: only their counts are used up (an exclusive rule overrides the others). */
    let applied: FaultRule[] = [];
    for (const rule of this.rules) {
      if (rule.method !== '*' && rule.method !== method) continue;
      if (!pathMatches(rule.path, pattern, path)) continue;
      if (rule.type !== 'latency' && decision.action) continue;
      if (rule.rate < 1 && this.random() >= rule.rate) continue;
      if (rule.exclusive) {
        decision.delayMs = 0;
        delete decision.action;
        applied = [];
      }
      applied.push(rule);
      if (rule.type === 'latency') decision.delayMs += rule.latencyMs ?? 0;
      else if (rule.type === 'error') {
        decision.action = { type: 'error', status: rule.status ?? 503 };
        if (rule.retryAfter !== undefined) decision.action.retryAfter = rule.retryAfter;
      } else decision.action = { type: rule.type };
      if (rule.exclusive) break;
    }
    for (const rule of applied) if (rule.count !== undefined) rule.count--;
    this.rules = this.rules.filter((r) => r.count === undefined || r.count > 0);
    return decision;
  }
}
