/** Durations in flags are written like `500ms`, `30s`, `5m`, `1h`, `7d` (or combined: `1m30s`). */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(trimmed)) !== null) {
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    consumed = re.lastIndex;
  }
  if (trimmed === '' || consumed !== trimmed.length) {
    throw new Error(`invalid duration "${text}": write a number with a unit, e.g. 500ms, 30s, 5m, 1h`);
  }
  return Math.round(total);
}

/** The longest a Node timer waits (2^31-1 ms, 24.8 days): setTimeout fires a longer delay after about 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration a timer will wait for: longer than MAX_TIMER_MS is refused (it would fire at once, not late). */
export function parseTimerDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms > MAX_TIMER_MS) throw new Error(`${text.trim()}: must be at most 24d (the longest a timer can wait)`);
  return ms;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s ? `${m}m${s}s` : `${m}m`;
}
