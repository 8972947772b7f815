/**
 * The settings objects of a reconcile, each built once from commander's flags and passed down whole: where the
 * manifests come from (`SourceSettings`), the planner's options (`PlanOptions`), and the apply tuning
 * (`ApplyTuning`, apply-options.ts). `plan`, `apply`, `preview` and `run` build them here, nowhere else.
 */
import type { ManualStepsMode, PlanOptions } from '../plan/types.js';
import { parseTargets } from '../plan/target.js';
import type { SavedPlanOptions } from '../reconcile/saved-plan.js';
import type { SourceSettings } from '../reconcile/types.js';
import { parseCount } from './flags.js';
import type { SecretFlags } from './secret-options.js';
import { secretScopeFromFlags } from './secret-scope.js';
import { stdinStream } from './stdin.js';

/** The flags that decide a plan (plan, apply, preview, run; run has no --only nor --resend-secrets). */
export interface PlanSettingFlags {
  prune?: boolean;
  allowReplace?: boolean;
  maxDeletes?: string;
  allowEmpty?: boolean;
  resendSecrets?: boolean;
  manualSteps?: ManualStepsMode;
  only?: string[];
  /** commander's name for `--no-adopt` (or GOVOPS_NO_ADOPT): false when given. */
  adopt?: boolean;
}

/**
 * The planner's options from the flags, in their one normal form (the form a saved plan records): the switches
 * off are left out, `manualSteps` is always there. A bad --max-deletes or --only is a usage error, before
 * anything is read.
 */
export function planSettingsFrom(flags: PlanSettingFlags): PlanOptions {
  const maxDeletes = parseCount('--max-deletes', flags.maxDeletes);
  if (flags.only?.length) parseTargets(flags.only);
  const { adopt, ...rest } = flags;
  return planSettings({ ...rest, maxDeletes, noAdopt: adopt === false });
}

/** The normal form of plan options read from anywhere (flags, a saved plan's file). */
function planSettings(o: Omit<PlanSettingFlags, 'maxDeletes' | 'adopt'> & { maxDeletes?: number | undefined; noAdopt?: boolean | undefined }): PlanOptions {
  const out: PlanOptions = { prune: Boolean(o.prune), allowReplace: Boolean(o.allowReplace), manualSteps: o.manualSteps === 'trust' ? 'trust' : 'require' };
  if (o.resendSecrets) out.resendSecrets = true;
  if (o.maxDeletes !== undefined) out.maxDeletes = o.maxDeletes;
  if (o.allowEmpty) out.allowEmpty = true;
  if (o.noAdopt === true) out.noAdopt = true;
  if (o.only?.length) out.only = o.only;
  return out;
}

/** The plan options a saved plan fixes (`apply FILE`), read from its file. */
export function savedPlanSettings(o: SavedPlanOptions): PlanOptions {
  return planSettings({
    prune: o.prune,
    allowReplace: o.allowReplace,
    resendSecrets: o.resendSecrets,
    maxDeletes: typeof o.maxDeletes === 'number' ? o.maxDeletes : undefined,
    allowEmpty: o.allowEmpty,
    noAdopt: o.noAdopt,
    only: Array.isArray(o.only) ? o.only : undefined,
    manualSteps: o.manualSteps,
  });
}

/** Where a one-shot command reads its manifests: the paths given (default `.`) under the working folder, `-` on standard input. */
export function sourceSettingsFrom(paths: string[], flags: SecretFlags, root = process.cwd()): SourceSettings {
  const list = paths.length ? paths : ['.'];
  return { root, paths: list, ...stdinStream(list), secretScope: secretScopeFromFlags(flags) };
}
