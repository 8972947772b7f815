/**
 * The plan: a plain value (serialisable to JSON) computed by a pure function of
 * (manifests, live state, govops state, options). Printing and applying it are separate steps.
 */
import type { IntegrationType } from '../kinds/registry.js';
import type { WebhookInput } from '../api/types.js';
import type { ManualStepFacts } from './acknowledgment.js';
import type { ScriptPhase } from '../service/kinds.js';
import type { Blocked, PlanWarning, Reason } from './notes.js';

export type { Blocked, BlockedCode, NoteResource, PlanWarning, Reason, ReasonCode, WarningCode } from './notes.js';

/**
 * `settle`: nothing to send, but an integration govops owns is still `creating` or `editing` (its create's answer was
 * lost, or an earlier run's wait ended first): apply waits for it as after its own write, and an error status is the
 * failure of this run (src/plan/integrations.ts). No field changes; not counted as a change (`hasChanges`).
 */
export type ActionKind = 'create' | 'update' | 'replace' | 'delete' | 'adopt' | 'settle' | 'noop';

/** The kinds of resource govops manages (manifest `kind`). */
export type ResourceKind = 'Integration' | 'Webhook' | 'DataSource';

export interface FieldChange {
  /** Dotted path, e.g. `config.port` or `notificationType`. */
  path: string;
  /** Omitted when sensitive. */
  before?: unknown;
  after?: unknown;
  /** Values are secrets: shown as `(sensitive)`. */
  sensitive: boolean;
  /** The attribute is not editable in the service: the change needs a replace. */
  forcesReplace: boolean;
}

export interface ResourceChange {
  resourceKind: ResourceKind;
  /** metadata.name, or for a prune candidate the name recorded in state. */
  name: string;
  action: ActionKind;
  /** Adopted resources are also updated when they differ (`adopt` + changes). */
  adopt: boolean;
  /** Live id, when the resource exists. */
  liveId?: string;
  integrationType?: IntegrationType;
  changes: FieldChange[];
  /** Why this action (e.g. `status createError: fixed by PUT`, `config.host is not editable`): src/plan/notes.ts. */
  reasons: Reason[];
  /** Set when the action cannot be carried out as planned (missing deleteCredentials, replace not allowed...). */
  blocked?: Blocked;
  /** Manual flow: the script the user must run in the platform first. */
  manualScript?: { phase: string; command: string };
  /** Where the manifest is (absent for deletes). */
  source?: { file: string; line: number; column: number };
  /** The resource was recorded in state under this (old) manifest name: the state entry is renamed. */
  renamedFrom?: string;
  /** Deletes and replaces: the delete must carry the 2.9 payload (spec.deleteCredentials). */
  deleteNeedsCredentials?: boolean;
  /** For deletes: the resource no longer exists in the service; only the state entry is removed. */
  goneFromService?: boolean;
  /** Secret fields that cannot be compared (not counted as changes), and what apply does about them. */
  notComparable?: NotComparable;
  /**
   * For deletes of an extra copy (two live webhooks with one managed name): the live id govops keeps.
   * The state entry is not touched.
   */
  duplicateOf?: string;
  /**
   * Data sources: the integration they are registered under. `name` is its manifest name (absent for a prune
   * whose integration govops does not manage); `liveId` its live id when the plan was made (absent when the
   * integration is still to be created, or is replaced: apply takes the new id from its task).
   */
  integration?: { name?: string; liveId?: string };
  /**
   * The manifest has `govops/suspend: "true"` (or, for a prune candidate, state recorded it suspended): govops
   * leaves the resource alone. Always a `noop`; `reasons` says what would otherwise be done.
   */
  suspended?: boolean;
  /** Paths of `govops/ignore-fields`: sent on create, never compared, kept as they are live on an update. */
  ignoredFields?: string[];
  /** Manual flow: the platform scripts this change needs and whether the manifest acknowledges them (manual-steps.ts). */
  manualStep?: ManualStepGate;
  /** Manual flow, the integration's creation failed (`createError`): the ways out, with the commands. */
  failedCreation?: FailedCreation;
  /**
   * Integration creates: the removals of this plan (`Integration/name`) that free a unique value it takes (object_store
   * `cloudLocationPath` moved from a pruned integration to a new one): apply starts it once they are done.
   */
  freedBy?: string[];
}

