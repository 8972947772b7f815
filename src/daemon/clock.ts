/**
 * The loop's clock: the time of day and the timers that schedule retries and resyncs. The daemon uses the
 * system's; tests inject one they advance by hand, so what they observe never depends on a busy machine.
 */
export type TimerHandle = { readonly id: unknown };

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Run `fn` once after `ms`. The timer never keeps the process alive on its own (unref'd). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { id: t };
  },
  clearTimeout(handle) {
    clearTimeout(handle.id as NodeJS.Timeout);
  },
};
