/**
 * The apply's concurrency slots: at most `concurrency` calls run at once; a waiting call of a higher priority
 * starts before any of a lower one, calls of one priority in the order they were added. What p-queue did for the
 * apply (the same order, the same moment a call starts), without its per-call events, interval bookkeeping and
 * sorted-array insertion: one promise per call (issue #26: 10,000 to 40,000 calls per large apply).
 */
/** The slot of a call running in `Slots.add`. */
export interface SlotLease {
  /**
   * Free the slot while `wait` runs (a wait on a transition: `--concurrency` bounds calls, not waits), then take one
   * again before going on, ahead of calls of a lower `priority`. Resolves or rejects as `wait` does, once a slot is held.
   */
  outside<T>(wait: () => Promise<T>, priority?: number): Promise<T>;
}

export class Slots {
  private running = 0;
  /** Waiting calls per priority, highest priority first; each a FIFO read from `head`. */
  private readonly levels: Array<{ priority: number; calls: Array<() => void>; head: number }> = [];
  private waiting = 0;
  private onIdleResolvers: Array<() => void> = [];

  /** @param becameIdle called each time the last running call ends with none waiting. */
  constructor(
    readonly concurrency: number,
    private readonly becameIdle?: () => void,
  ) {
    if (!(concurrency >= 1)) throw new RangeError(`concurrency must be at least 1 (got ${concurrency})`);
  }

  /** Calls running now. */
  get pending(): number {
    return this.running;
  }

  /** Calls waiting for a slot. */
  get size(): number {
    return this.waiting;
  }

  /** No call runs and none waits. */
  get idle(): boolean {
    return this.running === 0 && this.waiting === 0;
  }

  /**
   * Run `fn` in a slot (at once when one is free): resolves or rejects as it does; a synchronous throw is its
   * rejection. The slot is free again as soon as its promise settles.
   */
  add<T>(fn: (lease: SlotLease) => Promise<T>, options: { priority?: number } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        this.running++;
        let call: Promise<T>;
        try {
          call = fn(this.lease);
        } catch (err) {
          call = Promise.reject(err);
        }
        call.then(
          (value) => {
            resolve(value);
            this.release();
          },
          (err: unknown) => {
            reject(err);
            this.release();
          },
        );
      };
      if (this.running < this.concurrency && this.waiting === 0) start();
      else this.enqueue(options.priority ?? 0, start);
    });
  }

  /** One lease serves every call: what it frees and takes again is a count. */
  private readonly lease: SlotLease = {
    outside: async <T>(wait: () => Promise<T>, priority = 0): Promise<T> => {
      this.release();
      try {
        return await wait();
      } finally {
        await new Promise<void>((taken) => {
          const take = (): void => {
            this.running++;
            taken();
          };
          if (this.running < this.concurrency && this.waiting === 0) take();
          else this.enqueue(priority, take);
        });
      }
    },
  };

  /** Resolves once no call runs and none waits. */
  onIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise<void>((resolve) => this.onIdleResolvers.push(resolve));
  }

  private enqueue(priority: number, start: () => void): void {
    let i = 0;
    while (i < this.levels.length && this.levels[i]!.priority > priority) i++;
    let level = this.levels[i];
    if (level?.priority !== priority) {
      level = { priority, calls: [], head: 0 };
      this.levels.splice(i, 0, level);
    }
    level.calls.push(start);
    this.waiting++;
  }

  private release(): void {
    this.running--;
    while (this.running < this.concurrency && this.waiting > 0) this.dequeue()();
    if (this.idle) {
      this.becameIdle?.();
      const resolvers = this.onIdleResolvers;
      this.onIdleResolvers = [];
      for (const resolve of resolvers) resolve();
    }
  }

  private dequeue(): () => void {
    for (const level of this.levels) {
      if (level.head === level.calls.length) continue;
      const start = level.calls[level.head]!;
      level.calls[level.head++] = undefined as unknown as () => void;
      if (level.head === level.calls.length) {
        level.calls.length = 0;
        level.head = 0;
      }
      this.waiting--;
      return start;
    }
    throw new Error('apply bug: no call waiting for a slot');
  }
}
