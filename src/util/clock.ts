/**
 * The clock of the parts that wait: the time of day and the timers that schedule polls, backoffs, retries and
 * resyncs. Production uses the system's; tests inject one they advance by hand (test/helpers/clock.ts), so what
 * they observe never depends on how busy the machine is.
 *
 * Two readings: `now()` is the time of day (it jumps when the system's clock is set: an NTP step, a VM resumed), for
 * what is shown or sent (timestamps, an HTTP date's delay); `monotonic()` only moves forward, at the pace of the
 * timers, for every duration, deadline and order (docs/decisions.md, "Time: the wall clock for timestamps only").
 */
export type TimerHandle = { readonly id: unknown };

export interface Clock {
  /** Milliseconds since the epoch: the time of day, for timestamps shown or sent (it may jump either way). */
  now(): number;
  /** Milliseconds from an arbitrary origin that never goes back nor jumps: durations, deadlines, order. */
  monotonic(): number;
  /** Run `fn` once after `ms`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The system's time; a pending timer keeps the process alive (an apply waiting on a poll or a backoff). */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => ({ id: setTimeout(fn, ms) }),
  clearTimeout(handle) {
    clearTimeout(handle.id as NodeJS.Timeout);
  },
};

/** The system's time, with timers that never keep the process alive on their own (unref'd: the daemon's loop). */
export const backgroundClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { id: t };
  },
  clearTimeout: systemClock.clearTimeout,
};

/** The reason a sleep rejects with when its signal aborts (the caller turns it into its own error). */
export class SleepAborted extends Error {
  constructor() {
    super('sleep aborted');
    this.name = 'AbortError';
  }
}

/**
 * Sleep `ms` on `clock`. The signal ends the sleep at once with SleepAborted (already aborted: at once). Unlike
 * the system's timers, the sleep keeps the process alive only through whoever awaits it.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new SleepAborted());
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      reject(new SleepAborted());
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
