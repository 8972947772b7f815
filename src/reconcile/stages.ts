/**
 * What the stages of one reconcile share (src/reconcile/engine.ts runs them in order: load → observe → plan →
 * check saved plan → apply → record): the engine's options, and a failure as a value keyed by its stage.
 */
import { classify, describeError } from '../errors.js';
import type { LoadCache } from './load.js';
import type { ReconcileOptions, ReconcileResult } from './types.js';

export type EngineOptions = ReconcileOptions & {
  statePath: string;
  env?: NodeJS.ProcessEnv;
  /** Keeps the last revision's loaded manifests, so a resync of an unchanged revision does not read them again (the daemon). */
  loadCache?: LoadCache;
};

/** A result before the engine stamps it with its revision and times. */
export type ResultBody<R extends ReconcileResult = ReconcileResult> = R extends unknown ? Omit<R, 'startedAt' | 'finishedAt' | 'revision'> : never;

/** A stage that stopped the reconcile: the result to return, keyed by the stage (`load`, `plan`, `apply`). */
export type StageFailure = ResultBody<Extract<ReconcileResult, { ok: false }>>;

/** Whether a stage's value is its failure (a stage's own values carry no `ok`). */
export function stopped<T extends object>(value: T | StageFailure): value is StageFailure {
  return (value as { ok?: unknown }).ok === false;
}

/** An error that stopped a stage, as the result's text (a user error's hint after its message). */
export const describeFailure = (err: unknown): string => describeError(err);

/** A thrown error that stopped a stage before apply, as that stage's failure. */
export function thrownAt(stage: 'load' | 'plan', err: unknown, diagnostics: StageFailure['diagnostics']): StageFailure {
  return { stage, ok: false, diagnostics, outcomes: [], changed: false, error: describeFailure(err), failure: classify(err) };
}
