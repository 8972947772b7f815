/**
 * The govops state in PostgreSQL: the same records as the state file (resources with their pending
 * intents, fingerprint key, learned transition times, any other state field), one row per resource, so
 * recording one change is one small transaction (O(1), no rewrite of the whole state). One `PgState` per
 * (database, state key) in a process, sharing one connection pool per database.
 *
 * While this process holds the state key's lock (an advisory lock, held by one connection), every write
 * goes through that connection: if it breaks, the lock is gone and so is the right to write, and the
 * write fails instead of landing unlocked. With a fence (the daemon's leader term), every write
 * transaction first checks the lease still names this replica with that term and has not expired:
 * a deposed leader's writes are refused (GOVOPS_STATE_FENCED).
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ErrorCode, GovopsError, UserError } from '../../errors.js';
import { checkResource, cleanTransitions, digestText, newState, serializeState, withKeyedIdentities } from '../store.js';
import { READABLE_STATE_VERSIONS, STATE_VERSION, type GovopsState, type JournalEntry, type ManagedResource } from '../types.js';
import type { LockOptions, StateDeadline, StateLock } from '../lock.js';
import { formatDuration } from '../../util/duration.js';
import { parsePgLocation, type PgLocation } from '../location.js';
import { LOCK_CLASS, SCHEMA, migrate } from './schema.js';

export interface Fence {
  identity: string;
  term: number;
}

/** Who holds a lock: shown to a writer that waits or fails. */
export interface PgLockHolder {
  pid: number;
  hostname: string;
  command: string;
  since: string;
  /** A daemon replica's identity (set while a fence is): its lock may be broken once it no longer leads. */
  identity?: string;
}

type Queryable = pg.PoolClient | pg.Client;

interface PoolEntry {
  pool: pg.Pool;
  ready?: Promise<void>;
  /** The connection migrating the schema (ended when a caller's deadline passes while it waits). */
  migrating?: pg.PoolClient;
  /** Ends the connection being opened for the migration, while it is (a caller's deadline passed meanwhile). */
  abandon?: () => void;
}

const pools = new Map<string, PoolEntry>();

/**
 * How long the server lets a govops session sit idle inside a transaction before ending it. govops' own
 * transactions never wait between statements (no think time), so only a stalled or frozen process reaches it;
 * it bounds how long such a process can block a takeover (shorter than the default lease, 15s).
 */
export const IDLE_IN_TRANSACTION_MS = 5_000;
/** A query that gets no answer within this long fails (client side): a half-open connection is not waited on for ever. */
export const QUERY_TIMEOUT_MS = 60_000;

/** PostgreSQL error classes meaning "cannot talk to the server now" (08 connection, 57P admin shutdown, 53 resources). */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (/^(08|57P|53)/.test(code) || /^E[A-Z]+$/.test(code))) return true;
  const msg = err instanceof Error ? err.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|timeout exceeded when trying to connect|Query read timeout/i.test(msg);
}

/**
 * Refusals that pass by themselves (SQLSTATE): 25006 a read-only session (a failover that left the URL on a node that
 * is, or is becoming, a standby), 57014 a statement cancelled (a statement_timeout), 55P03 a lock_timeout, 40001 and
 * 40P01 a serialization failure or deadlock (a hot standby's conflict). Not the URL's fault: worth another try.
 */
function isPassingRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '25006' || code === '57014' || code === '55P03' || code === '40001' || code === '40P01';
}

/**
 * A connection not to be used again: broken, or in a read-only session (a pooled session on a node that became a
 * standby stays read-only: given out again, it refused every write after the primary was back).
 */
function isUnusable(err: unknown): boolean {
  return isConnectionError(err) || (err as { code?: unknown } | null)?.code === '25006';
}

/** A query that got no answer within its timeout (the driver's `query_timeout`, or the holder's deadline): the server may still be running it. */
function isUnanswered(err: unknown): boolean {
  return (err instanceof Error && /Query read timeout/.test(err.message)) || cutAtDeadline.has(err as object);
}

/** The errors of queries cut at the holder's deadline (`within`): their connection is ended, like an unanswered one's. */
const cutAtDeadline = new WeakSet<object>();

