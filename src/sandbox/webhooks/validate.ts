/**
 * Validation of POST /webhooks items and the permission rule of interface 5.3. Pure functions.
 */
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- TODO(#8): inject, the layer rule forbids it
import { validateWebhookItem } from '../../manifests/schemas.js';
import { ALL_NOTIFICATIONS } from '../../service/events.js';
import type { Role } from '../http.js';
import type { ActionType } from './types.js';

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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pathText(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * Shape problems of one item (400), from the same JSON Schema the manifests use
 * (schemas/webhook-item.json), so the sandbox and `govops validate` agree.
 */
export function itemProblems(raw: unknown): string[] {
  return validateWebhookItem(raw).map((i) => (i.path.length > 0 ? `${pathText(i.path)}: ${i.message}` : i.message));
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
  const name = isObject(raw) && typeof raw.name === 'string' ? raw.name : null;
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
