/**
 * The shape of the daemon's `GET /status` (published as schemas/status.json; a test validates a live answer
 * against it). Interfaces, so a new section is a new optional field here and a property in the schema.
 * Absent values are left out of the JSON (never `null`).
 */
import type { FailureClass } from '../errors.js';
import type { ActionKind, DeletionRefusal, PlanSummary } from '../plan/types.js';
import type { OutcomeAction, ReconcileResult } from '../reconcile/types.js';
import type { SourceHealth } from '../sources/health.js';
import type { SourceDescription } from '../sources/types.js';
import type { Verdict } from './classify.js';
import type { Judgement } from './classify.js';
import type { Reason, WaitingRevision } from './loop.js';
import type { DriftReport } from './report.js';
import type { ResourceState, SyncState } from './resources.js';

/** The source and its health (last look, error while looks fail, since when, how many in a row). */
export interface StatusSource extends SourceDescription, SourceHealth {}

export interface StatusRevision {
  /** The newest revision the source has. */
  latest?: string;
  /** The last revision that loaded and planned (the one in force). */
  lastGood?: string;
  lastApplied?: string;
  lastAppliedAt?: string;
  /** A revision waiting to run. */
  pending?: string;
  /** The latest revision, when it was rejected. */
  rejected?: string;
  /** The newest revision not applied yet, retried until it is. */
  waiting?: WaitingRevision;
}

/** A resource whose change waits for a person (a manual step). */
export interface BlockedResource {
  kind: ResourceState['kind'];
  name: string;
  action: OutcomeAction;
  code?: string;
}

/** One reconcile attempt, as `lastReconcile` and `lastSuccess` show it. */
export interface ReconcileSummary {
  revision: string;
  reason: Reason;
  apply: boolean;
  result: Verdict;
  code?: string;
  failureClass?: FailureClass;
  startedAt: string;
  finishedAt: string;
  durationSec: number;
  stage?: ReconcileResult['stage'];
  summary?: PlanSummary;
  blocked?: BlockedResource[];
}

export interface StatusDiagnostic {
  file: string;
  line: number;
  column: number;
  kind?: string;
  name?: string;
  message: string;
  /** `file:line:column`. */
  at: string;
}

export interface StatusFailure {
  kind: ResourceState['kind'];
  name: string;
  action: OutcomeAction;
  error?: string;
  code?: string;
}

/** The last failed (or rejected) attempt. */
export interface LastError {
  revision: string;
  result: Verdict;
  code?: string;
  retry?: Judgement['retry'];
  at: string;
  message?: string;
  diagnostics: StatusDiagnostic[];
  planErrors: string[];
  failures: StatusFailure[];
}

/** The source's looks fail since after the last reconcile's error: the newest problem. */
export interface SourceLastError {
  stage: 'source';
  result: 'fetch-failed';
  code: string;
  retry: 'backoff';
  at?: string;
  since: string;
  message?: string;
}

export interface PendingChange {
  kind: ResourceState['kind'];
  name: string;
  action: ActionKind;
  syncState: SyncState;
}

export interface DaemonStatus {
  source: StatusSource;
  revision: StatusRevision;
  ready: boolean;
  observe: boolean;
  drift: boolean;
  lastDrift?: DriftReport;
  pendingChanges: PendingChange[];
  running?: { revision: string; reason: Reason; since: string };
  lastReconcile?: ReconcileSummary;
  lastSuccess?: ReconcileSummary;
  lastError?: LastError | SourceLastError;
  nextRetryAt?: string;
  consecutiveFailures: number;
  deletionGuard?: DeletionRefusal & { revision: string };
  resources: ResourceState[];
  resourceCounts: Record<ResourceState['kind'], Partial<Record<SyncState, number>>>;
  resourcesRevision?: string;
  dataSources?: { supported: boolean; message?: string; revision: string };
  /** The options in force (`govops run` flags). */
  options?: Record<string, unknown>;
  /** `--webhook-health-interval`: the delivery health section (src/daemon/webhook-health.ts). */
  webhookHealth?: Record<string, unknown>;
  /** With a PostgreSQL state: this replica's role and the leader lease (src/daemon/leader.ts). */
  leader?: Record<string, unknown>;
}

/** The /status fields computed on each request. */
export type StatusSectionName = 'webhookHealth' | 'leader';

/** Sections computed on each request (`DaemonOptions.statusSections`), by their /status field. */
export type StatusSections = { [K in StatusSectionName]?: () => NonNullable<DaemonStatus[K]> };

/** The sections' values now. */
export function sectionValues(sections: StatusSections | undefined): Pick<DaemonStatus, StatusSectionName> {
  const out: Pick<DaemonStatus, StatusSectionName> = {};
  for (const name of Object.keys(sections ?? {}) as StatusSectionName[]) {
    const section = sections?.[name];
    if (section) out[name] = section();
  }
  return out;
}