/**
 * Run `work` within the deadline `d` (none: as it is). Not started when the deadline has passed (GOVOPS_SETTLE_TIMEOUT);
 * unanswered at it, given up (GOVOPS_STATE_UNAVAILABLE, marked `cutAtDeadline`) and `onLate(work)` called, which ends
 * the connection the work holds (or will be given: one still being opened is ended by `connectWithin`). Transient, both.
 * `what` tells, at the deadline, whether a connection was still being opened or a query ran: the message says which.
 */
function within<T>(
  d: StateDeadline | undefined,
  loc: PgLocation,
  work: () => Promise<T>,
  onLate: (late: Promise<T>) => void,
  what: () => 'query' | 'connect' = () => 'query',
): Promise<T> {
  if (!d) return work();
  const left = d.at - d.clock.monotonic();
  const limit = `the apply's --timeout (${formatDuration(d.timeoutMs)})`;
  if (left <= 0) {
    return Promise.reject(
      new UserError(`${limit} has passed: nothing more is read from or written to the PostgreSQL state (${loc.display})`, 'run the apply again (with a longer --timeout if it needs one)', {
        code: ErrorCode.settleTimeout,
      }),
    );
  }
  const running = work();
  return new Promise<T>((resolve, reject) => {
    const timer = d.clock.setTimeout(() => {
      const err =
        what() === 'connect'
          ? new UserError(
              `no connection to the PostgreSQL state (${loc.display}) was open within ${limit}: the connection being opened was ended, nothing more is read or written`,
              'the database does not let the connection in (a partition, a server or proxy that accepts and never answers, its connection limit reached): check it, then run the apply again; what was recorded before stands',
              { code: ErrorCode.stateUnavailable },
            )
          : new UserError(
              `the PostgreSQL state (${loc.display}) did not answer within ${limit}: the query was given up, its transaction rolled back, nothing more is written`,
              'the database hangs or waits (a partition, a lock another session holds): check it, then run the apply again; every write to the state is one transaction, so what was recorded before stands',
              { code: ErrorCode.stateUnavailable },
            );
      cutAtDeadline.add(err);
      onLate(running);
      reject(err);
    }, left);
    running.then(
      (v) => {
        d.clock.clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        d.clock.clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** A connection the deadline gave up on: ended (an active query: its socket destroyed), or released broken once opened. */
const endLate = (c: Queryable) => (): void => void c.end().catch(() => undefined);
const dropLate = (late: Promise<{ release: (broken?: Error) => void } | pg.PoolClient>): void =>
  void late.then(
    (x) => ('query' in x ? (x as pg.PoolClient).release(true) : x.release(new Error('given up at the deadline'))),
    () => undefined,
  );

/** The connections the pool begins opening during one `pool.connect()` call (set for the length of that call only). */
let opening: pg.Client[] | undefined;

/** The pool's client class: one the pool begins opening for a connect under a deadline is noted (`connecting`). */
class NotedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    opening?.push(this);
  }
}

/**
 * `pool.connect()`, and its `abandon` for the deadline: the connection the pool began opening for it (none when an
 * idle one was handed out, or the pool is full and the call waits) has its socket destroyed if it is still opening,
 * as the pool's own connect timeout does. Left to that timeout (5 s), a server that accepts and never answers kept
 * the process alive that long past the apply's --timeout.
 */
function connecting(pool: pg.Pool): { client: Promise<pg.PoolClient>; abandon: () => void } {
  const began: pg.Client[] = [];
  opening = began;
  let client: Promise<pg.PoolClient>;
  try {
    client = pool.connect();
  } finally {
    opening = undefined;
  }
  const abandon = (): void => {
    for (const c of began) {
      const open = c as unknown as { _connected?: boolean; connection?: { stream?: { destroy(): void } } };
      if (!open._connected) open.connection?.stream?.destroy();
    }
  };
  return { client, abandon };
}

/** A connection from the pool within the deadline `d`: given up at it, one still being opened for it is ended then. */
function connectWithin<T extends { release: (broken?: Error) => void } | pg.PoolClient>(
  d: StateDeadline | undefined,
  loc: PgLocation,
  connect: (began: (abandon: () => void) => void) => Promise<T>,
): Promise<T> {
  let abandon = (): void => undefined;
  return within(
    d,
    loc,
    () => connect((a) => (abandon = a)),
    (late) => {
      abandon();
      dropLate(late);
    },
    () => 'connect',
  );
}

/**
 * After a query that got no answer, the connection is ended (its socket destroyed): the driver keeps it busy with that
 * query, and a query after it (the lock's release) waited a query timeout of its own behind it. On the
 * lock's connection the lock goes with it (its writes then fail at once, GOVOPS_STATE_UNAVAILABLE). Returns `err`.
 */
function dropUnanswered(c: Queryable, err: unknown): unknown {
  if (isUnanswered(err)) void c.end().catch(() => undefined);
  return err;
}

/** A driver error as a govops error with a code: unreachable = transient, refused privileges = terminal. */
export function stateDbError(loc: PgLocation, err: unknown): GovopsError {
  if (err instanceof GovopsError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '42501') {
    return new UserError(`the PostgreSQL state (${loc.display}) refused: ${msg}`, 'grant the privileges listed in docs/deploy.md ("PostgreSQL state: privileges")', {
      code: ErrorCode.stateRefused,
    });
  }
  if (isConnectionError(err) || isPassingRefusal(err)) {
    return new UserError(`the PostgreSQL state (${loc.display}) is unavailable: ${msg}`, 'check the database is up and reachable (the daemon retries by itself; run a one-off command again once it answers)', {
      code: ErrorCode.stateUnavailable,
    });
  }
  // Not an outage (a wrong password, a missing database, a refused statement): said so, not "retries by itself".
  return new UserError(`the PostgreSQL state (${loc.display}) refused: ${msg}`, 'check the state URL (user, password, database) and the privileges listed in docs/deploy.md', {
    code: ErrorCode.stateRefused,
  });
}

/**
 * U+0000 in a stored body: jsonb (and text) cannot hold it ("unsupported Unicode escape sequence"), and a name may have
 * one (a webhook's spec.name written "a\\0b", the pending create's key). A body holding one is stored with each string's
 * U+0000 as NUL_ESC '0' and NUL_ESC itself as NUL_ESC NUL_ESC (a private-use character), marked NUL_MARK; read back, a
 * marked body is decoded. Every other body is stored as it is (the file state's JSON text holds U+0000 as it is).
 */
const NUL_ESC = '\ue000';
const NUL_MARK = '$govopsNul';

function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [f(k), mapStrings(x, f)]));
  return v;
}

