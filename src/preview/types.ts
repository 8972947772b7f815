/**
 * The result of `govops preview`: a plain value, rendered as Markdown for the pull-request comment and
 * printed as JSON with `-o json`. Its shape is versioned (`formatVersion`) and documented in
 * docs/pull-requests.md; secrets never reach it (sensitive values are `sensitive: true`, references by name).
 */

import type { Diagnostic } from '../manifests/types.js';
import type { ActionKind, BlockedCode, FieldChange, NotComparable } from '../plan/types.js';
import type { ScriptPhase } from '../service/kinds.js';
import type { ChangedFile } from './git.js';
import type { ManifestFieldChange } from './manifest-diff.js';
import type { PrChangeKind, SourceRef } from './pr-diff.js';
import type { UnknownSecret } from './unknown-secrets.js';

/** Hidden first line of the comment: a CI bot finds its previous comment by it and edits it in place. */
export const PREVIEW_MARKER = '<!-- govops-preview -->';

/** Version of the JSON shape; raised on any incompatible change. */
export const PREVIEW_FORMAT_VERSION = 2;

/** What merging does to a touched resource in the service; `none` = nothing (e.g. removed without --prune). */
export type LiveAction = ActionKind | 'none';

/** A live field change, marked when this pull request causes it (the others are drift the merge also applies). */
export type LiveFieldChange = FieldChange & { fromPr: boolean };

export interface LiveFacts {
  action: LiveAction;
  /** Adopted: exists in the service but govops does not manage it yet. */
  adopt: boolean;
  /** Live id and status, when the resource exists. */
  id?: string;
  status?: string;
  /** Why (from the plan): renames, error statuses, non-editable attributes, ownership. */
  reasons: string[];
  /** Set when the action cannot be carried out as planned (a blocked prune, a replace not allowed...): the plan's message. */
  blocked?: string;
  /** With `blocked`: its code (src/plan/notes.ts), what the preview decides on. */
  blockedCode?: BlockedCode;
  /** Field changes against the live resource (secrets as `sensitive`). */
  changes: LiveFieldChange[];
  /** Non-editable attributes that force a replace. */
  forcesReplace: string[];
  /** Credentials the service masks and govops cannot compare (not counted as changes), and what apply does. */
  notComparable?: NotComparable;
}

export interface ValidationRow {
  name: string;
  /** passed | failed | warning | skipped (or what the service says). */
  status: string;
  /** The test's result rows, as the service returns them (redacted). */
  result: unknown[];
}

export interface DryRunResult {
  /**
   * passed / warning / failed (validation tests), rejected (the service refused the request: 4xx other than
   * 409), error (could not run: 409 busy, 5xx, network), skipped (not sent: `reason` says why).
   */
  status: 'passed' | 'warning' | 'failed' | 'rejected' | 'error' | 'skipped';
  /** The request sent, e.g. `PUT /integrations/12?dryRun=true`. */
  request?: string;
  reason?: string;
  tests: ValidationRow[];
}

/** One script of the manual flow (autoBootstrap false) the platform admin runs before merging applies. */
export interface ManualStep {
  phase: ScriptPhase;
  /** The command that fetches the real script (secret values filled in). */
  command: string;
  /** The script as the service generated it (secret references as placeholders), when fetched. */
  script?: string;
  /** Language hint for the code block (sql, bash...). */
  language?: string;
  /** Why it was not fetched (offline, no live id yet...) or what failed. */
  note?: string;
}

/**
 * The manual-flow acknowledgment of a touched integration (`govops/manual-step`, README "Manual-flow
 * integrations"): whether merging applies its change, or it waits until the scripts ran and the manifest says so.
 */
export interface ManualAck {
  status: 'awaiting' | 'acknowledged' | 'trusted';
  /** The line to add under `metadata.annotations` once the scripts ran (absent: no manifest can carry it). */
  annotation?: string;
  /** Why it waits (no annotation, a stale one, no manifest). */
  reason?: string;
  /**
   * Acknowledged by a line the pull request itself writes (the base revision's manifest does not carry it). The
   * annotation records that the scripts ran; it does not prove it: anyone who can edit the manifest can write it.
   */
  fromPullRequest?: true;
}