/** One platform script to fetch (`govops scripts ...`) and run before the change. */
export interface ManualScriptStep {
  phase: ScriptPhase;
  command: string;
}

/**
 * The gate of a manual-flow change (autoBootstrap false, a kind with a script for the phase): govops writes it
 * only once `metadata.annotations["govops/manual-step"]` acknowledges the scripts for this configuration.
 */
export interface ManualStepGate {
  /**
   * `awaiting`: not written (the change is also `blocked`); `acknowledged`: the annotation matches;
   * `trusted`: not checked (`--manual-steps trust`).
   */
  status: 'awaiting' | 'acknowledged' | 'trusted';
  /** The scripts, in the order they run. */
  scripts: ManualScriptStep[];
  /** The annotation that lets this change through; absent when no manifest can carry it (a prune). */
  acknowledgment?: { value: string; line: string };
  /** Why it waits: no annotation, a stale one (the configuration changed after the script ran), no manifest. */
  reason?: string;
}

/** An integration in `createError` in the manual flow: fix it with a PUT, or remove it with the cleanup scripts. */
export interface FailedCreation {
  status: string;
  /** How a PUT fixes it (the update govops plans, gated by the edit script). */
  fix: string;
  /** The cleanup scripts (`cleanup`, then `post-cleanup` where the kind has it), then the DELETE. */
  cleanup: ManualScriptStep[];
  /** How to have govops delete it once the cleanup scripts ran. */
  remove: string;
}

/*
 * A planned change as a discriminated union (on `action`, then `goneFromService` / `renamedFrom`), so
 * code that carries a plan out knows from the type which changes have a live id. The planner builds
 * `ResourceChange` drafts and narrows each with `toPlanChange`.
 */
export type CreateChange = ResourceChange & { action: 'create'; liveId?: undefined };
export type UpdateChange = ResourceChange & { action: 'update'; liveId: string };
export type ReplaceChange = ResourceChange & { action: 'replace'; liveId: string };
/** Deletes a live resource (with `duplicateOf`: an extra copy, state untouched). */
export type DeleteChange = ResourceChange & { action: 'delete'; liveId: string; goneFromService?: false };
/** The resource is already gone from the service: only its state entry is removed. */
export type ForgetChange = ResourceChange & { action: 'delete'; goneFromService: true; liveId?: undefined };
export type AdoptChange = ResourceChange & { action: 'adopt'; liveId: string };
/** An integration govops owns still in a transition: waited for, nothing sent. */
export type SettleChange = ResourceChange & { action: 'settle'; liveId: string };
/** Nothing to do (the live id is known when the resource exists). */
export type NoopChange = ResourceChange & { action: 'noop'; renamedFrom?: undefined };
/** Nothing to do in the service; the state entry is renamed to the new manifest name. */
export type RenameChange = ResourceChange & { action: 'noop'; renamedFrom: string; liveId: string };
export type PlanChange =
  | CreateChange
  | UpdateChange
  | ReplaceChange
  | DeleteChange
  | ForgetChange
  | AdoptChange
  | SettleChange
  | NoopChange
  | RenameChange;

