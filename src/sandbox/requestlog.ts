/** The request log: every non-control request the sandbox answered, so tests can assert exact calls. */
export interface RequestLogEntry {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Response status; 0 when the connection was dropped by fault injection. */
  status: number;
  time: string;
  durationMs: number;
  /** The request's User-Agent (govops sends `govops/<version> (<identity>)`: which replica wrote). */
  userAgent?: string;
}

/** The last `limit` requests (default 100,000). */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;

  constructor(private readonly limit = 100_000) {}

  add(entry: Omit<RequestLogEntry, 'seq'>): void {
    this.entries.push({ seq: ++this.seq, ...entry });
    // Trimmed once it holds twice the limit, not at every request past it: dropping the oldest entry of a full log
    // moved all the others, for each request (a sandbox past 100,000 requests spent most of its time there).
    if (this.entries.length >= 2 * this.limit) this.entries = this.entries.slice(-this.limit);
  }

  list(): RequestLogEntry[] {
    const from = Math.max(0, this.entries.length - this.limit);
    return this.entries.slice(from).map((e) => ({ ...e, query: { ...e.query } }));
  }

  clear(): void {
    this.entries = [];
  }
}
