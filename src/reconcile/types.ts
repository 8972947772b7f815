/**
 * One reconcile of one revision: load + validate manifests, resolve secrets, fetch live state,
 * plan, and (when asked) apply. Shared by `govops plan`, `govops apply` and the daemon.
 */
import type { ManifestStream } from '../manifests/loader.js';
import type { Logger } from 'pino';
import type { Clock } from '../util/clock.js';
import type { ErrorCodeValue, FailureClass, FailureInfo } from '../errors.js';
import type { SecretScope } from '../manifests/secret-scope.js';
import type { Diagnostic } from '../manifests/types.js';
import type { PlanFacts } from '../plan/facts.js';
import type { ActionKind, Plan, PlanOptions } from '../plan/types.js';

export type { ApplyTuning } from '../apply/tuning.js';
import type { ApplyTuning } from '../apply/tuning.js';

/** Where a revision's manifests and secrets are read from. */
export interface SourceSettings {
  /** Folder the manifest paths are relative to. */
  root: string;
  /** Manifest files/folders (relative to root or absolute); `-` is `stream`. Default ['.']. */
  paths: string[];
  /** The manifest stream `-` stands for (standard input, or the daemon's rendered revision). */
  stream?: ManifestStream;
  /**
   * The folder no manifest (through a symlink) nor secret file may leave, and the default secrets
   * root: the daemon passes the repository. Default: each path given.
   */
  sourceRoot?: string;
  /** Which secrets manifests may reference (--secrets-dir, --secret-env-prefix). */
  secretScope?: SecretScope;
  /** Where the revision's files really are when `root` is a copy without secret files (directory source). */
  secretsOrigin?: string;
}

/**
 * One reconcile: three settings objects, each built once (src/cli/settings.ts, the daemon's engine) and passed
 * down whole (`source` to the loader, `plan` to the planner, `tuning` to the applier), and the run's own values.
 */
export interface ReconcileOptions {
  source: SourceSettings;
  /** The planner's options, as given (src/plan/planner.ts). */
  plan: PlanOptions;
  /** How the plan is carried out (with `apply`). */
  tuning?: ApplyTuning;
  /** Revision being reconciled (commit SHA or content digest), recorded in state. */
  revision?: string;
  /** false: plan only (drift check / plan command). */
  apply: boolean;
  /** Graceful stop: nothing new starts, waits end, requests in flight finish and are saved. */
  signal?: AbortSignal;
  /** Forced stop: requests in flight are aborted too. */
  forceSignal?: AbortSignal;
  /** The apply's time and timers (deadlines, the poller, 409 backoffs); default the system's. Tests move one by hand. */
  clock?: Clock;
  logger: Logger;
  /** Called with the plan once it is made (before anything is applied). */
  onPlan?: (plan: Plan) => void;
  /** Called as each resource finishes applying (progress output). */
  onOutcome?: (outcome: ResourceOutcome, done: number, total: number) => void;
  /** Compute the facts the plan was made from (`plan --out`): `ReconcileResult.facts`. */
  recordFacts?: boolean;
  /**
   * Apply this saved plan (`apply FILE`): under the state lock, before any write, the facts and the plan are
   * computed again with the same options; any difference refuses the apply (`ReconcileResult.stale`).
   */
  saved?: { plan: Plan; facts: PlanFacts };
}

/**
 * What an outcome's change did: the plan's action, `rename` (a no-op that renamed the resource), or
 * `adopt+<action>` (adopted and changed in the same apply).
 */
export type OutcomeAction = ActionKind | 'rename' | `adopt+${Exclude<ActionKind, 'adopt'>}`;

export interface ResourceOutcome {
  resourceKind: 'Integration' | 'Webhook' | 'DataSource';
  name: string;
  action: OutcomeAction;
  /**
   * `blocked`: awaiting a manual step (not written; everything else went ahead). `settling`: a `settle` whose wait ended
   * with the integration still creating or editing (not a failure: this run sent nothing to it; the next run looks again).
   */
  result: 'ok' | 'failed' | 'skipped' | 'blocked' | 'settling';
  durationMs: number;
  error?: string;
  /** Live id after the action (absent for deletes and failures before the resource existed). */
  liveId?: string;
  /** Validation tests reported by the service, when a dry run or the real call failed on them. */
  validation?: Array<{ name: string; status: string }>;
  /** Failed or skipped: the stable error code and its class (src/errors.ts). */
  code?: ErrorCodeValue;
  failureClass?: FailureClass;
  /** The change deleted an extra copy of a webhook; this is the live id kept. */
  duplicateOf?: string;
}

/** The stage a reconcile stopped at (src/reconcile/stages.ts): load (manifests, secrets), plan (observe, plan, saved plan check), apply. */
export type ReconcileStage = 'load' | 'plan' | 'apply';

interface ResultBase {
  revision?: string;
  diagnostics: Diagnostic[];
  plan?: Plan;
  outcomes: ResourceOutcome[];
  /**
   * The plan had changes govops would make now (drift, when nothing new was committed). Changes awaiting a
   * manual step are not counted: they wait for a new revision, whatever the resync finds.
   */
  changed: boolean;
  /** Status requests and lists the apply's poller made (when it applied). */
  polls?: { status: number; lists: number };
  /** With `recordFacts`: what the plan was computed from (saved with it). */
  facts?: PlanFacts;
  /** Asked to apply, it only planned: a standby replica (src/daemon/standby.ts) leaves writing to the leader. */
  plannedOnly?: true;
  startedAt: string;
  finishedAt: string;
}

/** Every stage went through: planned (plan only), or applied with every resource ok or awaiting a manual step. */
export interface ReconcileDone extends ResultBase {
  stage: 'done';
  ok: true;
  error?: undefined;
  failure?: undefined;
  stale?: undefined;
}

/** Stopped before applying anything, at `stage`, with what failed as a value. */
export interface ReconcileFailed extends ResultBase {
  stage: 'load' | 'plan';
  ok: false;
  /** Short human description of the failure, with file:line when there is one. */
  error: string;
  /** The code and class of the error that stopped the reconcile. */
  failure: FailureInfo;
  /** With `saved` (stage `plan`): why the saved plan was refused (what changed since it was made). */
  stale?: string[];
}

/** The apply ran and not every resource was applied. */
export interface ApplyFailed extends ResultBase {
  stage: 'apply';
  ok: false;
  /** The resources not applied, with their errors; absent when none failed (an apply stopped before it ended). */
  error?: string;
  /** The failure that decides what the failed outcomes mean (`applyFailure`); absent when none has a code. */
  failure?: FailureInfo;
  stale?: undefined;
}

/** What one reconcile did: `stage` says how far it went (`load` failures mean invalid manifests or unresolvable secrets). */
export type ReconcileResult = ReconcileDone | ReconcileFailed | ApplyFailed;
