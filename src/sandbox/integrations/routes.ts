/** Integration endpoints (interface 4.1, 2.2-2.11, 3, 7, 8). Success status 200 everywhere. */
import { urlWithLowerHost } from '../../service/kinds.js';
import { NON_EDITABLE, naturalKey, deletePayloadRequired, type IntegrationType } from '../../kinds/registry.js';
import type { ValidationResults } from '../../api/types.js';
import { HttpError, type Route, type SandboxRequest, type SandboxResponse } from '../http.js';
import type { IntegrationContext } from './context.js';
import { deletePayloadProblems, isDryRun, isEmptyBody, parseId, parseIntegrationBody, type ParsedBody } from './body.js';
import { NO_METASTORE_MARKER, type Operation } from './failures.js';
import { TEST, failedTests, runValidation } from './validation.js';
import { masksOf, type StoredIntegration } from './view.js';
import { scriptRoutes } from './script-routes.js';
import { withCapitalArticle } from '../../util/strings.js';

/**
 * Statuses in which PUT and DELETE are 409 (interface 3: PUT needs "not in editing state", DELETE "not
 * being edited or deleted"; the 409 row is "editing (or deleting)"). `creating` is not among them: a PUT
 * or DELETE of an integration still being created is accepted and starts the new transition.
 */
export const BUSY: ReadonlySet<string> = new Set(['editing', 'deleting']);

function json(body: unknown): SandboxResponse {
  return { status: 200, body };
}

function find(ctx: IntegrationContext, req: SandboxRequest): StoredIntegration {
  const id = parseId(req);
  const item = ctx.store.get(id);
  if (!item) throw new HttpError(404, `Integration ${id} not found`);
  return item;
}

function validate(ctx: IntegrationContext, b: Omit<ParsedBody, 'sent'>, operation: Operation, id?: number, dryRun = false): ValidationResults {
  const target = { operation, host: ctx.store.host(b), ...(id !== undefined ? { id } : {}) };
  const results = runValidation(b.type, b.autoBootstrap, b.config, target, ctx.failures, ctx.behaviours.has('validation-warning'));
  const failed = failedTests(results);
  if (failed.length && dryRun && ctx.behaviours.has('dry-run-200-failed')) {
    // behaviour: 200, only the overall status says it failed (the failing tests are left out)
    return { status: 'failed', validationTests: results.validationTests.filter((t) => !failed.includes(t.name)) };
  }
  if (failed.length) {
    throw new HttpError(422, `Validation test failed: ${failed.join(', ')}`, { validationResults: results });
  }
  return results;
}