/** Narrow a draft to its union member; an inconsistent draft (e.g. an update without a live id) is a planner bug. */
export function toPlanChange(c: ResourceChange): PlanChange {
  const bug = (why: string): Error => new Error(`planner bug: ${c.resourceKind}/${c.name} ${c.action}: ${why}`);
  const { liveId, goneFromService, renamedFrom, ...rest } = c;
  const renamed = renamedFrom !== undefined ? { renamedFrom } : {};
  switch (c.action) {
    case 'create':
      if (liveId !== undefined) throw bug('a create has no live id');
      return { ...rest, ...renamed, action: 'create' };
    case 'update':
    case 'replace':
    case 'adopt':
    case 'settle':
      if (liveId === undefined) throw bug('needs the live id');
      return { ...rest, ...renamed, action: c.action, liveId };
    case 'delete':
      if (goneFromService) return { ...rest, ...renamed, action: 'delete', goneFromService: true };
      if (liveId === undefined) throw bug('a delete of a live resource needs its id');
      return { ...rest, ...renamed, action: 'delete', liveId };
    case 'noop':
      if (renamedFrom === undefined) return { ...rest, ...(liveId !== undefined ? { liveId } : {}), action: 'noop' };
      if (liveId === undefined) throw bug('a rename needs the live id');
      return { ...rest, action: 'noop', renamedFrom, liveId };
  }
}

export interface PlanSummary {
  create: number;
  update: number;
  replace: number;
  delete: number;
  adopt: number;
  noop: number;
  /** Integrations waited for (`settle`), when there are any. */
  settle?: number;
}

/** The version of the plan's JSON (docs/plan-json.md). */
export const PLAN_FORMAT_VERSION = 2;

export interface Plan {
  /** Format version of the JSON output (2: `blocked`, `reasons` and `warnings` are `{code, message}` values). */
  formatVersion: typeof PLAN_FORMAT_VERSION;
  revision?: string;
  changes: PlanChange[];
  summary: PlanSummary;
  /** Plan-level errors (e.g. two live matches for one manifest). A plan with errors is not applied. */
  errors: string[];
  warnings: PlanWarning[];
  /** Set when the mass-deletion guard held deletes back (src/plan/guard.ts); the other changes still apply. */
  deletionRefusal?: DeletionRefusal;
  /**
   * Set when data sources are in play and the service could not list them (its list endpoint answered 404 or
   * 405): why. Every DataSource manifest is then a blocked create; the other changes still apply.
   */
  dataSourcesUnsupported?: string;
  /** A targeted plan (`--only`): the patterns, and how many resources they left out. */
  targets?: PlanTargets;
}

/** What `--only` did to a plan (src/plan/target.ts). */
export interface PlanTargets {
  /** The `--only` patterns (`Kind/name`, globs allowed). */
  only: string[];
  /** Resources (manifests and prune candidates) left out of the plan. */
  untargeted: number;
}

/** Why the mass-deletion guard refused a plan's deletes. */
export interface DeletionRefusal {
  /** Which rule refused: the manifest set is empty, over the default share, over `--max-deletes`. */
  rule: 'empty' | 'share' | 'max-deletes';
  /** Changes held back. */
  refused: number;
  /** Managed resources (state entries) before the plan. */
  managed: number;
  /** The most the rule allows. */
  limit: number;
  /** What happened and the flags that allow it. */
  message: string;
}

/* ---- Planner input (added by the planner's owner; the fields above are the shared contract) ---- */

/** The API body of an integration as govops will send it (secrets resolved). */
export interface DesiredIntegrationBody {
  type: IntegrationType;
  autoBootstrap?: boolean;
  config?: Record<string, unknown>;
}

/** The API body of a webhook as govops will send it (secret resolved). */
export type DesiredWebhookBody = WebhookInput;

interface DesiredBase {
  name: string;
  source: { file: string; line: number; column: number };
  /**
   * Body-relative dotted paths of sensitive values (`config.password`, `secret`): values that came from a
   * secret reference or whose key is a masked key. Never shown, compared by fingerprint.
   */
  secretPaths: string[];
  /** Keyed fingerprint of each secret path's value (computed by the caller with the state key). */
  fingerprints: Record<string, string>;
  /** sha256 of the canonical body with secrets replaced by their fingerprints. */
  specHash: string;
  /** `metadata.annotations['govops/delete'] === 'true'`: the manifest asks for its resource to be deleted. */
  deleteRequested: boolean;
  /** `govops/suspend: "true"`: leave the resource alone. */
  suspended?: boolean;
  /** `govops/ignore-fields`: body paths never compared (sorted). */
  ignoreFields?: string[];
}

