/** Checks of numeric flag values, shared by command actions. */
import { Option } from './commander.js';
import { UserError } from '../errors.js';
import type { ManualStepsMode } from '../plan/types.js';

/** A whole number >= min, or undefined when the flag was not given. */
export function parseCount(flag: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min) throw new UserError(`${flag} must be a whole number >= ${min}, got "${text}"`);
  return Number(text);
}

/** `--manual-steps require|trust` (env GOVOPS_MANUAL_STEPS): plan, apply, preview and run. */
export function manualStepsOption(): Option {
  return new Option(
    '--manual-steps <mode>',
    'manual-flow integrations (autoBootstrap false): "require" waits for the manifest\'s govops/manual-step acknowledgment of the platform script; "trust" writes at once (scripts run out of band)',
  )
    .choices(['require', 'trust'] satisfies ManualStepsMode[])
    .env('GOVOPS_MANUAL_STEPS')
    .default('require');
}

/**
 * `--no-adopt` (env GOVOPS_NO_ADOPT=true; false or empty: off, see boolean-env.ts): plan, apply, preview and run. commander names its value
 * `adopt`: false when given.
 */
export function noAdoptOption(): Option {
  return new Option(
    '--no-adopt',
    'do not adopt a live resource govops does not own that a manifest matches by natural key: the change is blocked (adoptions recorded by govops state adopt still apply)',
  ).env('GOVOPS_NO_ADOPT');
}
