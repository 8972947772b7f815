/**
 * Logging of the manifests' warnings of a revision the daemon accepts (a secret too short to be redacted, an
 * unknown config field sent and never compared, a credential written as a literal...): once per revision, not on
 * every resync or retry, which load the same revision again and find the same warnings. A rejected revision's
 * warnings are logged with its errors (report.ts, logRejected).
 */
import type { Logger } from 'pino';
import type { Diagnostic } from '../manifests/types.js';
import { formatDiagnostic } from '../reconcile/load.js';

export class ManifestWarningLog {
  private revision?: string;
  private seen = new Set<string>();

  /** Log the warnings of `diagnostics` (of `revision`) not logged yet for that revision; returns how many. */
  report(revision: string, diagnostics: readonly Diagnostic[] | undefined, logger: Logger): number {
    if (revision !== this.revision) {
      this.revision = revision;
      this.seen.clear();
    }
    let logged = 0;
    for (const d of diagnostics ?? []) {
      if (d.severity !== 'warning') continue;
      const text = formatDiagnostic(d);
      if (this.seen.has(text)) continue;
      this.seen.add(text);
      logged++;
      logger.warn({ revision, file: d.file, line: d.line, column: d.column }, text);
    }
    return logged;
  }
}
