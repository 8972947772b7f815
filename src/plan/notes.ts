/**
 * What a plan says about itself, as values: why a change is blocked, why it has its action, and the plan's
 * warnings. Each note has a `code` from a closed union (what code decides on) and a `message` (what is printed,
 * never read back by code). Adding a code is adding a member here; the renderers print `message` only.
 */
import type { ResourceKind } from './types.js';

/** Why a change will not be carried out as planned. */
export type BlockedCode =
  /** Manual flow: the manifest does not acknowledge the platform scripts yet (src/plan/manual-steps.ts). */
  | 'awaiting-manual-step'
  /** The mass-deletion guard held the delete (or replace) back (src/plan/guard.ts). */
  | 'deletion-guard'
  /** A replace (or an adoption that means one) needs --allow-replace. */
  | 'replace-not-allowed'
  /** `--no-adopt`: the manifest matches, by natural key, a live resource govops does not own (src/plan/adoption.ts). */
  | 'adopt-not-allowed'
  /** The delete (or the delete half of a replace) needs spec.deleteCredentials. */
  | 'needs-delete-credentials'
  /** A data source waits for its integration (created, enabled, or itself blocked). */
  | 'waits-for-integration'
  /** A targeted plan leaves out the integration a data source waits for. */
  | 'integration-untargeted'
  /** The service has no data-source endpoints. */
  | 'data-sources-unsupported'
  /** A data source's name is taken by one govops does not delete. */
  | 'name-taken'
  /** A create's unique config value (object_store cloudLocationPath) is held by a live integration govops does not delete, or taken by an earlier create of the plan. */
  | 'value-taken'
  /** The live integration at the recorded id has a type govops does not know: never replaced or deleted by govops. */
  | 'unknown-type'
  /**
   * Which live resource is the manifest's cannot be told (two match its identity, or the one that does is another
   * manifest's or managed under another name): the plan has the error too; never planned as a create.
   */
  | 'identity-conflict'
  /** A webhook create sent earlier got no answer and is not listed yet: not sent again before the hold ends (pending.ts). */
  | 'create-unsettled';

/** Why a change has its action (or why it has none). */
export type ReasonCode =
  /** The manifest asks for the delete (`govops/delete: "true"`). */
  | 'delete-requested'
  /** An integration govops owns is still creating or editing: waited for, nothing sent (`settle`). */
  | 'settling'
  /** A prune candidate: no manifest any more. */
  | 'no-manifest'
  /** Already gone from the service: only the state entry is removed. */
  | 'gone-from-service'
  /** Not in govops state: never deleted. */
  | 'not-owned'
  /** A delete that needs --prune. */
  | 'needs-prune'
  /** Matched a live resource not in state: adopted (explicitly with `state adopt`, or by its natural key). */
  | 'adopted'
  /** The recorded id no longer exists. */
  | 'recorded-id-missing'
  /** Matched under an old manifest name: the state entry is renamed. */
  | 'renamed'
  /** Attributes that cannot change in place: a replace. */
  | 'not-editable'
  /** The kind has no update: a replace. */
  | 'no-update'
  /** A data source an interrupted delete of govops' left soft-deleted (disabled): deleted for good, registered anew. */
  | 'soft-deleted'
  /** Live status in error: fixed by a PUT. */
  | 'fix-status'
  /** Credentials that cannot be compared are re-sent (--resend-secrets). */
  | 'resend-secrets'
  /** A data source follows its integration (replaced with it, registered once it exists). */
  | 'follows-integration'
  /** An extra live copy govops' own create made. */
  | 'duplicate'
  /** `govops/suspend`: left alone; the message says what would otherwise be done. */
  | 'suspended';

/** A plan-level warning. */
export type WarningCode =
  /** A managed resource without a manifest (not pruned, adopted-only, suspended, or gone). */
  | 'orphan'
  /** A state record whose id now holds another item: forgotten. */
  | 'stale-record'
  /** Live webhooks with a managed name that govops did not create, or copies left without --prune. */
  | 'duplicate'
  /** The service has no data-source endpoints. */
  | 'data-sources-unsupported'
  /** A delete or replace also deletes data sources (unmanaged, or left out of a targeted plan). */
  | 'cascade-delete'
  /** `--only`: a delete left out, a pattern matching nothing, an error outside the targets. */
  | 'targeting'
  /** Marked `govops/delete` but not deleted (the message says why). */
  | 'delete-not-done'
  /** The mass-deletion guard refused the plan's deletes. */
  | 'deletion-guard'
  /** An update changes a field after which the operator must act (the kind's `followUps`, e.g. lakehouse groupPattern.deny). */
  | 'follow-up';

export interface Blocked {
  code: BlockedCode;
  message: string;
}

export interface Reason {
  code: ReasonCode;
  message: string;
}

/** The resource a warning is about (absent for a plan-wide one). */
export interface NoteResource {
  kind: ResourceKind;
  name: string;
}

export interface PlanWarning {
  code: WarningCode;
  resource?: NoteResource;
  message: string;
}

/**
 * A plan error while the plan is made, with the resources it is about: `--only` keeps it an error when one of
 * them is targeted, else makes it a warning (src/plan/target.ts). The plan itself holds the messages.
 */
export interface PlanProblem {
  message: string;
  about: NoteResource[];
}

export function problem(message: string, ...about: NoteResource[]): PlanProblem {
  return { message, about };
}

export function blocked(code: BlockedCode, message: string): Blocked {
  return { code, message };
}

export function reason(code: ReasonCode, message: string): Reason {
  return { code, message };
}

export function warning(code: WarningCode, message: string, resource?: NoteResource): PlanWarning {
  return resource ? { code, resource: { kind: resource.kind, name: resource.name }, message } : { code, message };
}