const escapeNul = (s: string): string => (s.includes('\u0000') || s.includes(NUL_ESC) ? s.replaceAll(NUL_ESC, NUL_ESC + NUL_ESC).replaceAll('\u0000', `${NUL_ESC}0`) : s);
const unescapeNul = (s: string): string => (s.includes(NUL_ESC) ? s.replace(/\ue000([\ue0000])/g, (_m, c: string) => (c === '0' ? '\u0000' : NUL_ESC)) : s);

/** A body as the JSON text stored in a jsonb column (see NUL_MARK). */
function storedJson(value: object): string {
  const text = JSON.stringify(value);
  // JSON.stringify writes U+0000 as this escape (a literal backslash before it is doubled: then the check is only wasted)
  if (!text.includes('\\u0000')) return text;
  return JSON.stringify({ ...(mapStrings(value, escapeNul) as object), [NUL_MARK]: true });
}

/** A body read from a jsonb column, as it was given to storedJson. */
function readJson<T>(body: T): T {
  if (body === null || typeof body !== 'object' || (body as Record<string, unknown>)[NUL_MARK] !== true) return body;
  const { [NUL_MARK]: _mark, ...rest } = mapStrings(body, unescapeNul) as Record<string, unknown>;
  return rest as T;
}

function commandName(): string {
  const sub = process.argv[2];
  return `govops${sub && /^[a-z][a-z-]*$/.test(sub) ? ` ${sub}` : ''}`;
}

export class PgState {
  readonly loc: PgLocation;
  private readonly entry: PoolEntry;
  /** The deadline of the lock's holder (an apply's --timeout): no query of this state outlives it while held. */
  private deadline?: StateDeadline;
  /** The lock's connection while this process holds the state key's lock. */
  private held?: pg.PoolClient;
  private chain: Promise<unknown> = Promise.resolve();
  fence?: Fence;
  /**
   * Whether a lock held by `holder` may be broken (its session terminated) instead of waited for: the leader
   * breaks the lock of a deposed replica (a replica frozen while it held it would otherwise keep it forever).
   */
  breakLockOf?: (holder: PgLockHolder) => boolean;

