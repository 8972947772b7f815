/**
 * A ServiceApi that counts the requests in flight and records when each call was made, on a clock: a test driving
 * govops with a ManualClock moves time only while nothing is in flight (trackApi holds the clock while busy), so what a
 * request observes is what the service held at the clock time it was sent.
 */
import type { ServiceApi } from '../../src/api/client-types.js';
import type { Clock } from '../../src/util/clock.js';

export interface Call {
  method: string;
  /** The first argument (an id, for the calls that take one). */
  arg: unknown;
  /** Clock time the call was made. */
  at: number;
}

export interface TrackedApi<T extends ServiceApi> {
  api: T;
  calls: Call[];
  busy(): boolean;
}

/** `clock`'s runUntil then moves time only while no call is in flight (when it can be held: ManualClock). */
export function trackApi<T extends ServiceApi>(inner: T, clock: Clock & { holdWhile?(busy: () => boolean): void }): TrackedApi<T> {
  let inFlight = 0;
  const calls: Call[] = [];
  const wrap = (target: ServiceApi): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const v = Reflect.get(t, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          const out = (v as (...a: unknown[]) => unknown).apply(t, args);
          if (prop === 'withSignal') return wrap(out as ServiceApi);
          if (!(out instanceof Promise)) return out;
          calls.push({ method: String(prop), arg: args[0], at: clock.now() });
          inFlight++;
          return out.finally(() => inFlight--);
        };
      },
    }) as T;
  const busy = (): boolean => inFlight > 0;
  clock.holdWhile?.(busy);
  return { api: wrap(inner), calls, busy };
}
