/**
 * The registry of integration kinds: every kind module, and every table govops derives from them. Adding a
 * kind is a module under src/kinds/<type>/ and one line in BUILTIN_KINDS (docs/architecture.md, "Adding a
 * kind"). `createRegistry` is pure: the tables of any list of kinds (a test adds a throw-away kind with it).
 */
import type { IgnoreFieldFacts } from '../service/annotations.js';
import { hostOf, SCRIPT_PHASES, type ScriptPhase } from '../service/kinds.js';
import type { Config, KindDefinition } from './kind.js';
import { cloudWarehouse } from './cloud_warehouse/index.js';
import { columnarWarehouse } from './columnar_warehouse/index.js';
import { datasetWarehouse } from './dataset_warehouse/index.js';
import { distributedSql } from './distributed_sql/index.js';
import { lakehouse } from './lakehouse/index.js';
import { objectStore } from './object_store/index.js';
import { sqlAnalytics } from './sql_analytics/index.js';

export const BUILTIN_KINDS = [objectStore, sqlAnalytics, lakehouse, datasetWarehouse, columnarWarehouse, cloudWarehouse, distributedSql] as const;

export type IntegrationType = (typeof BUILTIN_KINDS)[number]['type'];

/** The keys of a delete payload (interface 2.9) the service treats as credentials. */
const DELETE_CREDENTIAL_KEYS = ['username', 'password'];

export interface KindRegistry<T extends string = string> {
  kinds: ReadonlyArray<KindDefinition<T>>;
  types: readonly T[];
  isType(value: unknown): value is T;
  /** The kind of a type string (throws for one not registered: callers hold a checked type). */
  kindOf(type: T): KindDefinition<T>;
  /** The natural key: what makes two integrations "the same one" (the sandbox 409s on it; the planner matches by it). */
  naturalKey(type: T, config: Config | undefined): string;
  /**
   * An integration's identity: what cannot change while it lives (its type and the natural key's attributes that
   * are not editable). govops checks that the integration at a recorded id still has the identity it recorded
   * before it writes by that id; a mismatch means the id now names another integration (a service that reuses ids).
   */
  integrationIdentity(type: T, config: Config | undefined): string;
  /** The config fields each kind's natural key is made of (identity: no secret reference, no ignore-fields). */
  naturalKeyFields: Readonly<Record<T, readonly string[]>>;
  /** The host (or name) an error message names for an integration. */
  displayHost(type: T, config: Config | undefined): string;
  nonEditable: Readonly<Record<T, readonly string[]>>;
  manualOnly: ReadonlySet<T>;
  deletePayloadKinds: ReadonlySet<T>;
  scriptKinds: Readonly<Record<ScriptPhase, ReadonlySet<T>>>;
  /** Config keys (at any depth of `config`, and in a delete payload) whose values the service returns masked. */
  maskedKeys: ReadonlySet<string>;
  /** The kind data sources are registered under. */
  dataSourceHost: T;
  /** The schema files of the kinds, relative to schemas/ (config shapes, then delete payloads). */
  schemaFiles: readonly string[];
}

export function createRegistry<T extends string>(kinds: ReadonlyArray<KindDefinition<T>>): KindRegistry<T> {
  const byType = new Map<string, KindDefinition<T>>(kinds.map((k) => [k.type, k]));
  if (byType.size !== kinds.length) throw new Error('kinds registry: a type is registered twice');
  const types = kinds.map((k) => k.type);
  const kindOf = (type: T): KindDefinition<T> => {
    const k = byType.get(type);
    if (!k) throw new Error(`unknown integration type ${String(type)}`);
    return k;
  };
  const hosts = kinds.filter((k) => k.hostsDataSources);
  if (hosts.length !== 1) throw new Error('kinds registry: exactly one kind hosts data sources');
  const tableOf = <V>(value: (k: KindDefinition<T>) => V) => Object.fromEntries(kinds.map((k) => [k.type, value(k)])) as Record<T, V>;
  return {
    kinds,
    types,
    isType: (value): value is T => typeof value === 'string' && byType.has(value),
    kindOf,
    naturalKey: (type, config) => {
      const k = kindOf(type);
      return k.identity ? `${type}:${k.identity(config ?? {})}` : type;
    },
    integrationIdentity: (type, config) => {
      const k = kindOf(type);
      const part = k.lastingIdentity ?? k.identity;
      return part ? `${type}:${part(config ?? {})}` : type;
    },
    naturalKeyFields: tableOf((k) => k.naturalKeyFields),
    displayHost: (type, config) => {
      const c = config ?? {};
      if (typeof c.host === 'string') return c.host;
      if (typeof c.workspaceUrl === 'string') return hostOf(c.workspaceUrl);
      return kindOf(type).displayName?.(c) ?? type;
    },
    nonEditable: tableOf((k) => k.nonEditable),
    manualOnly: new Set(kinds.filter((k) => k.manualOnly).map((k) => k.type)),
    deletePayloadKinds: new Set(kinds.filter((k) => k.deleteSchema !== undefined).map((k) => k.type)),
    scriptKinds: Object.fromEntries(SCRIPT_PHASES.map((p) => [p, new Set(kinds.filter((k) => k.scripts.includes(p)).map((k) => k.type))])) as unknown as Record<ScriptPhase, ReadonlySet<T>>,
    maskedKeys: new Set([...kinds.flatMap((k) => k.masked), ...DELETE_CREDENTIAL_KEYS]),
    dataSourceHost: hosts[0]!.type,
    schemaFiles: [
      ...kinds.flatMap((k) => (k.configSchema ? [k.configSchema] : [])),
      ...kinds.flatMap((k) => (k.deleteSchema ? [k.deleteSchema] : [])),
    ],
  };
}

