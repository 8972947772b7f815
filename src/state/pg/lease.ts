/**
 * The leader lease of a state key (client-go's lease election, on a PostgreSQL row): one replica holds
 * `govops.leases` for the key until `expires_at`; it renews every retry period; another replica takes
 * it only once it has expired, with the term incremented (the fencing token every state write checks).
 * All times are the database's (`now()`), so replicas' clocks need not agree.
 */
import type { PgState } from './backend.js';
import { SCHEMA } from './schema.js';

export interface LeaseRecord {
  holder: string;
  term: number;
  acquiredAt: string;
  renewedAt: string;
  expiresAt: string;
  live: boolean;
}

interface Row {
  holder: string;
  term: string;
  acquired_at: Date;
  renewed_at: Date;
  expires_at: Date;
  live: boolean;
}

const record = (r: Row): LeaseRecord => ({
  holder: r.holder,
  term: Number(r.term),
  acquiredAt: r.acquired_at.toISOString(),
  renewedAt: r.renewed_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
  live: r.live,
});

const COLUMNS = 'holder, term, acquired_at, renewed_at, expires_at, expires_at > now() AS live';

/**
 * `timeoutMs`: how long a lease query may go unanswered before it fails (client side). The elector passes its renew
 * deadline to a renewal: an answer later than that is of no use (the leader stands down at it), and without it a
 * database that stops answering (a partition, a frozen server) held the tick for the pool's QUERY_TIMEOUT_MS (60 s),
 * reported up all along. Not to a takeover (tryAcquireLease): one that waits for a frozen leader's transaction
 * (ended by the server after IDLE_IN_TRANSACTION_MS) and is given up by the client still takes the lease when that
 * transaction ends, for a replica that does not know it leads: nobody would lead until the lease expired.
 */
const q = (text: string, values: unknown[], timeoutMs: number | undefined) => ({ text, values, ...(timeoutMs ? { query_timeout: timeoutMs } : {}) });

/** Take the lease when it is free or expired: the new term, or undefined (someone else holds it). */
export async function tryAcquireLease(state: PgState, identity: string, durationMs: number, timeoutMs?: number): Promise<LeaseRecord | undefined> {
  await state.ready();
  const r = await state.pool.query<Row>(q(
    `INSERT INTO ${SCHEMA}.leases AS l (key, holder, term, acquired_at, renewed_at, expires_at)
       VALUES ($1, $2, 1, now(), now(), now() + $3 * interval '1 millisecond')
     ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, term = l.term + 1, acquired_at = now(), renewed_at = now(), expires_at = EXCLUDED.expires_at
       WHERE l.expires_at <= now()
     RETURNING ${COLUMNS}`,
    [state.loc.key, identity, durationMs],
    timeoutMs,
  ));
  return r.rows[0] ? record(r.rows[0]) : undefined;
}

/** Extend our lease: the lease as renewed, or undefined when it is no longer ours (expired, or another term). */
export async function renewLease(state: PgState, identity: string, term: number, durationMs: number, timeoutMs?: number): Promise<LeaseRecord | undefined> {
  const r = await state.pool.query<Row>(q(
    `UPDATE ${SCHEMA}.leases SET renewed_at = now(), expires_at = now() + $4 * interval '1 millisecond'
      WHERE key = $1 AND holder = $2 AND term = $3 AND expires_at > now()
      RETURNING ${COLUMNS}`,
    [state.loc.key, identity, term, durationMs],
    timeoutMs,
  ));
  return r.rows[0] ? record(r.rows[0]) : undefined;
}

/** Give the lease up (on shutdown): the others need not wait for it to expire. */
export async function releaseLease(state: PgState, identity: string, term: number): Promise<void> {
  await state.pool.query(`UPDATE ${SCHEMA}.leases SET expires_at = now() WHERE key = $1 AND holder = $2 AND term = $3`, [state.loc.key, identity, term]);
}

export async function readLease(state: PgState, timeoutMs?: number): Promise<LeaseRecord | undefined> {
  await state.ready();
  const r = await state.pool.query<Row>(q(`SELECT ${COLUMNS} FROM ${SCHEMA}.leases WHERE key = $1`, [state.loc.key], timeoutMs));
  return r.rows[0] ? record(r.rows[0]) : undefined;
}

/** Hooks: a push received by any replica is announced on this channel; the leader listens. */
export const HOOK_CHANNEL = 'govops_hooks';