export interface PreviewResource {
  resourceKind: 'Integration' | 'Webhook' | 'DataSource';
  name: string;
  integrationType?: string;
  /** What the pull request does to it; absent without --base (the whole plan is shown). */
  change?: PrChangeKind;
  renamedFrom?: string;
  source?: SourceRef;
  baseSource?: SourceRef;
  /** Manifest field changes made by the pull request (every field for an addition). */
  fields: ManifestFieldChange[];
  /** Live mode: what merging does in the service. */
  live?: LiveFacts;
  /** Live mode, integrations with a request to make: the server-side dry run. */
  dryRun?: DryRunResult;
  /** Manual flow: the scripts to run. */
  manualSteps?: ManualStep[];
  /** Manual flow: the acknowledgment merging needs (or has) before the change is applied. */
  manualAck?: ManualAck;
}

/** A difference between the live service and the base revision that this pull request does not cause. */
export interface DriftEntry {
  resourceKind: 'Integration' | 'Webhook' | 'DataSource';
  name: string;
  integrationType?: string;
  action: ActionKind;
  id?: string;
  /** The pull request also touches this resource (these are its other differences). */
  touched: boolean;
  reasons: string[];
  changes: FieldChange[];
}

export type WarningKind =
  | 'replace'
  | 'delete'
  | 'blocked'
  | 'manual-step'
  | 'not-pruned'
  | 'dry-run-failed'
  | 'dry-run-error'
  | 'plan-error'
  | 'plan-warning'
  | 'uncommitted'
  | 'base-moved'
  | 'base-invalid';

export interface PreviewWarning {
  kind: WarningKind;
  /** `Kind/name`, when about one resource. */
  resource?: string;
  message: string;
}

export interface PreviewSummary {
  /** What the pull request changes in the manifests (without --base: all zero). */
  pr: { added: number; changed: number; renamed: number; removed: number };
  /** Live mode: the live action of each touched resource (blocked ones counted apart). */
  live?: Record<LiveAction, number>;
  /** Live mode: touched resources whose action is blocked (a replace not allowed, a prune refused...). */
  blocked?: number;
  /** Touched integrations whose change waits for its manual step (live: counted apart from `blocked`). */
  awaitingManualStep?: number;
  /** Live mode: dry-run outcomes. */
  dryRuns?: Record<DryRunResult['status'], number>;
  /** Resources whose live state differs from the base revision (not caused by this pull request). */
  drift: number;
  /** Manual-flow scripts to run. */
  manualSteps: number;
}

export interface PreviewResult {
  formatVersion: typeof PREVIEW_FORMAT_VERSION;
  marker: typeof PREVIEW_MARKER;
  /** `live`: the service was consulted; `offline`: manifests only (`offlineReason` says why). */
  mode: 'live' | 'offline';
  offlineReason?: string;
  /** Short SHA of HEAD, when in a git work tree. */
  revision?: string;
  /**
   * With --base: the ref, the merge-base and the manifest files the pull request changes. `mergedOnto`: the ref
   * moved on since the merge-base, and HEAD was merged onto its tip (this full SHA) to be compared with it.
   */
  base?: { ref: string; mergeBase: string; mergedOnto?: string; files: ChangedFile[] };
  /** Manifest files with uncommitted changes: not previewed (the preview reads commits). */
  uncommitted?: string[];
  /** No manifest errors at the head. */
  valid: boolean;
  /** Manifest errors and warnings at the head (`file:line:col`). */
  diagnostics: Diagnostic[];
  /** Secret references that cannot be resolved here: their values are unknown (never a change). */
  unknownSecrets: UnknownSecret[];
  summary: PreviewSummary;
  /** What reviewers must not miss; shown at the top of the comment. */
  warnings: PreviewWarning[];
  /** The touched resources (with --base), or every resource with something to do (without). */
  resources: PreviewResource[];
  /** Live mode: differences between the service and the base revision that this pull request does not cause. */
  drift: DriftEntry[];
  /** A failure that stopped the preview (other than invalid manifests). */
  error?: string;
  /** Merging changes something: a touched resource has a live action (offline: the pull request changes a resource). */
  changed: boolean;
  /** 0 no changes, 2 changes, 1 invalid manifests, a failed dry run, a plan error or another failure. */
  exitCode: 0 | 1 | 2;
}