/** The registry of the kinds govops knows. */
export const KINDS: KindRegistry<IntegrationType> = createRegistry<IntegrationType>(BUILTIN_KINDS);

// The tables as the rest of govops reads them.
export const INTEGRATION_TYPES = KINDS.types;
export const isIntegrationType = KINDS.isType;
export const kindOf = KINDS.kindOf;
export const naturalKey = KINDS.naturalKey;
export const displayHost = KINDS.displayHost;
export const integrationIdentity = KINDS.integrationIdentity;
/**
 * The natural key of a live integration, or undefined when its type is not one govops knows (another team's kind,
 * a later release's): such an integration never matches a manifest (manifests are checked to known types), so it
 * is never adopted, and nothing asks its kind for tables it does not have.
 */
export function liveNaturalKey(type: string, config: Config | undefined): string | undefined {
  return isIntegrationType(type) ? naturalKey(type, config) : undefined;
}
/**
 * The key of a unique config value (`uniqueFields`), as written (what the interface states: uniqueness, not what
 * makes two values one): `validate` and the plan index manifests and live integrations by it.
 */
export function uniqueValueKey(type: IntegrationType, field: string, value: string): string {
  return `${type} ${field}=${value}`;
}
/** The key under which values that may be one to the service meet (the kind's `uniqueLookalike`); none without one. */
export function uniqueLookalikeKey(type: IntegrationType, field: string, value: string): string | undefined {
  const read = kindOf(type).uniqueLookalike?.[field];
  return read ? `${type} ${field}~${read(value)}` : undefined;
}
/** The config fields each kind's natural key is made of: identity, never a secret reference or an ignored field. */
export const NATURAL_KEY_FIELDS = KINDS.naturalKeyFields;
export const NON_EDITABLE = KINDS.nonEditable;
/** Kinds that must be created with autoBootstrap false (interface 4.1). */
export const MANUAL_ONLY = KINDS.manualOnly;
/** Kinds whose delete needs the 2.9 payload when they were created with autoBootstrap true. */
export const DELETE_PAYLOAD_KINDS = KINDS.deletePayloadKinds;
/** Which kinds each script endpoint accepts (interface 4.1, script table). */
export const SCRIPT_KINDS = KINDS.scriptKinds;
/** The kind data sources are registered under (interface 2.3). */
export const DATA_SOURCE_INTEGRATION_TYPE = KINDS.dataSourceHost;
/**
 * Config keys (at any depth of `config`) whose values the service returns masked.
 * govops treats them as sensitive: never printed, compared by fingerprint only.
 */
export const MASKED_KEYS = KINDS.maskedKeys;
/** Keys whose plain literal in a manifest is a warning from `validate` (an error with --strict). */
export const SECRET_KEYS: ReadonlySet<string> = new Set([...MASKED_KEYS].filter((k) => k !== 'username'));

export function isSensitiveKey(key: string): boolean {
  return MASKED_KEYS.has(key);
}

/** What `ignoreFieldProblem` needs from the kinds for a manifest of `type` (any value: an unknown type has no identity fields). */
export function ignoreFieldFacts(type?: unknown): IgnoreFieldFacts {
  return isIntegrationType(type) ? { isSensitiveKey, identity: { type, fields: NATURAL_KEY_FIELDS[type] } } : { isSensitiveKey };
}

export function deletePayloadRequired(type: IntegrationType, autoBootstrap: boolean): boolean {
  return autoBootstrap && DELETE_PAYLOAD_KINDS.has(type);
}

/** The kind is created with its type alone: no config, nothing else to compare. */
export function isConfigless(type: IntegrationType): boolean {
  return kindOf(type).configless === true;
}
