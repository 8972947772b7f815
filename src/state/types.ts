/**
 * govops state (`.govops/state.json`): what govops owns. Never contains a secret value.
 */
/**
 * The version govops writes. 2: a webhook's identity holds its url by its keyed fingerprint, not in clear. Version 1
 * (the url in clear) is still read, and written as 2 at the next save; a govops that reads only 1 refuses a state of
 * 2 with its version in the message, rather than taking every recorded webhook for another's and forgetting it.
 */
export const STATE_VERSION = 2;
/** The versions this govops reads. */
export const READABLE_STATE_VERSIONS: readonly number[] = [1, 2];

/** Where the state file is by default (here, not in store.ts: `govops --help` shows it without loading the store). */
export const DEFAULT_STATE_PATH = '.govops/state.json';
/** The state key of a PostgreSQL state when none is given (`--state-key`, GOVOPS_STATE_KEY; location.ts). */
export const DEFAULT_STATE_KEY = 'default';

export interface ManagedResource {
  kind: 'Integration' | 'Webhook' | 'DataSource';
  /** metadata.name of the manifest. */
  name: string;
  /** Live id in the service (string, whatever the wire said). */
  id: string;
  /** Integration type, for integrations. */
  type?: string;
  /** Whether govops created it or adopted it. */
  origin: 'created' | 'adopted';
  /** Whether it was created with autoBootstrap true (decides the delete payload). */
  autoBootstrap?: boolean;
  /** sha256 of the canonical desired spec last applied (secrets replaced by their fingerprints). */
  specHash: string;
  /** Fingerprints of the secret values last sent, keyed by their path (e.g. `config.password`). */
  secretFingerprints: Record<string, string>;
  /** Git revision (or content digest) last applied, when known. */
  revision?: string;
  updatedAt: string;
  /**
   * An intent recorded before the request was sent (so a crash at any moment leaves nothing govops cannot
   * manage): `create` (with `id` '' until the service returns one) or `delete`. The next run resolves it
   * against live state before planning (src/plan/pending.ts).
   */
  pending?: 'create' | 'delete';
  /** Identity in the service, to resolve a pending create: integrations' natural key, a webhook's name. */
  key?: string;
  /**
   * What the live item at `id` must still be for govops to write to it by that id (service/kinds.ts
   * `integrationIdentity`, `webhookIdentity`): recorded with every intent and every applied change. A live item at
   * the id with another identity means the service gave the id to another item: the entry is stale and forgotten
   * (src/plan/stale.ts). Data sources: `dataSourceKey(integrationId, prefix)` (service/data-sources.ts), recorded when
   * govops creates one. Absent in entries written before it was recorded. A webhook's holds its url only by its keyed
   * fingerprint (`keyedWebhookIdentity`); one written in clear by an older govops is turned into that form on read.
   */
  identity?: string;
  /**
   * Webhooks: ids of further copies govops' own create made (found with the same identity and creator when its
   * interrupted create was resolved). The duplicate clean-up deletes these and no other same-name webhook.
   */
  copies?: string[];
  /**
   * Webhooks, a pending create: ids of the live webhooks that already had its identity (name and url) when the intent
   * was recorded (another team's webhook of the same name and url): never the one the create made, whatever the next
   * run finds (src/plan/pending.ts).
   */
  preexisting?: string[];
  /**
   * The manifest had `govops/suspend: "true"` when last reconciled with apply: while set, the resource is never
   * pruned, even once its manifest is gone (restore the manifest without the annotation, or `govops state forget`).
   */
  suspended?: boolean;
  /**
   * Recorded by `govops state adopt NAME --id ID` and not applied yet: the next plan treats the resource as an
   * adoption (credentials it cannot compare are recorded, not sent), matched by this id instead of the natural key.
   */
  explicitAdopt?: boolean;
}

export interface GovopsState {
  /** STATE_VERSION once read (a state of version 1 is read as 2); 1 only in states built by hand (tests). */
  version: typeof STATE_VERSION | 1;
  /** Random per-state key (hex) for HMAC-SHA256 fingerprints of secret values. */
  fingerprintKey: string;
  resources: ManagedResource[];
  /**
   * Transition times govops observed, keyed by `<type>/<operation>` (e.g. `<type>/create`): the
   * latest observations (newest last), each `[lo, hi]` in ms after the write was accepted — still
   * transitional at `lo`, settled at `hi`. Status polling aims its first poll at the duration that best
   * fits them (src/apply/transitions.ts).
   */
  transitions?: Record<string, Array<[number, number]>>;
}

/**
 * One change recorded in the state's journal (`state.json.journal`) between two full saves: a resource
 * put (added or replaced by kind and name) or removed. Replaying entries in order is idempotent.
 */
export type JournalEntry = { put: ManagedResource } | { remove: { kind: ManagedResource['kind']; name: string } };
