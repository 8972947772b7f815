/**
 * The webhook endpoints of interface 4.3 as sandbox routes (auth 'webhook': the server checks
 * `Bearer <token>` and sets req.caller).
 */
import { WEBHOOK_ACTIONS } from '../../service/events.js';
import type { Behaviours } from '../behaviours.js';
import { HttpError, type Caller, type Route, type SandboxRequest, type SandboxResponse } from '../http.js';
import type { Dispatcher, HistoryStore } from './dispatcher.js';
import type { HistoryRecord } from './types.js';
import { parseHistoryQuery, wireRecord } from './history.js';
import { canSee, summaryOf, viewOf, type WebhookStore, type WebhookSummary } from './store.js';
import { checkItem, type WebhookItemError } from './validate.js';

export interface RouteDeps {
  store: WebhookStore;
  history: HistoryStore;
  dispatcher: Dispatcher;
  now: () => Date;
  onChange?: () => void;
  behaviours?: Behaviours;
}

/** Whether any behaviour changes the webhook bodies (then nothing is served from the cache). */
function shaped(deps: RouteDeps): boolean {
  const b = deps.behaviours;
  return !!b && (b.has('string-ids') || b.has('extra-fields') || b.has('shuffle'));
}

/** A webhook body as the behaviours shape it: string ids, extra fields, shuffled notificationType. */
function shape<T extends { id: number; createdBy: number; notificationType?: string[] }>(deps: RouteDeps, body: T, w?: { secret?: string; createdAt: string; updatedAt: string; actionType: string | null }): Record<string, unknown> {
  const b = deps.behaviours;
  const out: Record<string, unknown> = { ...body };
  if (!b) return out;
  if (b.has('string-ids')) Object.assign(out, { id: String(body.id), createdBy: String(body.createdBy) });
  if (b.has('shuffle') && body.notificationType) out.notificationType = b.order(body.notificationType);
  if (b.has('extra-fields') && w) Object.assign(out, { actionType: w.actionType, createdAt: w.createdAt, updatedAt: w.updatedAt, secretConfigured: w.secret !== undefined, metadata: {} });
  return out;
}

/**
 * A history record as the behaviours shape it: under `string-ids` its integer ids (2.13: id, webhooksId,
 * webhooksActivityId, createdBy, request.webhookId) are strings.
 */
function recordBody(deps: RouteDeps, r: HistoryRecord): Record<string, unknown> {
  const out: Record<string, unknown> = wireRecord(r);
  // 2.13 lists webhooksActivityId, but a service may leave out a field it does not fill in
  if (deps.behaviours?.has('no-activity-id')) delete out.webhooksActivityId;
  if (!deps.behaviours?.has('string-ids')) return out;
  return {
    ...out,
    id: String(r.id),
    webhooksId: String(r.webhooksId),
    ...('webhooksActivityId' in out ? { webhooksActivityId: String(r.webhooksActivityId) } : {}),
    createdBy: String(r.createdBy),
    request: { ...r.request, webhookId: String(r.request.webhookId) },
  };
}

function callerOf(req: SandboxRequest): Caller {
  if (!req.caller) throw new HttpError(401, 'missing or unknown token; webhook endpoints need "Authorization: Bearer <token>"');
  return req.caller;
}

/** Path ids are integers; anything else is a 400. */
export function pathId(req: SandboxRequest, what: string): number {
  const raw = req.params.id ?? '';
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new HttpError(400, `${what} id must be an integer, got "${raw}"`);
  }
  return Number(raw);
}

