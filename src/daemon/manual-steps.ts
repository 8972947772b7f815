/**
 * Logging of changes awaiting a manual step: once per revision and resource, not on every resync or
 * retry (the resync plans the same revision again and finds the same wait). A new revision, or a new
 * wait within one (say the live integration changed and a create now waits instead of an edit), is
 * logged again.
 */
import type { Logger } from 'pino';
import { isAwaitingManualStep } from '../plan/manual-steps.js';
import type { Plan } from '../plan/types.js';

export class ManualStepLog {
  private revision?: string;
  private seen = new Set<string>();

  /** Log the waits of `plan` (made from `revision`) not logged yet for that revision; returns how many. */
  report(revision: string, plan: Plan | undefined, logger: Logger): number {
    if (!plan) return 0;
    if (revision !== this.revision) {
      this.revision = revision;
      this.seen.clear();
    }
    let logged = 0;
    for (const c of plan.changes) {
      if (!isAwaitingManualStep(c)) continue;
      const gate = c.manualStep!;
      const key = `${c.resourceKind}/${c.name}\0${c.action}\0${gate.acknowledgment?.value ?? ''}\0${gate.reason ?? ''}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      logged++;
      logger.warn(
        {
          resource: `${c.resourceKind}/${c.name}`,
          action: c.action,
          revision,
          reason: gate.reason,
          commands: gate.scripts.map((s) => s.command),
          annotation: gate.acknowledgment?.line,
        },
        `awaiting manual step: ${c.resourceKind}/${c.name} is not ${c.action === 'delete' ? 'deleted' : c.action === 'create' ? 'created' : 'changed'} until the manifest acknowledges the platform script`,
      );
    }
    return logged;
  }
}
