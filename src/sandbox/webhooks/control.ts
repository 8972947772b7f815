/**
 * Control endpoints (auth 'none') so users and tests can fire webhooks:
 *   POST /_sandbox/events[?wait=true]  { notificationType, metadata?, actorUserId?, actorUserName? }
 *   GET  /_sandbox/webhooks/idle       waits until every delivery started so far is recorded
 *   POST /_sandbox/webhooks/history    { webhookId, count?, notificationType?, statusCode?, code?, from?, stepMs? }
 *                                      adds history records without delivering (large histories for benches)
 */
import { isEventName } from '../../service/events.js';
import { HttpError, type Route, type SandboxRequest } from '../http.js';
import type { Actor, EmitResult } from './types.js';

/** Synthetic history records (POST /_sandbox/webhooks/history). */
export interface SeedSpec {
  webhookId: number;
  count: number;
  notificationType?: string;
  statusCode: number;
  code?: string;
  /** createdAt of the first record (ms); the others follow every stepMs. */
  fromMs?: number;
  stepMs: number;
}

export interface SeedResult {
  added: number;
  firstId?: number;
  lastId?: number;
  firstCreatedAt?: string;
  lastCreatedAt?: string;
}

export const MAX_SEED = 1_000_000;

export interface ControlDeps {
  emit(notificationType: string, metadata: Record<string, unknown>, actor?: Actor): EmitResult;
  /** Add synthetic records; throws HttpError (404 unknown webhook, 400 bad event). */
  seed?(spec: SeedSpec): SeedResult;
  idle(): Promise<void>;
  userName?: (userId: number) => string | undefined;
}

const EVENT_KEYS = new Set(['notificationType', 'metadata', 'actorUserId', 'actorUserName']);

function parseEvent(deps: ControlDeps, body: unknown): { type: string; metadata: Record<string, unknown>; actor?: Actor } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'the body must be a JSON object { notificationType, metadata?, actorUserId?, actorUserName? }');
  }
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !EVENT_KEYS.has(k));
  if (unknown.length > 0) throw new HttpError(400, `unknown fields: ${unknown.join(', ')}`);
  if (!isEventName(b.notificationType)) {
    throw new HttpError(400, `"notificationType" must be an event name of GET /webhooks/actions (not ALL_NOTIFICATIONS), got ${JSON.stringify(b.notificationType)}`);
  }
  const metadata = b.metadata ?? {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new HttpError(400, '"metadata" must be an object');
  if (b.actorUserId !== undefined && !Number.isSafeInteger(b.actorUserId)) throw new HttpError(400, '"actorUserId" must be an integer');
  if (b.actorUserName !== undefined && typeof b.actorUserName !== 'string') throw new HttpError(400, '"actorUserName" must be a string');
  const out: { type: string; metadata: Record<string, unknown>; actor?: Actor } = {
    type: b.notificationType,
    metadata: metadata as Record<string, unknown>,
  };
  if (b.actorUserId !== undefined) {
    const userId = b.actorUserId as number;
    out.actor = { userId, userName: (b.actorUserName as string | undefined) ?? deps.userName?.(userId) ?? `user${userId}` };
  }
  return out;
}

const SEED_KEYS = new Set(['webhookId', 'count', 'notificationType', 'statusCode', 'code', 'from', 'stepMs']);

function parseSeed(body: unknown): SeedSpec {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'the body must be a JSON object { webhookId, count?, notificationType?, statusCode?, code?, from?, stepMs? }');
  }
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !SEED_KEYS.has(k));
  if (unknown.length > 0) throw new HttpError(400, `unknown fields: ${unknown.join(', ')}`);
  const int = (name: string, min: number, max: number, dflt?: number): number => {
    const v = b[name] ?? dflt;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
      throw new HttpError(400, `"${name}" must be an integer from ${min} to ${max}`);
    }
    return v;
  };
  const spec: SeedSpec = {
    webhookId: int('webhookId', 1, Number.MAX_SAFE_INTEGER),
    count: int('count', 1, MAX_SEED, 1),
    statusCode: int('statusCode', 100, 599, 200),
    stepMs: int('stepMs', 0, 86_400_000, 1000),
  };
  if (b.notificationType !== undefined) {
    if (!isEventName(b.notificationType)) throw new HttpError(400, `"notificationType" must be an event name, got ${JSON.stringify(b.notificationType)}`);
    spec.notificationType = b.notificationType;
  }
  if (b.code !== undefined) {
    if (typeof b.code !== 'string' || b.code === '') throw new HttpError(400, '"code" must be a non-empty string (e.g. ESOCKETTIMEDOUT)');
    spec.code = b.code;
  }
  if (b.from !== undefined) {
    const t = typeof b.from === 'string' ? Date.parse(b.from) : NaN;
    if (Number.isNaN(t)) throw new HttpError(400, '"from" must be an ISO 8601 time');
    spec.fromMs = t;
  }
  return spec;
}

export function controlRoutes(deps: ControlDeps): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/_sandbox/events',
      auth: 'none',
      handler: async (req: SandboxRequest) => {
        const ev = parseEvent(deps, req.body);
        const result = deps.emit(ev.type, ev.metadata, ev.actor);
        if (req.query.get('wait') === 'true') await deps.idle();
        return { status: 200, body: result };
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/webhooks/history',
      auth: 'none',
      handler: (req: SandboxRequest) => {
        if (!deps.seed) throw new HttpError(404, 'seeding is not available');
        return { status: 200, body: deps.seed(parseSeed(req.body)) };
      },
    },
    {
      method: 'GET',
      pattern: '/_sandbox/webhooks/idle',
      auth: 'none',
      handler: async () => {
        await deps.idle();
        return { status: 200, body: { idle: true } };
      },
    },
  ];
}