export interface DesiredIntegration extends DesiredBase {
  kind: 'Integration';
  body: DesiredIntegrationBody;
  /** The 2.9 delete payload (secrets resolved), when the manifest gives one. */
  deleteCredentials?: Record<string, unknown>;
  /** Manual-flow tokens and acknowledgments of the manifest (src/manifests/manual-step.ts); absent: none known. */
  manualStep?: ManualStepFacts;
}

export interface DesiredWebhook extends DesiredBase {
  kind: 'Webhook';
  body: DesiredWebhookBody;
}

/**
 * A data source as its manifest gives it: `integration` is the manifest name of its data-source host
 * integration (its live id, sent as `integrationId`, is known only when the plan is made or carried out).
 */
export interface DesiredDataSourceBody {
  integration: string;
  dataSourceName: string;
  prefix: string;
}

export interface DesiredDataSource extends DesiredBase {
  kind: 'DataSource';
  body: DesiredDataSourceBody;
}

/** One resolved manifest, ready to plan. Holds secret values: never serialise it. */
export type DesiredResource = DesiredIntegration | DesiredWebhook | DesiredDataSource;

export interface PlanOptions {
  prune: boolean;
  allowReplace: boolean;
  maxDeletes?: number;
  /** An empty manifest set may prune (still subject to the deletion limits). Default false. */
  allowEmpty?: boolean;
  /**
   * `require` (default): a manual-flow create, edit or delete waits for the manifest's acknowledgment;
   * `trust`: the scripts are assumed to run out of band, nothing waits.
   */
  manualSteps?: ManualStepsMode;
  /**
   * Credentials that cannot be compared (masked by the service, no fingerprint in state) are re-sent once
   * (an update; a replace for a webhook) so their fingerprints are recorded, instead of being recorded as
   * they are in the manifest without a call.
   */
  resendSecrets?: boolean;
  /**
   * `--no-adopt`: a manifest that matches, by natural key, a live resource govops does not own does not take it
   * over; its change is blocked (`adopt-not-allowed`). An adoption the operator recorded (`govops state adopt`,
   * `export --state`) is still carried out; what govops owns is planned as always. Default false: adopted.
   */
  noAdopt?: boolean;
  /**
   * `--only Kind/name` patterns (globs allowed): plan those resources only. A delete is planned only for a
   * resource a pattern names exactly (no glob).
   */
  only?: string[];
}

/**
 * The hashing the planner's callers inject (src/state/store.ts `hashingFor`), so the plan core imports no
 * crypto: keyed fingerprints of secret values and a digest of the canonical spec.
 */
export interface Hashing {
  /** Keyed fingerprint (HMAC-SHA256 hex under the state's key) of a secret value. */
  fingerprint(value: string): string;
  /** sha256 hex of a text. */
  digest(text: string): string;
}

/**
 * Secret fields of a resource that govops cannot compare: the service masks (or omits) them and govops state
 * has no fingerprint of what was sent (a resource adopted, or planned without the state file). They are not
 * counted as changes. `handling` says what apply does about them:
 * - `record`: nothing is sent; the manifest's values are recorded in state as current (adoption),
 * - `resend`: they are sent once (an update, for a webhook a replace) so what is recorded was really sent,
 * - `send`: they are sent anyway, with the update or replace the resource has for other reasons.
 */
export interface NotComparable {
  paths: string[];
  handling: 'record' | 'resend' | 'send';
}

export type ManualStepsMode = 'require' | 'trust';
export const MANUAL_STEPS_MODES: readonly ManualStepsMode[] = ['require', 'trust'];

