/**
 * What govops learned about how long the service's transitions take (creating, editing, deleting), per
 * integration type and operation. Polling never sees the moment a transition ends, only brackets around
 * it: an integration still transitional `lo` ms after its write was accepted and settled at `hi` ms. The
 * expected duration is the value that best fits the latest brackets (least total distance to them: the
 * median of all their ends). It lies inside every bracket when they overlap, so a few applies whose
 * polls happened at different moments (a pipelined apply's integrations start at different times) pin it
 * down, and it follows the service when it gets slower or faster. Kept in the state file (`transitions`).
 */
export type Operation = 'create' | 'update' | 'delete';
export type Bracket = [lo: number, hi: number];

/** Brackets kept per key (the newest ones). */
export const TRANSITION_WINDOW = 32;

/** Median of all ends of the brackets: the point with the least total distance to them. */
export function bestFit(brackets: readonly Bracket[]): number | undefined {
  if (brackets.length === 0) return undefined;
  // A typed array sorts numbers without a comparator call per pair (it runs after every settled poll).
  const ends = new Float64Array(brackets.length * 2);
  for (let i = 0; i < brackets.length; i++) {
    ends[2 * i] = brackets[i]![0];
    ends[2 * i + 1] = brackets[i]![1];
  }
  ends.sort();
  const m = ends.length >> 1; // an even count: the two middle ends
  return (ends[m - 1]! + ends[m]!) / 2;
}

export function transitionKey(type: string | undefined, op: Operation): string {
  return `${type ?? 'unknown'}/${op}`;
}

export class TransitionStats {
  private readonly brackets = new Map<string, Bracket[]>();
  private readonly cache = new Map<string, number | undefined>();
  private changed = false;

  constructor(initial?: Record<string, ReadonlyArray<readonly [number, number]>>) {
    for (const [k, xs] of Object.entries(initial ?? {})) {
      const ok = xs.filter(([lo, hi]) => Number.isFinite(lo) && Number.isFinite(hi) && lo >= 0 && lo <= hi).slice(-TRANSITION_WINDOW);
      if (ok.length) this.brackets.set(k, ok.map(([lo, hi]) => [lo, hi]));
    }
  }

  /** Whether anything was recorded since construction. */
  get dirty(): boolean {
    return this.changed;
  }

  /** A transition of this key was still under way `lo` ms after it began and over at `hi` ms. */
  record(key: string, lo: number, hi: number): void {
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) return;
    const a = Math.max(0, Math.round(Math.min(lo, hi)));
    const b = Math.max(a, Math.round(hi));
    const xs = this.brackets.get(key) ?? [];
    xs.push([a, b]);
    if (xs.length > TRANSITION_WINDOW) xs.splice(0, xs.length - TRANSITION_WINDOW);
    this.brackets.set(key, xs);
    this.cache.clear();
    this.changed = true;
  }

  /**
   * The expected duration of a transition of this key; without any observation of it, the same over
   * every type's observations of the same operation; undefined when nothing is known.
   */
  estimate(key: string): number | undefined {
    if (this.cache.has(key)) return this.cache.get(key);
    let xs = this.brackets.get(key);
    if (!xs?.length) {
      const op = key.slice(key.lastIndexOf('/'));
      xs = [...this.brackets].filter(([k]) => k.endsWith(op)).flatMap(([, v]) => v);
    }
    const e = bestFit(xs);
    this.cache.set(key, e);
    return e;
  }

  toJSON(): Record<string, Bracket[]> {
    return Object.fromEntries([...this.brackets].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, v.map(([lo, hi]): Bracket => [lo, hi])]));
  }
}
