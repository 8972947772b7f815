/**
 * A clock the test moves by hand (src/util/clock.ts): `advance(ms)` runs every timer due by then, in order,
 * at its own time. What a test observes of retries, resyncs, polls and backoffs then never depends on how busy
 * the machine is.
 *
 * Against real I/O (a sandbox over HTTP, files), `runUntil` drives the code under test: it lets promises and I/O
 * run, and moves time to the next timer only when nothing else is left to do but wait for one. Time moves only
 * here, so every assertion made in the clock's milliseconds holds exactly, however slow the machine.
 *
 * Its monotonic reading is the timers' time (what `advance` moves); `stepWall(ms)` sets the time of day alone forward
 * or back (an NTP step, a VM resumed), as the system's clock can be, without moving timers or the monotonic reading.
 */
import type { Clock, TimerHandle } from '../../src/util/clock.js';

/** One turn of the event loop (every promise callback queued before it has run). */
const turn = (): Promise<void> => new Promise((ok) => setImmediate(ok));

export class ManualClock implements Clock {
  private t: number;
  /** What stepWall added to the time of day (the wall clock minus the timers' time). */
  private wallOffset = 0;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private readonly watchers = new Set<() => void>();
  private readonly holds = new Set<() => boolean>();

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.t = start;
  }

  now(): number {
    return this.t + this.wallOffset;
  }

  monotonic(): number {
    return this.t;
  }

  /** Set the time of day alone `ms` forward (negative: back), as an NTP step does; timers and monotonic() stay. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    for (const w of [...this.watchers]) w();
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id as number);
  }

  /** Move time forward by `ms`, running the timers that fall due (earliest first). */
  advance(ms: number): void {
    this.advanceTo(this.t + ms);
  }

  /** Move time forward to `end` (the timers' time: monotonic(), epoch ms until stepWall), running the timers that fall due (earliest first). */
  advanceTo(end: number): void {
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = Math.max(this.t, end);
  }

  /** Milliseconds from now to each pending timer, soonest first. */
  dueIn(): number[] {
    return [...this.timers.values()].map((x) => x.at - this.t).sort((a, b) => a - b);
  }

  /** `runUntil` moves time only while `busy` is false (e.g. no request in flight: helpers/tracked-api.ts). */
  holdWhile(busy: () => boolean): void {
    this.holds.add(busy);
  }

  /** Resolves once a timer is pending (at once when one is): the code under test is waiting on the clock. */
  untilTimer(): Promise<void> {
    if (this.timers.size > 0) return Promise.resolve();
    return new Promise((ok) => {
      const w = (): void => {
        this.watchers.delete(w);
        ok();
      };
      this.watchers.add(w);
    });
  }

  /**
   * Drive the code under test until `until` settles (a promise) or holds (a predicate): let promises and I/O run;
   * when a timer is pending and nothing holds time (holdWhile), move time to the earliest one and run it; else
   * wait for I/O (real time, no clock time). Returns the promise's value (or throws its error). A predicate that
   * never holds fails after `maxSteps` clock steps (waiting for I/O forever is left to the test's timeout).
   */
  runUntil<T>(until: Promise<T>, opts?: { maxSteps?: number }): Promise<T>;
  runUntil(until: () => boolean, opts?: { maxSteps?: number }): Promise<void>;
  async runUntil<T>(until: Promise<T> | (() => boolean), opts: { maxSteps?: number } = {}): Promise<T | undefined> {
    let settled = false;
    let value: T | undefined;
    let error: { err: unknown } | undefined;
    if (typeof until !== 'function') {
      until.then(
        (v) => ((settled = true), (value = v)),
        (err: unknown) => ((settled = true), (error = { err })),
      );
    }
    const done = typeof until === 'function' ? until : () => settled;
    const maxSteps = opts.maxSteps ?? 100_000;
    for (let steps = 0; ; ) {
      for (let i = 0; i < 3; i++) await turn();
      if (done()) break;
      if (this.timers.size === 0 || [...this.holds].some((busy) => busy())) {
        // waiting on I/O (a request, a file): real time passes, the clock's does not
        await new Promise((ok) => setTimeout(ok, 1));
        continue;
      }
      if (++steps > maxSteps) throw new Error(`runUntil: the condition does not hold after ${maxSteps} clock steps`);
      this.advanceTo(Math.min(...[...this.timers.values()].map((x) => x.at)));
    }
    if (error) throw error.err;
    return value;
  }
}