  constructor(location: string) {
    this.loc = parsePgLocation(location);
    let entry = pools.get(this.loc.connectionString);
    if (!entry) {
      // idle_in_transaction_session_timeout: a process frozen (SIGSTOP, a paused VM) in the middle of a write
      // transaction holds the fence's share lock on the lease row, which would block every replica's takeover
      // until it thaws; the server ends such a session after IDLE_IN_TRANSACTION_MS (its lock goes with it).
      const pool = new pg.Pool({
        connectionString: this.loc.connectionString,
        max: 4,
        allowExitOnIdle: true,
        connectionTimeoutMillis: 5_000, // under a deadline (an apply's --timeout), ended at it if sooner (connecting)
        Client: NotedClient,
        // A half-open connection (a partition, a failover without a reset) fails a query after QUERY_TIMEOUT_MS, not
        // after the kernel's ~15 minutes: a reconcile, a lease tick and a shutdown waiting on it are not stuck.
        query_timeout: QUERY_TIMEOUT_MS,
        keepAlive: true,
        application_name: 'govops',
        idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      });
      pool.on('error', () => undefined); // an idle client's broken connection: the next query reports it
      entry = { pool };
      pools.set(this.loc.connectionString, entry);
    }
    this.entry = entry;
  }

  get pool(): pg.Pool {
    return this.entry.pool;
  }

  /**
   * A connection from the pool, with an `error` listener while it is checked out: the pool removes its own then, and a
   * connection cut during a query (the database restarted, a proxy, a reset) emits `error`, which with no listener
   * crashes the process. The query itself fails and says why. Give it back with `release`.
   */
  private async checkout(began?: (abandon: () => void) => void): Promise<{ client: pg.PoolClient; release: (broken?: Error) => void }> {
    const opening = connecting(this.pool);
    began?.(opening.abandon);
    const client = await opening.client;
    const onError = (): void => undefined;
    client.on('error', onError);
    return {
      client,
      release: (broken) => {
        if (!broken) client.off('error', onError); // back in the pool, which listens again; a broken one is dropped
        client.release(broken);
      },
    };
  }

  /**
   * The schema is created or migrated once per process and database (waited for within `deadline`, if given: the lock
   * holder's, never the lease's requests, which have their own bounds).
   */
  async ready(deadline?: StateDeadline): Promise<void> {
    const entry = this.entry;
    entry.ready ??= (async () => {
      const { client, release } = await this.checkout((abandon) => (entry.abandon = abandon)).finally(() => (entry.abandon = undefined));
      entry.migrating = client;
      let broken: Error | undefined;
      try {
        await migrate(client);
      } catch (err) {
        if (isUnusable(err)) broken = err as Error;
        throw err;
      } finally {
        entry.migrating = undefined;
        release(broken);
      }
    })().catch((err: unknown) => {
      entry.ready = undefined;
      throw err;
    });
    const ready = entry.ready;
    try {
      await within(
        deadline,
        this.loc,
        () => ready,
        () => {
          entry.abandon?.(); // still connecting
          void entry.migrating?.end().catch(() => undefined);
        },
        () => (entry.migrating ? 'query' : 'connect'),
      );
    } catch (err) {
      throw stateDbError(this.loc, err);
    }
  }

