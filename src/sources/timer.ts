/** Interval with ±10% jitter, so many replicas don't fetch in lockstep. */
export function jittered(intervalMs: number, random: () => number = Math.random): number {
  const spread = intervalMs * 0.1;
  return Math.max(1, Math.round(intervalMs - spread + random() * 2 * spread));
}
