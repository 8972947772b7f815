/**
 * Runs a task one at a time. A call made while a run is waiting to start joins that run instead of
 * queueing another (a burst of refresh requests costs at most one extra scan or fetch).
 */
export class CoalescingRunner {
  private chain: Promise<void> = Promise.resolve();
  private queued?: Promise<void>;

  constructor(private readonly task: () => Promise<void>) {}

  run(): Promise<void> {
    if (this.queued) return this.queued;
    const p = this.chain.then(() => {
      this.queued = undefined;
      return this.task();
    });
    this.queued = p;
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** Resolves when every run started so far has finished (never rejects). */
  settled(): Promise<void> {
    return this.chain;
  }
}
