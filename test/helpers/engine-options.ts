/**
 * The engine's options from one flat record, as tests write them (`{ root, paths, prune, timeoutMs, … }`):
 * the source, plan and tuning fields are sorted into the settings objects the engine takes whole.
 */
import type { EngineOptions } from '../../src/reconcile/engine.js';
import type { PlanOptions } from '../../src/plan/types.js';
import type { ApplyTuning, ReconcileOptions, SourceSettings } from '../../src/reconcile/types.js';

export type FlatEngineOptions = Omit<EngineOptions, 'source' | 'plan' | 'tuning'> & SourceSettings & PlanOptions & ApplyTuning;

const SOURCE = ['root', 'paths', 'stream', 'sourceRoot', 'secretScope', 'secretsOrigin'] as const;
const PLAN = ['prune', 'allowReplace', 'maxDeletes', 'allowEmpty', 'manualSteps', 'resendSecrets', 'only', 'noAdopt'] as const;
const TUNING = ['concurrency', 'timeoutMs', 'pollIntervalMs', 'pollMaxIntervalMs', 'pollRate', 'pollListThreshold', 'webhookBatch'] as const;

function pick<K extends string>(o: Record<string, unknown>, keys: readonly K[]): Record<K, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Record<K, unknown>;
}

export function engineOptions(flat: FlatEngineOptions): EngineOptions {
  const all = flat as unknown as Record<string, unknown>;
  const rest = Object.fromEntries(Object.entries(all).filter(([k]) => ![...SOURCE, ...PLAN, ...TUNING].includes(k as never)));
  return {
    ...(rest as Omit<ReconcileOptions, 'source' | 'plan'> & { statePath: string }),
    source: pick(all, SOURCE) as unknown as SourceSettings,
    plan: pick(all, PLAN) as unknown as PlanOptions,
    tuning: pick(all, TUNING) as ApplyTuning,
  };
}
