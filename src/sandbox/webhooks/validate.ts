/**
 * Validation of POST /webhooks items (interface 4.3, 2.12, part 6) and the permission rule of interface
 * 5.3. Pure functions, written from the interface (not from govops' schemas).
 */
import { ALL_NOTIFICATIONS, isEventName } from '../../service/events.js';
import type { Role } from '../http.js';
import type { ActionType } from './types.js';
import { isPlainObject } from '../../util/object.js';

/**
 * Events any user may subscribe to (5.3: "access requests and activity notifications"): access
 * requests on data sources/projects and activity that concerns the user themselves. Everything else
 * (system events such as modelCreated, global policies, tags, users, health checks), ALL_NOTIFICATIONS
 * and `global: true` need an administrator.
 */
export const USER_NOTIFICATION_TYPES: ReadonlySet<string> = new Set([
  // access requests
  'modelAccessRequested',
  'modelAccessApproved',
  'modelAccessDenied',
  'modelAccessRevoked',
  'modelAccessUpdated',
  // activity notifications
  'acknowledgedAccess',
  'addedToProject',
  'removedFromProject',
  'modelCommentCreated',
  'modelCommentReply',
  'modelCommentResolved',
  'modelUserAdded',
  'modelUserDeleted',
  'modelUserJoined',
  'groupUserAdded',
  'groupUserDeleted',
  'permissionsUpdated',
  'apiKeyRevoked',
  'switchedCurrentProject',
  'taskDeleted',
  'taskValidated',
  'dataSourceExpiring',
  'dataSourceExpired',
  'projectEqualizationMemberNotInCompliance',
]);

export interface ValidWebhookItem {
  url: string;
  name: string;
  global: boolean;
  notificationType: string[];
  actionType: ActionType;
  secret?: string;
}

/** One entry of the `errors` array of POST /webhooks. */
export interface WebhookItemError {
  /** Position of the item in the request's `webhooks` array. */
  index: number;
  /** The item's name when it had a string one, else null. */
  name: string | null;
  /** 400 for an invalid item, 403 for one the caller may not create. */
  statusCode: 400 | 403;
  message: string;
}

export type ItemResult = { ok: true; item: ValidWebhookItem } | { ok: false; error: WebhookItemError };

const ACTION_TYPES: readonly string[] = ['triggered', 'receive'];

/**
 * Shape problems of one item (400): `url`, `name`, `global`, `notificationType` and `actionType` required,
 * `secret` optional (4.3); notification names from part 6 or ALL_NOTIFICATIONS; actionType triggered or
 * receive. Fields the interface does not list are ignored.
 */
export function itemProblems(raw: unknown): string[] {
  if (!isPlainObject(raw)) return ['each webhook must be an object'];
  const out: string[] = [];
  const str = (key: string): void => {
    if (raw[key] === undefined || raw[key] === null) out.push(`${key} is required`);
    else if (typeof raw[key] !== 'string') out.push(`${key} must be a string`);
  };
  str('url');
  str('name');
  if (raw.global === undefined || raw.global === null) out.push('global is required');
  else if (typeof raw.global !== 'boolean') out.push('global must be a boolean');
  const types = raw.notificationType;
  if (types === undefined || types === null) out.push('notificationType is required');
  else if (!Array.isArray(types)) out.push('notificationType must be an array of event names');
  else {
    const unknown = types.filter((t) => typeof t !== 'string' || (t !== ALL_NOTIFICATIONS && !isEventName(t)));
    if (unknown.length) out.push(`notificationType: unknown event ${unknown.map((t) => JSON.stringify(t)).join(', ')} (GET /webhooks/actions lists them)`);
  }
  if (raw.actionType === undefined || raw.actionType === null) out.push('actionType is required');
  else if (typeof raw.actionType !== 'string' || !ACTION_TYPES.includes(raw.actionType)) out.push('actionType must be triggered or receive');
  if (raw.secret !== undefined && raw.secret !== null && typeof raw.secret !== 'string') out.push('secret must be a string');
  return out;
}

/** Why a valid item is not allowed for a caller of this role (403), or undefined. */
export function permissionProblem(item: ValidWebhookItem, role: Role): string | undefined {
  if (role === 'admin') return undefined;
  if (item.global) return 'only administrators may create global webhooks';
  const denied = item.notificationType.filter((n) => n === ALL_NOTIFICATIONS || !USER_NOTIFICATION_TYPES.has(n));
  if (denied.length > 0) {
    return `only administrators may subscribe to ${denied.join(', ')}; other users may subscribe to access-request and activity notifications only`;
  }
  return undefined;
}

export function checkItem(raw: unknown, index: number, role: Role): ItemResult {
  const name = isPlainObject(raw) && typeof raw.name === 'string' ? raw.name : null;
  const problems = itemProblems(raw);
  if (problems.length > 0) return { ok: false, error: { index, name, statusCode: 400, message: problems.join('; ') } };
  const r = raw as Record<string, unknown>;
  const item: ValidWebhookItem = {
    url: r.url as string,
    name: r.name as string,
    global: r.global as boolean,
    notificationType: [...(r.notificationType as string[])],
    actionType: r.actionType as ActionType,
  };
  if (typeof r.secret === 'string') item.secret = r.secret;
  const denied = permissionProblem(item, role);
  if (denied) return { ok: false, error: { index, name, statusCode: 403, message: denied } };
  return { ok: true, item };
}