function createWebhooks(deps: RouteDeps, req: SandboxRequest): SandboxResponse {
  const caller = callerOf(req);
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Array.isArray((body as { webhooks?: unknown }).webhooks)) {
    throw new HttpError(400, 'the body must be a JSON object with a "webhooks" array');
  }
  const items = (body as { webhooks: unknown[] }).webhooks;
  const at = deps.now().toISOString();
  const createdWebhooks: WebhookSummary[] = [];
  const errors: WebhookItemError[] = [];
  items.forEach((raw, index) => {
    const res = checkItem(raw, index, caller.role);
    if (res.ok) createdWebhooks.push(summaryOf(deps.store.create(res.item, caller.userId, at)));
    else errors.push(res.error);
  });
  if (createdWebhooks.length > 0) deps.onChange?.();
  if (shaped(deps)) return { status: 200, body: { createdWebhooks: createdWebhooks.map((w) => shape(deps, w)), errors } };
  return { status: 200, body: { createdWebhooks, errors } };
}

function visibleWebhook(deps: RouteDeps, req: SandboxRequest) {
  const caller = callerOf(req);
  const id = pathId(req, 'webhook');
  const w = deps.store.get(id);
  if (!w || !canSee(caller, w)) throw new HttpError(404, `webhook ${id} not found`);
  return w;
}

async function retry(deps: RouteDeps, req: SandboxRequest): Promise<SandboxResponse> {
  const caller = callerOf(req);
  const id = pathId(req, 'history record');
  const record = deps.history.get(id);
  if (!record || !canSee(caller, record)) throw new HttpError(404, `webhook history record ${id} not found`);
  const webhook = deps.store.get(record.webhooksId);
  if (!webhook) throw new HttpError(404, `webhook ${record.webhooksId} of history record ${id} was deleted; nothing to retry`);
  const created = await deps.dispatcher.runNow({
    webhook,
    request: { ...record.request, webhookId: webhook.id, webhookName: webhook.name },
    notificationType: record.notificationType,
    webhooksActivityId: record.webhooksActivityId,
  });
  if (!created) throw new HttpError(503, 'the sandbox is shutting down; the retry was aborted');
  return { status: 200, body: recordBody(deps, created) };
}

/** Routes in match order: static paths before `/webhooks/:id`. */
export function webhookRoutes(deps: RouteDeps): Route[] {
  return [
    { method: 'POST', pattern: '/webhooks', auth: 'webhook', handler: (req) => createWebhooks(deps, req), creates: true },
    {
      method: 'GET',
      pattern: '/webhooks',
      auth: 'webhook',
      handler: (req) => {
        const caller = callerOf(req);
        if (!shaped(deps)) return { status: 200, rawJson: deps.store.listJson(caller) };
        const list = deps.store.list(caller).map((v) => shape(deps, v, deps.store.get(v.id)));
        return { status: 200, body: deps.behaviours!.order(list) };
      },
    },
    { method: 'GET', pattern: '/webhooks/actions', auth: 'webhook', handler: () => ({ status: 200, body: [...WEBHOOK_ACTIONS] }) },
    {
      method: 'GET',
      pattern: '/webhooks/history',
      auth: 'webhook',
      handler: (req) => {
        const caller = callerOf(req);
        const page = deps.history.query(caller, parseHistoryQuery(req.query));
        // 4.3: count is an "integer as number or string"; under string-ids the string form.
        const count = deps.behaviours?.has('string-ids') ? String(page.count) : page.count;
        return { status: 200, body: { count, records: page.records.map((r) => recordBody(deps, r)) } };
      },
    },
    { method: 'POST', pattern: '/webhooks/history/retry/:id', auth: 'webhook', handler: (req) => retry(deps, req) },
    {
      method: 'GET',
      pattern: '/webhooks/:id',
      auth: 'webhook',
      handler: (req) => {
        const w = visibleWebhook(deps, req);
        return { status: 200, body: shape(deps, viewOf(w), w) };
      },
    },
    {
      method: 'DELETE',
      pattern: '/webhooks/:id',
      auth: 'webhook',
      handler: (req) => {
        const w = visibleWebhook(deps, req);
        deps.store.delete(w.id);
        deps.onChange?.();
        return { status: 200, body: shape(deps, summaryOf(w)) };
      },
      writes: true,
    },
  ];
}
