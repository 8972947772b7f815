/**
 * The sandbox's webhooks (interface 2.12, 2.13, 4.3, 5.3, 6): routes for the server to mount,
 * event emission with signed, concurrent deliveries, and a delivery history.
 */
import type { LookupFunction } from 'node:net';
import { ALL_NOTIFICATIONS, isEventName } from '../../service/events.js';
import type { Logger } from '../../log.js';
import type { Behaviours } from '../behaviours.js';
import type { DeliveryTimers } from './delivery.js';
import type { Caller, Route } from '../http.js';
import { controlRoutes, type SeedResult, type SeedSpec } from './control.js';
import { Dispatcher, HistoryStore } from './dispatcher.js';
import { parseDeliveryHosts, type DeliveryHostsInput, type DeliveryPolicy } from './hosts.js';
import { buildMetadata, buildRequest } from './payload.js';
import { webhookRoutes } from './routes.js';
import { fromSnapshot, toSnapshot } from './snapshot.js';
import { HttpError } from '../http.js';
import { WebhookStore } from './store.js';
import type { Actor, EmitResult, StoredWebhook } from './types.js';

export type { Actor, EmitResult } from './types.js';
export { USER_NOTIFICATION_TYPES } from './validate.js';
export {
  BLOCKED_CODE,
  LOOPBACK_HOSTS,
  checkHost,
  describePolicy,
  parseDeliveryHosts,
  type DeliveryHostsInput,
  type DeliveryPolicy,
} from './hosts.js';
export { SIGNATURE_HEADER, SIGNATURE_256_HEADER, signatureHeaders } from './delivery.js';

export interface WebhookService {
  /** auth: 'webhook' — the server authenticates `Bearer <token>` and sets req.caller. */
  routes: Route[];
  /** auth: 'none' — POST /_sandbox/events, GET /_sandbox/webhooks/idle. */
  controlRoutes: Route[];
  /** Fire an event: starts one delivery per subscribed webhook; never blocks. Unknown names: 0 deliveries. */
  emit(notificationType: string, metadata: Record<string, unknown>, actor?: Caller | Actor): EmitResult;
  /** JSON-serialisable state (webhooks incl. secrets, history, id counters). */
  snapshot(): unknown;
  /** Replace the state with a snapshot(); throws on a malformed one. */
  restore(data: unknown): void;
  reset(): void;
  /** Abort in-flight deliveries (they are not recorded). */
  close(): Promise<void>;
  /** Resolves when all deliveries started so far have been recorded (for tests). */
  idle(): Promise<void>;
  /** The receiver hosts deliveries may reach (default loopback only). */
  deliveryPolicy: DeliveryPolicy;
}

export interface WebhookServiceOptions {
  /** Receiver response deadline (interface 6.1; the service's default is 10 s). */
  deliveryTimeoutMs: number;
  logger: Logger;
  now?: () => Date;
  /** Name of a user id, for metadata.actionByName of control-endpoint events. */
  userName?: (userId: number) => string | undefined;
  /** Called after every state change (webhook created/deleted, delivery recorded): persistence hook. */
  onChange?: () => void;
  /** Receiver hosts deliveries may reach (a parsed policy or its input); default loopback only. */
  deliveryHosts?: DeliveryPolicy | DeliveryHostsInput;
  /** Resolver for allowed host names other than `localhost` (default: the system resolver). */
  lookup?: LookupFunction;
  /** Server behaviours (ids as strings, extra fields, shuffled lists). */
  behaviours?: Behaviours;
  /** Timers of the delivery deadline (default: the system's). */
  deliveryTimers?: DeliveryTimers;
}

function policyOf(input: DeliveryPolicy | DeliveryHostsInput | undefined): DeliveryPolicy {
  if (input !== undefined && typeof input === 'object' && 'allowAll' in input) return input;
  return parseDeliveryHosts(input);
}

function userIdOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

/**
 * Whether an event concerns a webhook's owner (interface 2.12: a non-global webhook receives only the
 * notifications that pertain to its owner). An event pertains to the users it names in
 * `metadata.targetUser` and `metadata.actionBy`; an event that names no user at all (a system event)
 * pertains to every owner.
 */
export function pertainsTo(ownerId: number, metadata: Record<string, unknown>): boolean {
  const target = userIdOf(metadata.targetUser);
  const actor = userIdOf(metadata.actionBy);
  if (target === undefined && actor === undefined) return true;
  return ownerId === target || ownerId === actor;
}

/**
 * Webhooks an event goes to (interface 6): those whose `notificationType` lists the event or
 * `ALL_NOTIFICATIONS` — global ones too. A global webhook receives such events even when they do not
 * pertain to its owner (2.12); a non-global one only those that do (`pertainsTo`).
 */