  /** Run `fn` with a connection: the lock's while held (one at a time), else one from the pool. */
  private async withClient<T>(fn: (c: Queryable) => Promise<T>): Promise<T> {
    await this.ready(this.deadline);
    const run = async (): Promise<T> => {
      const held = this.held;
      const d = this.deadline; // the holder's: a query waiting for the lock's connection, or the pool's, too
      if (held) return within(d, this.loc, () => fn(held), endLate(held)).catch((err: unknown) => Promise.reject(dropUnanswered(held, err)));
      const { client, release } = await connectWithin(d, this.loc, (began) => this.checkout(began));
      let broken: Error | undefined;
      try {
        return await within(d, this.loc, () => fn(client), endLate(client));
      } catch (err) {
        if (isUnusable(err)) broken = err as Error;
        throw err;
      } finally {
        release(broken);
      }
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    try {
      return await next;
    } catch (err) {
      throw stateDbError(this.loc, err);
    }
  }

  /** One transaction: the fence is checked first, in it. */
  private async tx<T>(fn: (c: Queryable) => Promise<T>): Promise<T> {
    return this.withClient(async (c) => {
      await c.query('BEGIN');
      try {
        await this.checkFence(c);
        const out = await fn(c);
        await c.query('COMMIT');
        return out;
      } catch (err) {
        // After a statement that got no answer, a ROLLBACK would wait behind it: the connection is ended instead
        if (!isUnanswered(err)) await c.query('ROLLBACK').catch(() => undefined);
        throw dropUnanswered(c, err);
      }
    });
  }

  private async checkFence(c: Queryable): Promise<void> {
    const fence = this.fence;
    if (!fence) return;
    const r = await c.query<{ holder: string; term: string; live: boolean }>(
      `SELECT holder, term, expires_at > now() AS live FROM ${SCHEMA}.leases WHERE key = $1 FOR SHARE`,
      [this.loc.key],
    );
    const row = r.rows[0];
    if (!row || row.holder !== fence.identity || Number(row.term) !== fence.term || !row.live) {
      throw new UserError(
        `state write refused: this replica (${fence.identity}) no longer leads term ${fence.term}` +
          (row ? ` (the lease names ${row.holder}, term ${row.term}${row.live ? '' : ', expired'})` : ''),
        'another replica leads now; this one stands by',
        { code: ErrorCode.stateFenced },
      );
    }
  }

  async load(): Promise<GovopsState> {
    return this.withClient(async (c) => {
      const s = await c.query<{ version: number; fingerprint_key: string; head: Record<string, unknown> }>(
        `SELECT version, fingerprint_key, head FROM ${SCHEMA}.states WHERE key = $1`,
        [this.loc.key],
      );
      const row = s.rows[0];
      if (!row) return newState();
      const where = `${this.loc.display}`;
      if (!READABLE_STATE_VERSIONS.includes(row.version)) {
        throw new UserError(`the state ${where} has version ${row.version}; this govops reads versions ${READABLE_STATE_VERSIONS.join(' and ')}`, 'use the govops release that wrote it', {
          code: ErrorCode.stateCorrupt,
        });
      }
      const rs = await c.query<{ body: unknown }>(`SELECT body FROM ${SCHEMA}.resources WHERE key = $1 ORDER BY kind, name`, [this.loc.key]);
      const resources = rs.rows.map((r, i) => {
        const body = readJson(r.body);
        checkResource(body, where, `resources[${i}]`);
        return body;
      });
      const { transitions, ...extra } = readJson(row.head) ?? {};
      const t = cleanTransitions(transitions);
      // rows written by an older govops hold a webhook's url in clear: read as the same identity, saved without it
      return withKeyedIdentities({ ...extra, version: STATE_VERSION, fingerprintKey: row.fingerprint_key, resources, ...(t ? { transitions: t } : {}) } as GovopsState);
    });
  }

  /** Whether any state is recorded under this key (the migration command refuses to overwrite it). */
  async exists(): Promise<boolean> {
    return this.withClient(async (c) => (await c.query(`SELECT 1 FROM ${SCHEMA}.states WHERE key = $1`, [this.loc.key])).rowCount! > 0);
  }

  /** Write the whole state in one transaction (rows that did not change are not rewritten). Returns the text's digest. */
  async save(state: GovopsState): Promise<string> {
    // Not through the redactor, like the state file (store.ts): the state holds no secret, and govops reads it back: a
    // registered value inside a name, id or identity (the database password `govops` in `govops-main`) became
    // `[redacted]` in the row, and the resource was no longer the one the manifest names.
    const text = serializeState(state);
    const { version: _version, fingerprintKey, resources, ...head } = JSON.parse(text) as GovopsState;
    const version = STATE_VERSION;
    await this.tx(async (c) => {
      await c.query(
        `INSERT INTO ${SCHEMA}.states (key, version, fingerprint_key, head) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key) DO UPDATE SET version = EXCLUDED.version, fingerprint_key = EXCLUDED.fingerprint_key, head = EXCLUDED.head, updated_at = now()`,
        [this.loc.key, version, fingerprintKey, storedJson(head)],
      );
      const all = `[${resources.map((r) => storedJson(r)).join(',')}]`;
      await c.query(
        `DELETE FROM ${SCHEMA}.resources r WHERE r.key = $1
           AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements($2::jsonb) e WHERE e->>'kind' = r.kind AND e->>'name' = r.name)`,
        [this.loc.key, all],
      );
      await c.query(
        `INSERT INTO ${SCHEMA}.resources (key, kind, name, body)
           SELECT $1, e->>'kind', e->>'name', e FROM jsonb_array_elements($2::jsonb) e
         ON CONFLICT (key, kind, name) DO UPDATE SET body = EXCLUDED.body, updated_at = now()
           WHERE ${SCHEMA}.resources.body IS DISTINCT FROM EXCLUDED.body`,
        [this.loc.key, all],
      );
    });
    return digestText(text);
  }

  /** Record changes (puts and removes) in one small transaction. The state row must exist (a full save first). */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.tx(async (c) => {
      for (const e of entries) {
        if ('put' in e) {
          const r: ManagedResource = e.put;
          await c.query(
            `INSERT INTO ${SCHEMA}.resources (key, kind, name, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (key, kind, name) DO UPDATE SET body = EXCLUDED.body, updated_at = now()`,
            [this.loc.key, r.kind, r.name, storedJson(r)],
          );
        } else {
          await c.query(`DELETE FROM ${SCHEMA}.resources WHERE key = $1 AND kind = $2 AND name = $3`, [this.loc.key, e.remove.kind, e.remove.name]);
        }
      }
    });
  }

