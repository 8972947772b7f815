/** Debounced, serialised saves of the sandbox state to `--data FILE` (atomic writes). */
import type { Logger } from '../log.js';
import { readJson, writeJsonAtomic } from './persist.js';

export const DATA_VERSION = 1;

export interface SandboxData {
  version: number;
  savedAt: string;
  integrations: unknown;
  webhooks: unknown;
  /** Absent in data files of sandboxes before data sources. */
  dataSources?: unknown;
}

export class Persister {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** The write waiting for the one in progress (it has not taken its snapshot yet). */
  private queued: Promise<void> | undefined;
  /** Changes are noted only once the loaded state is in place (`arm`): a refused file is never written over. */
  private armed = false;

  constructor(
    private readonly file: string | undefined,
    private readonly snapshot: () => SandboxData,
    private readonly logger: Logger,
    private readonly debounceMs = 100,
  ) {}

  /** Note a change: the state is written shortly after (changes in a burst are written once). */
  changed(): void {
    if (!this.file || !this.armed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => undefined); // logged by flush; the next change or the stop tries again
    }, this.debounceMs);
    this.timer.unref?.();
  }

  /** Save nothing more (a sandbox that failed to start): a pending save is dropped, later changes are ignored. */
  cancel(): void {
    this.armed = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The loaded state is in place: changes from now on are saved. */
  arm(): void {
    this.armed = true;
  }

  /**
   * Write the current state now (after any write in progress). Rejects when the write fails (also logged), so a
   * stop or `save()` that could not save says so; a failed write does not stop the later ones.
   */
  flush(): Promise<void> {
    if (!this.file) return Promise.resolve();
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // A write that has not started yet takes the state when it starts: later saves join it rather than queue
    // more (a large state written for seconds, changed meanwhile, queued a full write per debounce).
    if (this.queued) return this.queued;
    const file = this.file;
    const write = this.chain.then(() => {
      this.queued = undefined;
      return writeJsonAtomic(file, this.snapshot());
    });
    this.queued = write;
    this.chain = write.catch((err: unknown) => this.logger.error({ err, file }, 'cannot save sandbox state'));
    return write;
  }

  async load(): Promise<SandboxData | undefined> {
    if (!this.file) return undefined;
    const data = (await readJson(this.file)) as SandboxData | undefined;
    if (data === undefined) return undefined;
    if (typeof data !== 'object' || data === null || data.version !== DATA_VERSION) {
      throw new Error(`sandbox data file ${this.file} has an unknown format (expected version ${DATA_VERSION})`);
    }
    return data;
  }
}
