/**
 * Runs a source's work one at a time. `run()` is the source's look (fetch + checkout, or scan): a call
 * made while a look is waiting to start joins it instead of queueing another (a burst of refresh
 * requests costs at most one extra look). `exclusive(fn)` runs other work that touches the revision
 * folders (retention) on the same chain, so it never overlaps a look that is writing a new folder.
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

  /** Run `fn` after everything queued so far and before anything queued later (never coalesced). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  /** Resolves when every run started so far has finished (never rejects). */
  settled(): Promise<void> {
    return this.chain;
  }
}