  /** Remove everything recorded under this key (the migration command's --force). */
  async clear(): Promise<void> {
    await this.tx(async (c) => {
      await c.query(`DELETE FROM ${SCHEMA}.states WHERE key = $1`, [this.loc.key]);
    });
  }

  /** Count of resources recorded under the key (the migration command verifies it). */
  async count(): Promise<number> {
    return this.withClient(async (c) => Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${SCHEMA}.resources WHERE key = $1`, [this.loc.key])).rows[0]!.n));
  }

  /**
   * The token of the row naming who holds the key's lock now, if anyone does. A lock this process took through another
   * spelling of the same database's URL (`localhost` for `127.0.0.1`) has the token that lock returned.
   */
  async lockToken(): Promise<string | undefined> {
    return this.withClient(async (c) => (await c.query<{ token: string }>(`SELECT token FROM ${SCHEMA}.lock_holders WHERE key = $1`, [this.loc.key])).rows[0]?.token);
  }

  private async holder(c: Queryable): Promise<PgLockHolder | undefined> {
    const r = await c.query<{ holder: PgLockHolder }>(`SELECT holder FROM ${SCHEMA}.lock_holders WHERE key = $1`, [this.loc.key]);
    return r.rows[0]?.holder;
  }

  /** End the session holding the key's advisory lock (same role: no superuser needed). */
  private async breakLock(c: Queryable): Promise<void> {
    await c.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = (hashtext($2)::bigint & 4294967295)::oid AND objsubid = 2`,
      [LOCK_CLASS, this.loc.key],
    );
    await sleep(50);
  }