export function subscribers(
  webhooks: Iterable<StoredWebhook>,
  notificationType: string,
  metadata: Record<string, unknown> = {},
): StoredWebhook[] {
  const out: StoredWebhook[] = [];
  for (const w of webhooks) {
    if (!w.notificationType.includes(notificationType) && !w.notificationType.includes(ALL_NOTIFICATIONS)) continue;
    if (w.global || pertainsTo(w.createdBy, metadata)) out.push(w);
  }
  return out;
}

export function createWebhookService(opts: WebhookServiceOptions): WebhookService {
  const now = opts.now ?? (() => new Date());
  const store = new WebhookStore(opts.behaviours);
  const history = new HistoryStore();
  const deliveryPolicy = policyOf(opts.deliveryHosts);
  const guard = { policy: deliveryPolicy, ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.deliveryTimers ? { timers: opts.deliveryTimers } : {}) };
  const dispatcher = new Dispatcher(history, opts.deliveryTimeoutMs, opts.logger, now, opts.onChange, guard);
  let nextActivityId = 1;

  const emit = (notificationType: string, metadata: Record<string, unknown>, actor?: Caller | Actor): EmitResult => {
    const webhooksActivityId = nextActivityId++;
    if (!isEventName(notificationType)) {
      opts.logger.warn({ notificationType }, 'ignored an unknown webhook event name');
      return { webhooksActivityId, deliveries: 0 };
    }
    const who: Actor | undefined = actor ? { userId: actor.userId, userName: actor.userName } : undefined;
    const meta = buildMetadata(notificationType, metadata, who);
    const targets = subscribers(store.listing(notificationType, ALL_NOTIFICATIONS), notificationType, meta);
    for (const webhook of targets) {
      void dispatcher.enqueue({ webhook, request: buildRequest(webhook, notificationType, meta), notificationType, webhooksActivityId });
    }
    opts.logger.debug({ notificationType, webhooksActivityId, deliveries: targets.length }, 'webhook event emitted');
    return { webhooksActivityId, deliveries: targets.length };
  };
  const idle = (): Promise<void> => dispatcher.idle();

  /** Synthetic records of one webhook, oldest first, as if delivered (nothing is sent). */
  const seed = (spec: SeedSpec): SeedResult => {
    const webhook = store.get(spec.webhookId);
    if (!webhook) throw new HttpError(404, `webhook ${spec.webhookId} not found`);
    const type = spec.notificationType ?? webhook.notificationType.find(isEventName) ?? 'modelAccessRequested';
    const from = spec.fromMs ?? now().getTime() - (spec.count - 1) * spec.stepMs;
    const failed = spec.statusCode < 200 || spec.statusCode >= 300;
    const response = failed && spec.code !== undefined ? { body: { code: spec.code, connect: false } } : {};
    const out: SeedResult = { added: spec.count };
    for (let i = 0; i < spec.count; i++) {
      const at = new Date(from + i * spec.stepMs).toISOString();
      const meta = buildMetadata(type, { modelId: i + 1, modelType: 'project' }, undefined);
      const record = {
        id: history.nextId++,
        request: buildRequest(webhook, type, meta),
        response,
        statusCode: spec.statusCode,
        notificationType: type,
        webhooksActivityId: nextActivityId++,
        createdAt: at,
        updatedAt: at,
        webhooksId: webhook.id,
        url: webhook.url,
        name: webhook.name,
        actionType: webhook.actionType,
        createdBy: webhook.createdBy,
        global: webhook.global,
      };
      history.add(record);
      if (i === 0) Object.assign(out, { firstId: record.id, firstCreatedAt: at });
      if (i === spec.count - 1) Object.assign(out, { lastId: record.id, lastCreatedAt: at });
    }
    opts.onChange?.();
    return out;
  };

  return {
    routes: webhookRoutes({ store, history, dispatcher, now, onChange: opts.onChange, ...(opts.behaviours ? { behaviours: opts.behaviours } : {}) }),
    controlRoutes: controlRoutes({ emit, idle, seed, userName: opts.userName }),
    emit,
    idle,
    deliveryPolicy,
    snapshot: () => toSnapshot(store, history, nextActivityId),
    restore(data: unknown) {
      const s = fromSnapshot(data);
      store.load(s.webhooks, s.nextWebhookId);
      history.load(s.history, s.nextHistoryId);
      nextActivityId = s.history.reduce((m, r) => Math.max(m, r.webhooksActivityId + 1), Math.max(s.nextActivityId, 1));
    },
    /** Forget everything; in-flight deliveries are aborted and not recorded. */
    reset() {
      dispatcher.abortNow();
      store.clear();
      history.clear();
      nextActivityId = 1;
    },
    close: () => dispatcher.abortAll(),
  };
}
