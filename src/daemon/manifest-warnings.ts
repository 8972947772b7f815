/**
 * Logging of the warnings of a revision the daemon accepts, once per revision (a resync or retry loads and plans the
 * same revision again and finds the same warnings; a new revision says them again):
 * - the manifests' (`govops validate`'s): a secret too short to be redacted, an unknown config field sent and never
 *   compared, a credential written as a literal... A rejected revision's are logged with its errors (report.ts,
 *   logRejected).
 * - the plan's (`govops plan` prints them): a managed resource whose manifest is gone and that is not pruned, a
 *   webhook that merely shares a managed one's name, a `govops/delete` not carried out, a stale record forgotten...
 *   The mass-deletion guard's and "data sources not supported" are logged where they are handled (daemon.ts).
 */
import type { Logger } from 'pino';
import type { Diagnostic } from '../manifests/types.js';
import type { PlanWarning } from '../plan/notes.js';
import { formatDiagnostic } from '../reconcile/load.js';

/** Plan warnings the daemon logs elsewhere, with more to say. */
const LOGGED_ELSEWHERE: ReadonlySet<string> = new Set(['deletion-guard', 'data-sources-unsupported']);

export class ManifestWarningLog {
  private revision?: string;
  private seen = new Set<string>();

  /** Log the warnings (of `revision`) not logged yet for that revision; returns how many. */
  report(
    revision: string,
    found: { diagnostics?: readonly Diagnostic[]; planWarnings?: readonly PlanWarning[] },
    logger: Logger,
  ): number {
    if (revision !== this.revision) {
      this.revision = revision;
      this.seen.clear();
    }
    let logged = 0;
    const once = (key: string): boolean => {
      if (this.seen.has(key)) return false;
      this.seen.add(key);
      logged++;
      return true;
    };
    for (const d of found.diagnostics ?? []) {
      if (d.severity !== 'warning') continue;
      const text = formatDiagnostic(d);
      if (once(`manifest\0${text}`)) logger.warn({ revision, file: d.file, line: d.line, column: d.column }, text);
    }
    for (const w of found.planWarnings ?? []) {
      if (LOGGED_ELSEWHERE.has(w.code)) continue;
      const resource = w.resource ? `${w.resource.kind}/${w.resource.name}` : undefined;
      if (once(`plan\0${w.code}\0${resource ?? ''}\0${w.message}`)) logger.warn({ revision, code: w.code, ...(resource ? { resource } : {}) }, w.message);
    }
    return logged;
  }
}
