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

export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;

  constructor(private readonly limit = 100_000) {}

  add(entry: Omit<RequestLogEntry, 'seq'>): void {
    this.entries.push({ seq: ++this.seq, ...entry });
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  list(): RequestLogEntry[] {
    return this.entries.map((e) => ({ ...e, query: { ...e.query } }));
  }

  clear(): void {
    this.entries = [];
  }
}
