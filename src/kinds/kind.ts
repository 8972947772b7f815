/**
 * What govops knows about one integration kind, in one place (issue 23): its type string, the schema files
 * that give its config shape and defaults, its natural key, the credential fields the service masks, the
 * attributes it cannot edit, the delete payload, the manual flow and its special rules. Each kind is a module
 * `src/kinds/<type>/index.ts`; src/kinds/registry.ts lists them and derives every table the rest of govops
 * reads. The sandbox keeps its own reading of the interface on purpose, and schemas/ holds the shapes.
 */
import type { ScriptPhase } from '../service/kinds.js';

export type Config = Record<string, unknown>;

export interface KindDefinition<T extends string = string> {
  /** The `type` string of the service (interface 2.x). */
  type: T;
  /**
   * The config schema, relative to schemas/ (`config/<type>.json`): its shape and defaults. Absent for a kind
   * created with its type alone, which has no config and nothing else to compare (`configless`).
   */
  configSchema?: string;
  /** The kind is created with only `type`: no autoBootstrap, no config, nothing else compared. */
  configless?: true;
  /**
   * What makes two integrations of this kind "the same one" (the service answers 409 on a second), after
   * `<type>:`; absent: one integration of the kind at most (the key is the type alone).
   */
  identity?(config: Config): string;
  /**
   * The config fields the natural key is made of (`identity` reads exactly these). They are identity: never taken
   * from a secret reference (a derived form, e.g. the host lower-cased, would be stored in the state file and
   * printed) and never ignored with `govops/ignore-fields`.
   */
  naturalKeyFields: readonly string[];
  /**
   * The lasting part of the natural key, after `<type>:`, when the key holds an attribute an update may change
   * (that is drift of the same integration, not another one); default: `identity`. See `integrationIdentity`.
   */
  lastingIdentity?(config: Config): string;
  /** The manifest field that makes the natural key (where a clash is pointed at). */
  identityField: readonly string[];
  /**
   * Config fields besides the natural key whose value is unique across the integrations of the kind (interface 8,
   * "Uniqueness"): a second integration with the same value is a 409 (object_store `cloudLocationPath`).
   */
  uniqueFields?: readonly string[];
  /**
   * Unique values are compared as written (the interface states uniqueness, not what makes two values one). By field:
   * a reading under which two values written differently may still be one to the service (object_store
   * `cloudLocationPath`: trailing slashes aside, as govops reads a location, `prefixUnderLocation`): `validate` warns.
   */
  uniqueLookalike?: Readonly<Record<string, (value: string) => string>>;
  /** A name for error messages when the config has no `host` / `workspaceUrl` (default: the type). */
  displayName?(config: Config): string | undefined;
  /**
   * Config (and delete payload) fields whose new lines the service takes written as a backslash followed by n: a
   * value with real new lines (a PEM file read with `fromFile`, a YAML block) is sent so (src/manifests/secrets.ts).
   */
  escapedNewlines?: readonly string[];
  /** Config keys whose values the service returns masked (credential fields). */
  masked: readonly string[];
  /** Attributes that cannot change after creation (body paths, `config.` inside config): a change is a replace. */
  nonEditable: readonly string[];
  /** Must be created with autoBootstrap false (interface 4.1): the manual flow always. */
  manualOnly?: true;
  /**
   * Deleted with the 2.9 payload when created with autoBootstrap true: its schema, relative to schemas/
   * (`delete/<type>.json`).
   */
  deleteSchema?: string;
  /** The script endpoints (interface 4.1) that accept the kind. */
  scripts: readonly ScriptPhase[];
  /**
   * The credential fields (paths inside config) the kind's authentication requires, for `govops export` to write
   * references for a service that leaves credentials out of its answers (the schema's `required` under each rule).
   */
  requiredCredentials?(config: Config): string[][];
  /** The readable base of an exported manifest's name (default: `displayHost`). */
  exportName?(config: Config): string;
  /** Data sources (interface 2.3) are registered under integrations of this kind. */
  hostsDataSources?: true;
  /**
   * What the operator must do after an update changes a config field (its path from `config`, e.g.
   * `groupPattern.deny`), as the interface states it: the plan warns (`follow-up`) naming the field.
   */
  followUps?: Readonly<Record<string, string>>;
}

/** A kind definition with its type kept as a literal (for the `IntegrationType` union). */
export function defineKind<const T extends string>(kind: KindDefinition<T>): KindDefinition<T> {
  return kind;
}

/** `requiredCredentials` of a kind whose credentials depend on `config.authenticationType`: per value, the fields. */
export function byAuthentication(table: Readonly<Record<string, string[][] | ((config: Config) => string[][])>>): (config: Config) => string[][] {
  return (config) => {
    const auth = config.authenticationType;
    const fields = typeof auth === 'string' && Object.hasOwn(table, auth) ? table[auth] : undefined;
    if (typeof fields === 'function') return fields(config);
    return (fields ?? []).map((p) => [...p]);
  };
}
