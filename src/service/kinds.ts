/**
 * Facts about the service's integration kinds that more than one part of govops needs
 * (sandbox, planner, applier). One module, so the sandbox and the client can never disagree.
 * Field shapes and defaults live in schemas/ — this module holds only the behavioural rules.
 */

export const INTEGRATION_TYPES = [
  'object_store',
  'sql_analytics',
  'lakehouse',
  'dataset_warehouse',
  'columnar_warehouse',
  'cloud_warehouse',
  'distributed_sql',
] as const;

export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

export function isIntegrationType(value: unknown): value is IntegrationType {
  return typeof value === 'string' && (INTEGRATION_TYPES as readonly string[]).includes(value);
}

/** The fixed string the service puts in place of every credential field it returns. */
export const MASK = '********';

/**
 * Config keys (at any depth of `config`) whose values the service returns masked.
 * govops treats them as sensitive: never printed, compared by fingerprint only.
 */
export const MASKED_KEYS: ReadonlySet<string> = new Set([
  'username',
  'password',
  'token',
  'secretKey',
  'sessionToken',
  'cloudSecretAccessKey',
  'privateKey',
  'clientSecret',
  'oauthPrivateKey',
  'credential',
]);

/** Keys whose plain literal in a manifest is a warning from `validate` (an error with --strict). */
export const SECRET_KEYS: ReadonlySet<string> = new Set(
  [...MASKED_KEYS].filter((k) => k !== 'username'),
);

export function isSensitiveKey(key: string): boolean {
  return MASKED_KEYS.has(key);
}

/**
 * Attributes that cannot be changed after creation (paths relative to the integration body;
 * `config.` paths are inside config). A change to any of them needs a replace (delete + create).
 * The sandbox answers a PUT changing one of them with 400 naming them; the planner plans a replace.
 */
export const NON_EDITABLE: Readonly<Record<IntegrationType, readonly string[]>> = {
  object_store: ['type', 'autoBootstrap', 'config.name', 'config.cloudAccountId', 'config.cloudLocationPath'],
  sql_analytics: ['type', 'autoBootstrap', 'config.host', 'config.database'],
  lakehouse: ['type', 'autoBootstrap', 'config.workspaceUrl', 'config.catalog'],
  dataset_warehouse: ['type', 'autoBootstrap', 'config.location', 'config.dataset'],
  columnar_warehouse: ['type', 'autoBootstrap', 'config.host', 'config.database'],
  cloud_warehouse: ['type', 'autoBootstrap', 'config.host', 'config.database'],
  distributed_sql: ['type'],
};

/** Kinds that must be created with autoBootstrap false (interface 4.1). */
export const MANUAL_ONLY: ReadonlySet<IntegrationType> = new Set(['object_store', 'dataset_warehouse']);

/** Kinds whose delete needs the 2.9 payload when they were created with autoBootstrap true. */
export const DELETE_PAYLOAD_KINDS: ReadonlySet<IntegrationType> = new Set([
  'sql_analytics',
  'columnar_warehouse',
  'cloud_warehouse',
]);

export function deletePayloadRequired(type: IntegrationType, autoBootstrap: boolean): boolean {
  return autoBootstrap && DELETE_PAYLOAD_KINDS.has(type);
}

export const SCRIPT_PHASES = ['create', 'initial-create', 'edit', 'delete', 'cleanup', 'post-cleanup'] as const;
export type ScriptPhase = (typeof SCRIPT_PHASES)[number];

/** Which kinds each script endpoint accepts (interface 4.1, script table). */
export const SCRIPT_KINDS: Readonly<Record<ScriptPhase, ReadonlySet<IntegrationType>>> = {
  create: new Set(['sql_analytics', 'lakehouse', 'columnar_warehouse', 'cloud_warehouse']),
  'initial-create': new Set(['sql_analytics', 'columnar_warehouse']),
  edit: new Set(['sql_analytics', 'lakehouse', 'columnar_warehouse', 'cloud_warehouse']),
  delete: new Set(['sql_analytics', 'columnar_warehouse', 'cloud_warehouse']),
  cleanup: new Set(['sql_analytics', 'columnar_warehouse', 'cloud_warehouse']),
  'post-cleanup': new Set(['sql_analytics']),
};

/** Script phases that act on an existing integration and so take its id in the path. */
export const SCRIPT_PHASES_WITH_ID: ReadonlySet<ScriptPhase> = new Set(['edit', 'delete']);

/**
 * A host name (optionally after `http(s)://`, before a plain path) that the URL parser returns as it is,
 * lowercased: letters, digits and hyphens in dot-separated labels, no `xn--` label (punycode is checked),
 * the last label not a number (IPv4 forms are rewritten). Anything else goes through the URL parser.
 */
const PLAIN_HOST = /^(?:https?:\/\/)?((?:[a-z0-9-]+\.)*[a-z0-9-]+)(?:\/[a-z0-9._~/-]*)?$/i;
const NUMERIC_LABEL = /(?:^|\.)(?:[0-9]+|0x[0-9a-f]*)$/i;

/** The host of a URL or host name, as the URL parser gives it (lowercased); the value lowercased if it parses as none. */
export function hostOf(value: unknown): string {
  if (typeof value !== 'string') return '';
  const plain = PLAIN_HOST.exec(value);
  if (plain && !NUMERIC_LABEL.test(plain[1]!) && !/(?:^|\.)xn--/i.test(plain[1]!)) return plain[1]!.toLowerCase();
  try {
    return new URL(value.includes('://') ? value : `https://${value}`).hostname.toLowerCase();
  } catch {
    return value.toLowerCase();
  }
}

