/**
 * The PostgreSQL state's schema, created and migrated by govops itself: everything lives in the schema
 * `govops`, and each migration runs once, in order, recorded in `govops.migrations` (several replicas
 * starting together migrate once: the migrations run under a transaction-scoped advisory lock).
 * A migration is never edited once released; a change of schema is a new entry at the end.
 */
import type { PoolClient } from 'pg';
import { ErrorCode, UserError } from '../../errors.js';

export const SCHEMA = 'govops';

/** Advisory-lock class of every govops lock (the second key is the state key's hash or 0 for migrations). */
export const LOCK_CLASS = 0x676f76; // "gov"

export const MIGRATIONS: ReadonlyArray<{ version: number; what: string; sql: string }> = [
  {
    version: 1,
    what: 'states, resources, lock holders, leases',
    sql: `
      CREATE TABLE ${SCHEMA}.states (
        key text PRIMARY KEY,
        version integer NOT NULL,
        fingerprint_key text NOT NULL,
        head jsonb NOT NULL DEFAULT '{}'::jsonb,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE ${SCHEMA}.resources (
        key text NOT NULL REFERENCES ${SCHEMA}.states(key) ON DELETE CASCADE,
        kind text NOT NULL,
        name text NOT NULL,
        body jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (key, kind, name)
      );
      CREATE TABLE ${SCHEMA}.lock_holders (
        key text PRIMARY KEY,
        token text NOT NULL,
        holder jsonb NOT NULL,
        since timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE ${SCHEMA}.leases (
        key text PRIMARY KEY,
        holder text NOT NULL,
        term bigint NOT NULL,
        acquired_at timestamptz NOT NULL,
        renewed_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      );`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Create the schema and run the migrations not yet applied (idempotent; safe for concurrent callers). */
export async function migrate(client: PoolClient): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK_CLASS]);
    // Created only when missing: PostgreSQL checks CREATE on the database (on the schema) before it looks whether the
    // object exists, so `IF NOT EXISTS` alone refused, at every start, a role given the schema beforehand without CREATE
    // on the database (docs/deploy.md), or one given only its tables once migrated.
    const have = await client.query<{ schema: boolean; table: boolean }>(
      `SELECT to_regnamespace($1) IS NOT NULL AS schema, to_regclass($2) IS NOT NULL AS table`,
      [SCHEMA, `${SCHEMA}.migrations`],
    );
    if (!have.rows[0]!.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    if (!have.rows[0]!.table) {
      await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.migrations (version integer PRIMARY KEY, what text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    }
    const done = await client.query<{ version: number }>(`SELECT version FROM ${SCHEMA}.migrations`);
    const applied = new Set(done.rows.map((r) => Number(r.version)));
    let ran = 0;
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql);
      await client.query(`INSERT INTO ${SCHEMA}.migrations (version, what) VALUES ($1, $2)`, [m.version, m.what]);
      ran++;
    }
    const newer = [...applied].filter((v) => v > SCHEMA_VERSION);
    if (newer.length) {
      // Typed: a plain error was reported as "the PostgreSQL state is unavailable … govops retries by itself".
      throw new UserError(
        `the PostgreSQL state's schema ${SCHEMA} is at version ${Math.max(...newer)}, newer than this govops knows (${SCHEMA_VERSION}): it writes nothing to it`,
        'use the govops release that migrated it (or a newer one) for every command and replica on this database',
        { code: ErrorCode.stateRefused },
      );
    }
    await client.query('COMMIT');
    return ran;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
