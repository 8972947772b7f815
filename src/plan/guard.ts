/**
 * The mass-deletion guard (pure), on by default. Deleting many managed resources at once is far more
 * often a broken checkout, a wrong `--path` or a bad merge than an intention, so:
 * - an empty manifest set never prunes (like Argo CD's `allowEmpty`) unless `--allow-empty`;
 * - without `--max-deletes`, a plan may delete at most 25% of the managed resources (at least one);
 * - with `--max-deletes N`, at most N deletes and replaces.
 * A refused plan keeps its other changes: only the deletes (and, over `--max-deletes`, the replaces)
 * are blocked, with a message naming the flags that allow them.
 *
 * Every planned delete counts, whether it can be carried out now or waits (for a manual step, delete
 * credentials...): a plan is judged by what it means to remove, so waiting deletes never let the others
 * through, and the same plan is refused alike with `--manual-steps trust` or `require`.
 */
import { blocked } from './notes.js';
import type { DeletionRefusal, PlanChange, PlanOptions } from './types.js';
import { counted } from '../util/plural.js';

/** Default share of the managed resources one plan may delete. */
export const DEFAULT_MAX_DELETE_SHARE = 0.25;

/** Deletes that remove a managed resource from the service (not duplicates, not state-only forgets), blocked or not. */
function isPrune(c: PlanChange): boolean {
  return c.action === 'delete' && !c.goneFromService && c.duplicateOf === undefined;
}

/** Deletes and replaces of live resources, blocked or not. */
function isDestructive(c: PlanChange): boolean {
  return (c.action === 'delete' && !c.goneFromService) || c.action === 'replace';
}

/**
 * Check a plan's deletes against the guard. Returns the refusal (and marks the held-back changes
 * blocked), or undefined when the plan may go ahead.
 */
export function guardDeletions(
  changes: PlanChange[],
  ctx: { desiredCount: number; managed: number; options: PlanOptions },
): DeletionRefusal | undefined {
  const { options, managed } = ctx;
  const prunes = changes.filter(isPrune);
  let refusal: DeletionRefusal | undefined;
  let held: PlanChange[] = [];
  if (ctx.desiredCount === 0 && prunes.length > 0 && !options.allowEmpty) {
    held = prunes;
    refusal = {
      rule: 'empty',
      refused: prunes.length,
      managed,
      limit: 0,
      message:
        `the manifest set is empty: refusing to delete ${counted(prunes.length, 'managed resource')} (an empty set usually ` +
        `means a broken checkout or a wrong path). To delete them all, run with --allow-empty --max-deletes ${prunes.length}`,
    };
  } else if (options.maxDeletes !== undefined) {
    const destructive = changes.filter(isDestructive);
    if (destructive.length > options.maxDeletes) {
      held = destructive;
      refusal = {
        rule: 'max-deletes',
        refused: destructive.length,
        managed,
        limit: options.maxDeletes,
        message:
          `the plan deletes or replaces ${destructive.length} resources, more than --max-deletes ${options.maxDeletes}: ` +
          `none of them is carried out. To allow it, run with --max-deletes ${destructive.length}`,
      };
    }
  } else {
    const limit = Math.max(1, Math.floor(managed * DEFAULT_MAX_DELETE_SHARE));
    if (prunes.length > limit) {
      held = prunes;
      refusal = {
        rule: 'share',
        refused: prunes.length,
        managed,
        limit,
        message:
          `the plan deletes ${prunes.length} of ${managed} managed resources, more than the default limit ` +
          `(${DEFAULT_MAX_DELETE_SHARE * 100}%: ${limit}): none of them is deleted. Check the manifests; to allow it, ` +
          `run with --max-deletes ${prunes.length}`,
      };
    }
  }
  if (!refusal) return undefined;
  // A change blocked already (awaiting a manual step...) keeps its own reason: it is counted, and not carried out either way.
  for (const c of held) c.blocked ??= blocked('deletion-guard', `refused by the mass-deletion guard: ${refusal.message}`);
  return refusal;
}
