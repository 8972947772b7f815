/**
 * Wire views of a stored integration: masked config, string ids (number only in the status body), each as
 * the behaviours in force shape it (behaviours.ts): defaults filled / omitted / as sent, unset fields as
 * null, extra fields, numeric ids, credentials omitted, lists shuffled.
 */
import type { ValidationResults } from '../../api/types.js';
import { MASK } from '../../service/kinds.js';
import { MASKED_KEYS, type IntegrationType } from '../../kinds/registry.js';
import type { Behaviours } from '../behaviours.js';
import { nullUnset, omitDefaults } from './fields.js';
import { CONFIG } from './interface.js';
import { isPlainObject } from '../../util/object.js';

export interface StoredIntegration {
  id: number;
  type: IntegrationType;
  autoBootstrap: boolean;
  /** As the service stores it: defaults filled in, credentials in clear. */
  config: Record<string, unknown>;
  /** The known config fields as the caller sent them (absent in data files of older sandboxes: = config). */
  sent?: Record<string, unknown>;
  status: string;
  validationResults: ValidationResults;
  createdAt: string;
  updatedAt: string;
  /** Epoch ms at which the current transition (creating/editing/deleting) completes. */
  pendingUntil?: number;
  /** Whether the current transition ends in createError/editError/deleteError. */
  pendingFail?: boolean;
  /** Whether the current transition started from an error status (its success emits healthCheckResolved). */
  pendingFromError?: boolean;
  /** Who started the current transition (for event metadata). */
  pendingActor?: { userId: number; userName: string };
}

/** The string a credential key is shown as: the interface's mask, or under `other-mask` another service's. */
export function maskOf(key: string, b?: Behaviours): string {
  if (!b?.has('other-mask')) return MASK;
  return key === 'username' ? '****' : '[REDACTED]';
}

/** Every string the sandbox may show in place of a credential under the behaviours. */
export function masksOf(b?: Behaviours): string[] {
  return b?.has('other-mask') ? [MASK, '****', '[REDACTED]'] : [MASK];
}

/** Keys a service may hide although the interface does not name them as credentials (behaviour mask-more). */
const MORE_MASKED: ReadonlySet<string> = new Set(['cloudAccessKeyId', 'accessKeyId', 'databaseUser', 'clientId', 'appId']);

/** Deep copy with every credential key (at any depth) replaced by the mask (and, under mask-more, MORE_MASKED partly). */
export function maskConfig(value: unknown, b?: Behaviours): unknown {
  if (Array.isArray(value)) return value.map((v) => maskConfig(v, b));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (MORE_MASKED.has(k) && typeof v === 'string' && v !== '' && b?.has('mask-more')) out[k] = `${v.slice(0, 4)}****`;
    else out[k] = MASKED_KEYS.has(k) && v !== null && v !== undefined && typeof v !== 'object' ? maskOf(k, b) : maskConfig(v, b);
  }
  return out;
}

/** Paths of credential keys whose value is a mask itself (a client echoing a GET back). */
export function maskedValuePaths(value: unknown, prefix = 'config', masks: readonly string[] = [MASK]): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => maskedValuePaths(v, `${prefix}[${i}]`, masks));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    MASKED_KEYS.has(k) && typeof v === 'string' && masks.includes(v) ? [`${prefix}.${k}`] : maskedValuePaths(v, `${prefix}.${k}`, masks),
  );
}

/** Deep copy without the credential keys (behaviour omit-masked). */
function dropMasked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropMasked);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (MASKED_KEYS.has(k) && v !== null && typeof v !== 'object') continue;
    out[k] = dropMasked(v);
  }
  return out;
}

/** Every list of strings in the config in the order the behaviours give (shuffle). */
function reorder(value: unknown, b: Behaviours): unknown {
  if (Array.isArray(value)) return b.order(value.map((v) => reorder(v, b)));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reorder(v, b)]));
}

const idOf = (i: StoredIntegration, b?: Behaviours): string | number => (b?.has('numeric-ids') ? i.id : String(i.id));

/** The config as GET shows it under the behaviours. */
export function configView(i: StoredIntegration, b?: Behaviours): Record<string, unknown> {
  const table = i.type === 'distributed_sql' ? undefined : CONFIG[i.type];
  let config: Record<string, unknown> = i.config;
  if (table && b?.has('echo-sent')) config = i.sent ?? i.config;
  else if (table && b?.has('omit-defaults')) config = omitDefaults(table, i.config);
  if (table && b?.has('null-unset')) config = nullUnset(table, config);
  let out = (b?.has('omit-masked') ? dropMasked(config) : maskConfig(config, b)) as Record<string, unknown>;
  if (b?.has('extra-fields')) {
    out = { ...out, connectionTimeoutSeconds: 30, serviceVersion: '2024.1' };
    const nested = Object.entries(out).find(([, v]) => isPlainObject(v));
    if (nested) out[nested[0]] = { ...(nested[1] as object), lastCheckedAt: i.updatedAt };
  }
  return b?.has('shuffle') ? (reorder(out, b) as Record<string, unknown>) : out;
}

/** Body of a successful create, update or delete (id, status, validationResults). */
export function mutationView(i: StoredIntegration, b?: Behaviours): Record<string, unknown> {
  const out: Record<string, unknown> = { id: idOf(i, b), status: b ? b.status(i.status) : i.status, validationResults: i.validationResults };
  if (b?.has('extra-fields')) out.requestedAt = i.updatedAt;
  return out;
}

export function fullView(i: StoredIntegration, b?: Behaviours): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: idOf(i, b),
    status: b ? b.status(i.status) : i.status,
    validationResults: i.validationResults,
    type: i.type,
    autoBootstrap: i.autoBootstrap,
    config: configView(i, b),
  };
  if (b?.has('extra-fields')) Object.assign(out, { createdAt: i.createdAt, updatedAt: i.updatedAt, name: `${i.type}-${i.id}`, dataSourceCount: 0 });
  return out;
}
