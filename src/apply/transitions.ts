/**
 * What govops learned about how long the service's transitions take (creating, editing, deleting), per
 * integration type and operation: a window of the latest observed durations, whose median is where the
 * poller aims an integration's first status poll. Kept in the state file (`transitions`), so every run
 * starts from what the previous ones saw, and follows the service when it gets slower or faster.
 */
export type Operation = 'create' | 'update' | 'delete';

/** Samples kept per key (the newest ones). */
export const TRANSITION_WINDOW = 15;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function transitionKey(type: string | undefined, op: Operation): string {
  return `${type ?? 'unknown'}/${op}`;
}

export class TransitionStats {
  private readonly samples = new Map<string, number[]>();
  private readonly cache = new Map<string, number | undefined>();
  private changed = false;

  constructor(initial?: Record<string, number[]>) {
    for (const [k, xs] of Object.entries(initial ?? {})) {
      const ok = xs.filter((x) => Number.isFinite(x) && x >= 0).slice(-TRANSITION_WINDOW);
      if (ok.length) this.samples.set(k, ok);
    }
  }

  /** Whether anything was recorded since construction. */
  get dirty(): boolean {
    return this.changed;
  }

  record(key: string, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    const xs = this.samples.get(key) ?? [];
    xs.push(Math.round(ms));
    if (xs.length > TRANSITION_WINDOW) xs.splice(0, xs.length - TRANSITION_WINDOW);
    this.samples.set(key, xs);
    this.cache.clear();
    this.changed = true;
  }

  /**
   * The expected duration of a transition of this key: the median of its samples; without any, the
   * median over every type's samples of the same operation; undefined when nothing is known.
   */
  estimate(key: string): number | undefined {
    if (this.cache.has(key)) return this.cache.get(key);
    let xs = this.samples.get(key);
    if (!xs?.length) {
      const op = key.slice(key.lastIndexOf('/'));
      xs = [...this.samples].filter(([k]) => k.endsWith(op)).flatMap(([, v]) => v);
    }
    const e = xs.length ? median(xs) : undefined;
    this.cache.set(key, e);
    return e;
  }

  toJSON(): Record<string, number[]> {
    return Object.fromEntries([...this.samples].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, [...v]]));
  }
}