function get(obj: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

/** Non-editable attributes (src/service/kinds.ts) whose value differs between stored and requested. */
export function changedNonEditable(stored: StoredIntegration, b: ParsedBody): string[] {
  const before = { type: stored.type, autoBootstrap: stored.autoBootstrap, config: stored.config };
  const after = { type: b.type, autoBootstrap: b.autoBootstrap, config: b.config };
  const paths = new Set([...NON_EDITABLE[stored.type], ...NON_EDITABLE[b.type]]);
  // The workspace is its host: `https://h/` and `h` are the same one (the natural key says so).
  const same = (p: string): boolean =>
    p === 'config.workspaceUrl' && stored.type === 'lakehouse' && b.type === 'lakehouse'
      ? naturalKey('lakehouse', stored.config) === naturalKey('lakehouse', b.config)
      : JSON.stringify(get(before, p)) === JSON.stringify(get(after, p));
  return [...paths].filter((p) => !same(p));
}

function checkUnique(ctx: IntegrationContext, b: ParsedBody): void {
  const existing = ctx.store.byNaturalKey(naturalKey(b.type, b.config));
  if (existing) {
    const host = ctx.store.host(existing);
    if (existing.status === 'createError') {
      throw new HttpError(
        400,
        `An integration on host ${host} previously failed to create (id ${existing.id}). Use PUT /integrations/${existing.id} to fix it.`,
        { id: String(existing.id), host },
      );
    }
    throw new HttpError(
      409,
      `An integration already exists on host ${host} (id ${existing.id}); name and config must not conflict with the existing integration.`,
      { id: String(existing.id), host },
    );
  }
  if (b.type === 'object_store' && typeof b.config.cloudLocationPath === 'string') {
    const other = ctx.store.byCloudLocation(b.config.cloudLocationPath);
    if (other) {
      throw new HttpError(
        409,
        `cloudLocationPath ${b.config.cloudLocationPath} is already used by integration ${other.id} (${ctx.store.host(other)}).`,
        { id: String(other.id), host: ctx.store.host(other) },
      );
    }
  }
}

function checkMetastore(b: ParsedBody): void {
  if (b.type !== 'lakehouse') return;
  const httpPath = String(b.config.httpPath ?? '');
  if (!httpPath.toLowerCase().includes(NO_METASTORE_MARKER)) return;
  const validationResults: ValidationResults = {
    status: 'failed',
    validationTests: [
      { name: TEST.basic, status: 'passed', result: [] },
      { name: TEST.metastore, status: 'failed', result: [{ message: 'Metastore information could not be found' }] },
    ],
  };
  throw new HttpError(422, `Metastore information could not be found for workspace ${String(b.config.workspaceUrl)} (httpPath ${httpPath}).`, {
    validationResults,
  });
}

/** Behaviour lower-hosts: the host names of a config as this service stores them (lower-cased). */
function lowerHosts(config: Record<string, unknown>): Record<string, unknown> {
  const out = { ...config };
  if (typeof out.host === 'string') out.host = out.host.toLowerCase();
  if (typeof out.workspaceUrl === 'string') out.workspaceUrl = urlWithLowerHost(out.workspaceUrl);
  const okta = out.okta;
  if (okta && typeof okta === 'object' && !Array.isArray(okta) && typeof (okta as Record<string, unknown>).idpHost === 'string') {
    out.okta = { ...okta, idpHost: urlWithLowerHost((okta as Record<string, string>).idpHost) };
  }
  return out;
}

/** The body of a create or update, checked, as the service stores it under the behaviours. */
function parseBody(ctx: IntegrationContext, req: SandboxRequest): ParsedBody {
  const b = parseIntegrationBody(req.body, masksOf(ctx.behaviours));
  if (!ctx.behaviours.has('lower-hosts')) return b;
  return { ...b, config: lowerHosts(b.config), sent: lowerHosts(b.sent) };
}

function create(ctx: IntegrationContext, req: SandboxRequest): SandboxResponse {
  const dryRun = isDryRun(req);
  const b = parseBody(ctx, req);
  checkUnique(ctx, b);
  checkMetastore(b);
  const validationResults = validate(ctx, b, 'create', undefined, dryRun);
  if (dryRun) return json({ id: '', status: 'dryRun', validationResults });
  const now = new Date(ctx.now()).toISOString();
  const item: StoredIntegration = {
    id: ctx.store.allocateId(),
    type: b.type,
    autoBootstrap: b.autoBootstrap,
    config: b.config,
    sent: b.sent,
    status: 'creating',
    validationResults,
    createdAt: now,
    updatedAt: now,
  };
  ctx.store.insert(item);
  ctx.store.written(item.id);
  const fail = ctx.failures.takeLateFailure({ operation: 'create', id: item.id, host: ctx.store.host(item) });
  ctx.store.begin(item, 'creating', fail, req.caller);
  return json(ctx.store.mutationBody(item));
}

function update(ctx: IntegrationContext, req: SandboxRequest): SandboxResponse {
  const item = find(ctx, req);
  const dryRun = isDryRun(req);
  if (BUSY.has(item.status)) {
    throw new HttpError(409, `Integration ${item.id} is being modified or deleted (status ${item.status}); poll GET /integrations/${item.id}/status and retry. If it was deleted, POST to re-create it.`);
  }
  const b = parseBody(ctx, req);
  const changed = changedNonEditable(item, b);
  if (changed.length) {
    throw new HttpError(400, `These attributes cannot be changed after creation: ${changed.join(', ')}`, { attributes: changed });
  }
  // No uniqueness check: interface 8 states it for create only, and a PUT's only 409 is "being modified or deleted"
  // (7), which a client takes for busy and retries. The natural keys' fields are not editable, but for
  // dataset_warehouse `role` (its key is govops' reading, docs/decisions.md).
  const validationResults = validate(ctx, b, 'edit', item.id, dryRun);
  if (dryRun) return json({ ...ctx.store.mutationBody(item), validationResults });
  ctx.store.update(item, { config: b.config, sent: b.sent, autoBootstrap: b.autoBootstrap, validationResults });
  ctx.store.written(item.id);
  const fail = ctx.failures.takeLateFailure({ operation: 'edit', id: item.id, host: ctx.store.host(item) });
  ctx.store.begin(item, 'editing', fail, req.caller);
  return json(ctx.store.mutationBody(item));
}

function checkDeletePayload(item: StoredIntegration, body: unknown): void {
  const sent = !isEmptyBody(body);
  const type: IntegrationType = item.type;
  if (sent && type === 'lakehouse') throw new HttpError(400, 'Credentials must not be sent to delete a lakehouse integration');
  if (sent && (type === 'object_store' || type === 'dataset_warehouse' || type === 'distributed_sql')) {
    throw new HttpError(400, `${withCapitalArticle(type)} integration is deleted without a request body`);
  }
  if (sent && !item.autoBootstrap) {
    throw new HttpError(400, `Integration ${item.id} was configured manually (autoBootstrap false): do not send credentials; run the delete script, then DELETE without a body`);
  }
  if (!deletePayloadRequired(type, item.autoBootstrap)) return;
  if (!sent) {
    throw new HttpError(400, `Integration ${item.id} was created with autoBootstrap true: the privileged credentials (delete payload) are required`);
  }
  const problems = deletePayloadProblems(type, body);
  if (problems) throw new HttpError(400, `Invalid delete payload: ${problems}`);
}

function remove(ctx: IntegrationContext, req: SandboxRequest): SandboxResponse {
  const item = find(ctx, req);
  const dryRun = isDryRun(req);
  if (BUSY.has(item.status)) {
    throw new HttpError(409, `Integration ${item.id} is being modified or deleted (status ${item.status}); poll GET /integrations/${item.id}/status, then delete.`);
  }
  checkDeletePayload(item, req.body);
  const validationResults = validate(ctx, { type: item.type, autoBootstrap: item.autoBootstrap, config: item.config }, 'delete', item.id, dryRun);
  if (dryRun) return json({ ...ctx.store.mutationBody(item), validationResults });
  ctx.store.update(item, { validationResults });
  const fail = ctx.failures.takeLateFailure({ operation: 'delete', id: item.id, host: ctx.store.host(item) });
  ctx.store.begin(item, 'deleting', fail, req.caller);
  return json(ctx.store.mutationBody(item));
}

/** Status requests of a new integration still answered 404 under `status-404-lag`. */
const LAGGED_STATUS_REQUESTS = 2;

export function integrationRoutes(ctx: IntegrationContext): Route[] {
  const auth = 'integration' as const;
  /** Under `status-404-lag`: status requests answered per integration so far (a lagging replica for the first ones). */
  const statusSeen = ctx.behaviours.memory.statusRequests;
  return [
    { method: 'GET', pattern: '/integrations', auth, handler: () => ({ status: 200, rawJson: ctx.store.listJson() }) },
    { method: 'POST', pattern: '/integrations', auth, handler: (req) => create(ctx, req), creates: true },
    { method: 'GET', pattern: '/integrations/:id', auth, handler: (req) => ({ status: 200, rawJson: ctx.store.itemJson(find(ctx, req)) }) },
    { method: 'PUT', pattern: '/integrations/:id', auth, handler: (req) => update(ctx, req), writes: true },
    { method: 'DELETE', pattern: '/integrations/:id', auth, handler: (req) => remove(ctx, req), writes: true },
    {
      method: 'GET',
      pattern: '/integrations/:id/status',
      auth,
      handler: (req) => {
        const item = find(ctx, req);
        if (ctx.behaviours.has('status-404-lag')) {
          const seen = statusSeen.get(item.id) ?? 0;
          statusSeen.set(item.id, seen + 1);
          if (seen < LAGGED_STATUS_REQUESTS) throw new HttpError(404, `Integration ${item.id} not found`);
        }
        return json({ id: ctx.behaviours.has('string-ids') ? String(item.id) : item.id, status: ctx.behaviours.status(item.status) });
      },
    },
    ...scriptRoutes(ctx),
  ];
}