/**
 * The config fields each kind's natural key is made of (`naturalKey` below reads exactly these). They are
 * identity: never taken from a secret reference (a derived form, e.g. the host lower-cased, would be
 * stored in the state file and printed) and never ignored with `govops/ignore-fields`.
 */
export const NATURAL_KEY_FIELDS: Readonly<Record<IntegrationType, readonly string[]>> = {
  sql_analytics: ['host'],
  columnar_warehouse: ['host'],
  cloud_warehouse: ['host'],
  lakehouse: ['workspaceUrl'],
  object_store: ['name'],
  dataset_warehouse: ['dataset', 'role'],
  distributed_sql: [],
};

/**
 * A config field (its last path segment) that says where the service connects, and so where the
 * credentials beside it are sent: a host, a URL, an endpoint, a server address.
 */
export function isDestinationKey(key: string): boolean {
  return /(?:host|url|uri|endpoints?|server|address|domain)$/i.test(key);
}

/**
 * The natural key of an integration: what makes two integrations "the same one" in the service.
 * The sandbox enforces uniqueness on it (409 on create); the planner matches live resources by it.
 */
export function naturalKey(type: IntegrationType, config: Record<string, unknown> | undefined): string {
  const c = config ?? {};
  switch (type) {
    case 'sql_analytics':
    case 'columnar_warehouse':
    case 'cloud_warehouse':
      return `${type}:host=${hostOf(c.host)}`;
    case 'lakehouse':
      return `${type}:workspace=${hostOf(c.workspaceUrl)}`;
    case 'object_store':
      return `${type}:name=${String(c.name ?? '')}`;
    case 'dataset_warehouse':
      return `${type}:dataset=${String(c.dataset ?? 'service')}:role=${String(c.role ?? '')}`;
    case 'distributed_sql':
      return `${type}`;
  }
}

/**
 * An integration's identity: what cannot change while it lives (its type and the natural key's attributes that are
 * not editable). govops checks that the integration at a recorded id still has the identity it recorded before it
 * writes by that id; a mismatch means the id now names another integration (a service that reuses ids). The
 * natural key with the attributes an update may change left out: dataset_warehouse's `role` (editable) is drift
 * of the same integration, not another one.
 */
export function integrationIdentity(type: IntegrationType, config: Record<string, unknown> | undefined): string {
  if (type === 'dataset_warehouse') return `${type}:dataset=${String(config?.dataset ?? 'service')}`;
  return naturalKey(type, config);
}

const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)?([^/?#]*)(.*)$/is;

/**
 * A URL (or a bare host) with its scheme and host lower-cased and the rest as it is: host names compare
 * case-insensitively (RFC 3986 3.2.2), paths and queries do not. Userinfo before `@` keeps its case.
 */
export function urlWithLowerHost(value: string): string {
  const m = URL_PARTS.exec(value);
  if (!m) return value;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const host = at < 0 ? authority.toLowerCase() : `${authority.slice(0, at + 1)}${authority.slice(at + 1).toLowerCase()}`;
  return `${(m[1] ?? '').toLowerCase()}${host}${m[3]!}`;
}

/** A webhook's identity: its name and URL (webhooks cannot be edited), the URL's host compared case-insensitively. */
export function webhookIdentity(name: string, url: string): string {
  return JSON.stringify([name, urlWithLowerHost(url)]);
}

/** The host an error message names for an integration (host, workspace URL, or name). */
export function displayHost(type: IntegrationType, config: Record<string, unknown> | undefined): string {
  const c = config ?? {};
  if (typeof c.host === 'string') return c.host;
  if (typeof c.workspaceUrl === 'string') return hostOf(c.workspaceUrl);
  if (type === 'object_store' && typeof c.name === 'string') return c.name;
  if (type === 'dataset_warehouse') return `${String(c.dataset ?? 'service')}`;
  return type;
}

/** Statuses in which an integration is still changing (interface 3's observed values besides enabled). */
export const TRANSITIONAL_STATUSES: ReadonlySet<string> = new Set(['creating', 'editing', 'deleting']);
export const ERROR_STATUSES: ReadonlySet<string> = new Set(['createError', 'editError', 'deleteError']);
/**
 * The settled statuses: `enabled` (interface 3: the only settled value it lists; there is no `disabled`) and
 * the error statuses (docs/decisions.md). Polling ends only on one of these (or the integration gone): any
 * other status, documented transitional or unknown (`pending`, `updating`...), keeps it polling until the
 * timeout, whose message names it.
 */
export const SETTLED_STATUSES: ReadonlySet<string> = new Set(['enabled', ...ERROR_STATUSES]);

export function isSettledStatus(status: string): boolean {
  return SETTLED_STATUSES.has(status);
}

/** How a status that ended a wait by the timeout is described: named, and marked when the interface does not list it. */
export function describeUnsettled(status: string): string {
  return TRANSITIONAL_STATUSES.has(status) || status === 'unknown'
    ? `last status: ${status}`
    : `last status: "${status}", which the interface does not list (only enabled, createError, editError and deleteError end a wait)`;
}
export const VALIDATION_TEST_STATUSES = ['passed', 'failed', 'warning', 'skipped'] as const;
export type ValidationTestStatus = (typeof VALIDATION_TEST_STATUSES)[number];
