/**
 * A clock the test moves by hand (src/daemon/clock.ts): `advance(ms)` runs every timer due by then, in order,
 * at its own time. What a test observes of retries and resyncs then never depends on how busy the machine is.
 */
import type { Clock, TimerHandle } from '../../src/daemon/clock.js';

export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id as number);
  }

  /** Move time forward by `ms`, running the timers that fall due (earliest first). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = end;
  }

  /** Milliseconds from now to each pending timer, soonest first. */
  dueIn(): number[] {
    return [...this.timers.values()].map((x) => x.at - this.t).sort((a, b) => a - b);
  }
}
