/**
 * How a source's looks are going (a Git fetch, a directory scan), for /status: when it last looked, when it
 * last succeeded, and while it fails the error and since when. Pure bookkeeping; the time is given.
 */
export interface SourceHealth {
  /** When the last look finished (ISO). */
  lastAttemptAt?: string;
  /** When a look last succeeded (ISO). */
  lastSuccessAt?: string;
  /** Whether the last look succeeded. */
  ok?: boolean;
  /** While looks fail: the last error (redacted), when the failures began, how many in a row. */
  error?: string;
  failingSince?: string;
  consecutiveFailures: number;
}

export class HealthTracker {
  private health: SourceHealth = { consecutiveFailures: 0 };

  succeeded(at: Date): void {
    const iso = at.toISOString();
    this.health = { lastAttemptAt: iso, lastSuccessAt: iso, ok: true, consecutiveFailures: 0 };
  }

  failed(at: Date, error: string): void {
    const iso = at.toISOString();
    const h = this.health;
    this.health = {
      lastAttemptAt: iso,
      ...(h.lastSuccessAt ? { lastSuccessAt: h.lastSuccessAt } : {}),
      ok: false,
      error,
      failingSince: h.ok === false && h.failingSince ? h.failingSince : iso,
      consecutiveFailures: h.consecutiveFailures + 1,
    };
  }

  snapshot(): SourceHealth {
    return { ...this.health };
  }
}
