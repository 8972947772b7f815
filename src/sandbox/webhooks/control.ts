/**
 * Control endpoints (auth 'none') so users and tests can fire webhooks:
 *   POST /_sandbox/events[?wait=true]  { notificationType, metadata?, actorUserId?, actorUserName? }
 *   GET  /_sandbox/webhooks/idle       waits until every delivery started so far is recorded
 */
import { isEventName } from '../../service/events.js';
import { HttpError, type Route, type SandboxRequest } from '../http.js';
import type { Actor, EmitResult } from './types.js';

export interface ControlDeps {
  emit(notificationType: string, metadata: Record<string, unknown>, actor?: Actor): EmitResult;
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
