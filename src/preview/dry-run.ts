/**
 * Server-side dry runs of the touched integrations (`?dryRun=true` on POST, PUT or DELETE, as the plan
 * requires): the service runs its validation tests and changes nothing. `dryRunRequest` decides (pure)
 * whether and what to send; `sendDryRun` sends it and turns the answer into rows for the comment.
 */
import type { ServiceApi } from '../api/client-types.js';
import type { IntegrationBody, IntegrationMutationResult, ValidationResults } from '../api/types.js';
import { resultsFromError, validationVerdict } from '../apply/validation.js';
import { ApiError, TransportError } from '../errors.js';
import type { TargetCheck } from './targets.js';
import type { DryRunResult, LiveAction, ValidationRow } from './types.js';

export interface DryRunInput {
  action: LiveAction;
  liveId?: string;
  blocked?: string;
  /** The body as apply would send it (secrets resolved): create and update. */
  body?: IntegrationBody;
  /** The 2.9 delete payload (secrets resolved), when the delete needs one. */
  deletePayload?: Record<string, unknown>;
  /** Secret references of this resource that cannot be resolved here. */
  unknownRefs: string[];
  targets: TargetCheck;
  /** Why the preview is offline (no dry run at all), when it is. */
  offline?: string;
}

export type DryRunRequest =
  | { method: 'POST'; path: string; body: IntegrationBody }
  | { method: 'PUT'; path: string; id: string; body: IntegrationBody }
  | { method: 'DELETE'; path: string; id: string; payload?: Record<string, unknown> };

const skipped = (reason: string): DryRunResult => ({ status: 'skipped', reason, tests: [] });

/** The request to send, or why none is sent; undefined when the action sends nothing (no-op, adopt). */
export function dryRunRequest(input: DryRunInput): DryRunRequest | DryRunResult | undefined {
  const { action } = input;
  if (action !== 'create' && action !== 'update' && action !== 'delete' && action !== 'replace') return undefined;
  if (input.offline !== undefined) return skipped(`offline: ${input.offline}`);
  if (input.blocked !== undefined) return skipped(`the ${action} is blocked: ${input.blocked}`);
  if (input.unknownRefs.length) {
    return skipped(`secrets not available here (${input.unknownRefs.join(', ')}): give the job the secrets of the touched integrations to dry-run them`);
  }
  if (!input.targets.allowed) return skipped(input.targets.reason);
  if (action === 'create') return input.body ? { method: 'POST', path: '/integrations?dryRun=true', body: input.body } : undefined;
  if (input.liveId === undefined) return undefined;
  const id = input.liveId;
  if (action === 'update') return input.body ? { method: 'PUT', path: `/integrations/${id}?dryRun=true`, id, body: input.body } : undefined;
  // delete, and the delete half of a replace (its create half cannot be dry-run while the old one exists)
  return { method: 'DELETE', path: `/integrations/${id}?dryRun=true`, id, ...(input.deletePayload ? { payload: input.deletePayload } : {}) };
}

function rows(results: ValidationResults | undefined, redact: (s: string) => string): ValidationRow[] {
  return (results?.validationTests ?? []).map((t) => ({
    name: redact(String(t.name)),
    status: String(t.status),
    result: Array.isArray(t.result) ? (JSON.parse(redact(JSON.stringify(t.result))) as unknown[]) : [],
  }));
}


/**
 * Send one dry run. Never throws for a service answer: 422 is `failed`; an answer the failure catalogue calls transient
 * (409 busy, 408, 429 rate limited, 5xx) and network failures are `error` (not run: the change was not judged); other
 * 4xx `rejected`.
 */
export async function sendDryRun(api: ServiceApi, req: DryRunRequest, redact: (s: string) => string): Promise<DryRunResult> {
  const request = `${req.method} ${req.path}`;
  let res: IntegrationMutationResult;
  try {
    if (req.method === 'POST') res = await api.createIntegration(req.body, { dryRun: true });
    else if (req.method === 'PUT') res = await api.updateIntegration(req.id, req.body, { dryRun: true });
    else res = await api.deleteIntegration(req.id, req.payload, { dryRun: true });
  } catch (err) {
    if (err instanceof ApiError) {
      const tests = rows(resultsFromError(err), redact);
      const reason = redact(`${err.statusCode} ${err.error}: ${err.message}`);
      if (err.statusCode === 422) return { status: 'failed', request, reason, tests };
      if (err.transient) return { status: 'error', request, reason, tests };
      return { status: 'rejected', request, reason, tests };
    }
    if (err instanceof TransportError) return { status: 'error', request, reason: redact(`cannot reach the service: ${err.message}`), tests: [] };
    throw err;
  }
  const tests = rows(res.validationResults, redact);
  // The rule apply uses (apply/validation.ts): an overall failing status fails even with no failing test.
  const { verdict, overall } = validationVerdict(res.validationResults);
  return { status: verdict, request, tests, ...(overall !== undefined ? { reason: redact(`overall validation status ${overall}, no failing test named`) } : {}) };
}