  /** The advisory lock on `client` (waiting up to `options.waitMs`, breaking a deposed replica's), then the holder's row. */
  private async takeLock(client: pg.PoolClient, info: PgLockHolder, token: string, options: LockOptions): Promise<void> {
    const deadline = performance.now() + (options.waitMs ?? 0); // monotonic: the time of day may be set meanwhile
    for (;;) {
      const got = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok`, [LOCK_CLASS, this.loc.key]);
      if (got.rows[0]!.ok) break;
      const h = await this.holder(client);
      if (h && this.breakLockOf?.(h)) {
        await this.breakLock(client);
        continue;
      }
      if (performance.now() >= deadline) {
        const who = h ? `process ${h.pid} on ${h.hostname} (${h.command}) since ${h.since}` : 'another govops process';
        throw new UserError(`the govops state (${this.loc.display}) is locked by ${who}`, 'another govops apply/state/run is writing it; wait for it to finish (the lock ends with its connection)', {
          code: ErrorCode.stateLocked,
        });
      }
      await sleep(options.pollMs ?? 200);
    }
    await client.query(
      `INSERT INTO ${SCHEMA}.lock_holders (key, token, holder, since) VALUES ($1, $2, $3, now())
       ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, holder = EXCLUDED.holder, since = now()`,
      [this.loc.key, token, JSON.stringify(info)],
    );
  }

  /**
   * Take the state key's lock: a session advisory lock on a dedicated connection (released by the server
   * when the holder's connection ends, whatever happened to the process), and a row naming the holder. With
   * `options.deadline` (an apply's --timeout), taking it and every query of this state while it is held end by then.
   */
  async acquireLock(options: LockOptions = {}): Promise<StateLock> {
    const d = options.deadline;
    await this.ready(d);
    let client: pg.PoolClient;
    try {
      client = await connectWithin(d, this.loc, (began) => {
        const opening = connecting(this.pool);
        began(opening.abandon);
        return opening.client;
      });
    } catch (err) {
      throw stateDbError(this.loc, err);
    }
    // A broken lock connection (the server ended the session: pg_terminate_backend, a restart): the lock is gone, so
    // writes to the service are refused from then on (assertHeld) and the next state write through it fails. Removed
    // when the client goes back to the pool, which hands the same client out again: one listener per lock taken piled
    // up on it otherwise.
    let lost: Error | undefined;
    const onError = (err: Error): void => void (lost ??= err);
    const onEnd = (): void => void (lost ??= new Error('the connection ended'));
    client.on('error', onError);
    client.on('end', onEnd);
    const info: PgLockHolder = {
      pid: process.pid,
      hostname: os.hostname(),
      command: commandName(),
      since: new Date().toISOString(),
      ...(this.fence ? { identity: this.fence.identity } : {}),
    };
    const token = randomBytes(8).toString('hex');
    try {
      await within(d, this.loc, () => this.takeLock(client, info, token, options), endLate(client));
    } catch (err) {
      client.release(true); // destroyed, never handed out again: its listener goes with it
      throw stateDbError(this.loc, err);
    }
    this.held = client;
    this.deadline = d;
    let released = false;
    const display = this.loc.display;
    return {
      path: display,
      info: { pid: info.pid, hostname: info.hostname, createdAt: info.since, token },
      assertHeld: (what = 'the write') => {
        if (!released && lost) throw lockLost(display, what, lost);
      },
      release: async () => {
        if (released) return;
        released = true;
        await this.chain.catch(() => undefined);
        if (this.held === client) {
          this.held = undefined;
          this.deadline = undefined;
        }
        try {
          // within the deadline too: past it, the connection is ended instead (the lock goes with its session; the row
          // naming the holder is replaced by the next one's)
          await within(d, this.loc, async () => {
            await client.query(`DELETE FROM ${SCHEMA}.lock_holders WHERE key = $1 AND token = $2`, [this.loc.key, token]);
            await client.query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [LOCK_CLASS, this.loc.key]);
          }, endLate(client));
          client.off('error', onError);
          client.off('end', onEnd);
          client.release();
        } catch {
          client.release(true); // the connection is gone, and with it the lock (and the client, listener and all)
        }
      },
    };
  }
}

/** A write to the service refused because the lock's session ended (`StateLock.assertHeld`). */
function lockLost(display: string, what: string, lost: Error): UserError {
  return new UserError(
    `${what} not sent: the lock of the PostgreSQL state (${display}) was lost (its session ended: ${lost.message}); ` +
      'another govops writer may hold it now, so this run sends nothing more: run the apply again (a daemon retries by itself)',
    'the next apply plans from what the service holds then and settles the intents this one recorded; if an operator ended the session (pg_terminate_backend), find out who holds the lock first (govops state list names the holder)',
    { code: ErrorCode.stateFenced },
  );
}

const backends = new Map<string, PgState>();

/** The one PgState of a location in this process (so the lock's connection and fence are shared). */
export function pgStateFor(location: string): PgState {
  const loc = parsePgLocation(location);
  const id = `${loc.connectionString}#${loc.key}`;
  let b = backends.get(id);
  if (!b) {
    b = new PgState(location);
    backends.set(id, b);
  }
  return b;
}

/** Close every pool (tests, and commands that want to exit at once). */
export async function closePgPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  backends.clear();
  await Promise.all(all.map((e) => e.pool.end().catch(() => undefined)));
}
