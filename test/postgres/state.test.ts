/**
 * The PostgreSQL state backend against a real server (started here, one for the file): round trips,
 * intents, one small transaction per change, keys kept apart, schema migrations, the lock (in-process and
 * between processes, naming the holder), fencing, the password never shown.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, UserError } from '../../src/errors.js';
import { acquireStateLock } from '../../src/state/lock.js';
import { StateWriter } from '../../src/state/journal.js';
import { closePgPools, pgStateFor } from '../../src/state/pg/backend.js';
import { SCHEMA_VERSION } from '../../src/state/pg/schema.js';
import { loadState, newState, saveState } from '../../src/state/store.js';
import type { GovopsState, ManagedResource } from '../../src/state/types.js';
import { withStateKey } from '../../src/state/location.js';
import { registerSecrets, secretRedactor } from '../../src/util/redact.js';
import { managedWebhooksFromState } from '../../src/daemon/webhook-health.js';
import { CLI, runGovops } from '../helpers/cli.js';
import { objectStore } from '../../bench/flaky-drill.mjs';
import { startSandbox } from '../../src/sandbox/index.js';
import { postgresPerFile, psql } from '../helpers/postgres.js';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { requestLines } from '../apply/harness.js';

const pg = postgresPerFile();

const at = (key: string): string => withStateKey(pg.url, key);

function res(name: string, extra: Partial<ManagedResource> = {}): ManagedResource {
  return { kind: 'Integration', name, id: `id-${name}`, origin: 'created', specHash: 'h', secretFingerprints: { 'config.password': 'f'.repeat(64) }, updatedAt: new Date(0).toISOString(), ...extra };
}

describe('PostgreSQL state', () => {
  it('round trips a state: resources (with intents), fingerprint key, transitions, extra fields; a missing key is a fresh state', async () => {
    const fresh = await loadState(at('rt'));
    expect(fresh.resources).toEqual([]);
    expect(fresh.fingerprintKey).toMatch(/^[0-9a-f]{64}$/);
    const state: GovopsState = {
      ...newState(),
      transitions: { 'sql_analytics/create': [[100, 200]] },
      resources: [res('a'), res('b', { pending: 'create', id: '', key: 'nk-b' }), { ...res('w'), kind: 'Webhook', pending: 'delete' }],
    };
    (state as unknown as Record<string, unknown>).futureField = { x: 1 };
    await saveState(at('rt'), state);
    const back = await loadState(at('rt'));
    expect(back.fingerprintKey).toBe(state.fingerprintKey);
    expect(back.transitions).toEqual(state.transitions);
    expect((back as unknown as Record<string, unknown>).futureField).toEqual({ x: 1 });
    const byName = (s: GovopsState) => [...s.resources].sort((x, y) => (x.name < y.name ? -1 : 1));
    expect(byName(back)).toEqual(byName(state));
    // a full save drops what the state no longer holds
    await saveState(at('rt'), { ...state, resources: [res('a')] });
    expect((await loadState(at('rt'))).resources.map((r) => r.name)).toEqual(['a']);
    expect(psql(pg, `SELECT max(version) FROM govops.migrations`)).toBe(String(SCHEMA_VERSION));
  });

  it("the daemon's delivery health reads the managed webhooks from a PostgreSQL state, and keeps the last read while it cannot", async () => {
    await saveState(at('hooks'), { ...newState(), resources: [res('lake'), res('pager', { kind: 'Webhook', id: '41' }), res('audit', { kind: 'Webhook', id: '42' })] });
    const managed = managedWebhooksFromState(at('hooks'));
    const read = async () => [...(await managed())].sort();
    expect(await read()).toEqual([
      ['41', 'pager'],
      ['42', 'audit'],
    ]);
    await saveState(at('hooks'), { ...newState(), resources: [res('pager', { kind: 'Webhook', id: '41' })] });
    expect(await read()).toEqual([['41', 'pager']]);
    // A state that cannot be read (here: written by a newer govops): the last webhooks read stand, not none (which
    // would count every delivery as unmanaged).
    psql(pg, `UPDATE govops.states SET version = 999 WHERE key = 'hooks'`);
    await expect(loadState(at('hooks'))).rejects.toThrow(/version 999/);
    expect(await read()).toEqual([['41', 'pager']]);
  });

  it("the daemon's delivery health: a PostgreSQL state it never read is its error (the round skipped), not a state that manages nothing", async () => {
    await saveState(at('unread'), { ...newState(), resources: [res('pager', { kind: 'Webhook', id: '41' })] });
    const version = psql(pg, `SELECT version FROM govops.states WHERE key = 'unread'`);
    psql(pg, `UPDATE govops.states SET version = 999 WHERE key = 'unread'`);
    const managed = managedWebhooksFromState(at('unread'));
    await expect(managed()).rejects.toThrow(/version 999/);
    psql(pg, `UPDATE govops.states SET version = ${version} WHERE key = 'unread'`);
    expect([...(await managed())]).toEqual([['41', 'pager']]);
  });

  it("taking and releasing the lock again and again leaves no listener behind on the pooled connection", async () => {
    const loc = at('relock');
    await saveState(loc, newState());
    const backend = pgStateFor(loc) as unknown as { held?: { listenerCount(event: string): number } };
    let first: number | undefined;
    for (let i = 0; i < 15; i++) {
      const lock = await acquireStateLock(loc);
      first ??= backend.held!.listenerCount('error');
      expect(backend.held!.listenerCount('error')).toBe(first);
      await lock.release();
    }
  });

  it('keys keep deployments apart in one database', async () => {
    await saveState(at('team-a'), { ...newState(), resources: [res('only-a')] });
    await saveState(at('team-b'), { ...newState(), resources: [res('only-b')] });
    expect((await loadState(at('team-a'))).resources.map((r) => r.name)).toEqual(['only-a']);
    expect((await loadState(at('team-b'))).resources.map((r) => r.name)).toEqual(['only-b']);
  });

  it('keeps names, ids and identities as written when a registered secret is part of them (full saves and appends)', async () => {
    // The state holds no secret and govops reads it back: like the state file, it is never redacted. A database
    // password `analytics` turned Integration/analytics-main into Integration/[redacted]-main in the rows: the
    // manifest's resource no longer had an entry (adopted or created again) and the renamed one had no manifest.
    registerSecrets('analytics');
    expect(secretRedactor.redactText('analytics-main')).toBe('[redacted]-main');
    const loc = at('secret-in-name');
    const main = res('analytics-main', { id: 'analytics-7', identity: 'sql_analytics|analytics.example.com' });
    await saveState(loc, { ...newState(), resources: [main] });
    const writer = new StateWriter(loc);
    await writer.writeFull({ ...newState(), resources: [main] });
    await writer.append([{ put: res('analytics-two', { pending: 'create', id: '', key: 'analytics.example.com' }) }]);
    await writer.close();
    const back = await loadState(loc);
    expect(back.resources.map((r) => [r.name, r.id, r.identity ?? r.key])).toEqual([
      ['analytics-main', 'analytics-7', 'sql_analytics|analytics.example.com'],
      ['analytics-two', '', 'analytics.example.com'],
    ]);
  });

  it('a role without CREATE on the database starts: one given the schema beforehand (deploy.md), one given only its tables', async () => {
    // PostgreSQL checks CREATE on the database before it looks whether the schema exists: `CREATE SCHEMA IF NOT
    // EXISTS` at every start refused the documented least-privilege set-up (GOVOPS_STATE_REFUSED, every command).
    psql(pg, `CREATE DATABASE owned`, 'postgres');
    psql(pg, `CREATE ROLE schema_owner LOGIN PASSWORD 'owner-pw-1'; CREATE ROLE tables_only LOGIN PASSWORD 'tables-pw-1'`);
    psql(pg, `CREATE SCHEMA govops AUTHORIZATION schema_owner`, 'owned');
    const as = (role: string, password: string): string => withStateKey(pg.url.replace(/\/\/govops:[^@]*@/, `//${role}:${password}@`).replace(/\/govops$/, '/owned'), 'k');
    expect(psql(pg, `SELECT has_database_privilege('schema_owner', 'owned', 'CREATE')`, 'owned')).toBe('f');
    const owner = as('schema_owner', 'owner-pw-1');
    const lock = await acquireStateLock(owner);
    await saveState(owner, { ...newState(), resources: [res('a')] });
    await lock.release();
    expect(psql(pg, `SELECT max(version) FROM govops.migrations`, 'owned')).toBe(String(SCHEMA_VERSION));

    psql(pg, `GRANT USAGE ON SCHEMA govops TO tables_only; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA govops TO tables_only`, 'owned');
    const user = as('tables_only', 'tables-pw-1');
    const lock2 = await acquireStateLock(user);
    await saveState(user, { ...newState(), resources: [res('a'), res('b')] });
    await lock2.release();
    expect((await loadState(user)).resources.map((r) => r.name)).toEqual(['a', 'b']);
  });

  it('a schema migrated by a newer govops: a typed, terminal refusal that says which release to use (not "unavailable")', async () => {
    psql(pg, `CREATE DATABASE newer`, 'postgres');
    const loc = withStateKey(pg.url.replace(/\/govops$/, '/newer'), 'k');
    await saveState(loc, newState());
    psql(pg, `INSERT INTO govops.migrations (version, what) VALUES (${SCHEMA_VERSION + 1}, 'from the future')`, 'newer');
    await closePgPools(); // a new process: the schema is checked again
    const err = await loadState(loc).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect(err).toMatchObject({ code: ErrorCode.stateRefused, message: expect.stringMatching(new RegExp(`at version ${SCHEMA_VERSION + 1}, newer than this govops knows`)) });
    expect((err as UserError).message).not.toContain('unavailable');
    expect((err as UserError).hint).toMatch(/release that migrated it/);
  });

  it('each change is one small transaction: other rows are not rewritten (no journal, no full rewrite)', async () => {
    const loc = at('o1');
    const writer = new StateWriter(loc);
    const many = Array.from({ length: 200 }, (_, i) => res(`r${i}`));
    await writer.writeFull({ ...newState(), resources: many });
    const before = psql(pg, `SELECT string_agg(name || ':' || xmin::text, ',' ORDER BY name) FROM govops.resources WHERE key = 'o1' AND name <> 'r7'`);
    await writer.append([{ put: res('r7', { pending: 'delete' }) }]);
    await writer.append([{ put: res('new', { pending: 'create', id: '' }) }, { remove: { kind: 'Integration', name: 'r9' } }]);
    await writer.close();
    const after = psql(pg, `SELECT string_agg(name || ':' || xmin::text, ',' ORDER BY name) FROM govops.resources WHERE key = 'o1' AND name NOT IN ('r7', 'new')`);
    expect(after).toBe(before.split(',').filter((x) => !x.startsWith('r9:')).join(','));
    const s = await loadState(loc);
    expect(s.resources.find((r) => r.name === 'r7')?.pending).toBe('delete');
    expect(s.resources.find((r) => r.name === 'new')?.pending).toBe('create');
    expect(s.resources.some((r) => r.name === 'r9')).toBe(false);
    expect(s.resources).toHaveLength(200);
  });

  it('a second writer in another process fails naming the holder (host, pid, command, since); it gets the lock once released', async () => {
    const loc = at('locked');
    await saveState(loc, { ...newState(), resources: [res('x')] });
    const lock = await acquireStateLock(loc);
    const r = await runGovops(['state', 'list', '--state', pg.url, '--state-key', 'locked'], { env: { GOVOPS_STATE_LOCK_WAIT: undefined } , timeoutMs: 40_000});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(new RegExp(`locked by process ${process.pid} on \\S+ \\(govops[^)]*\\) since \\d{4}-`));
    expect(r.stderr + r.stdout).not.toContain(pg.password);
    await lock.release();
    const ok = await runGovops(['state', 'list', '--state', pg.url, '--state-key', 'locked', '-o', 'json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).resources.map((e: { name: string }) => e.name)).toEqual(['x']);
    expect(ok.stdout + ok.stderr).not.toContain(pg.password);
  }, 60_000);

  it("an apply takes the state's lock and lists the service while its manifests are read; a load that fails gives the lock back", async () => {
    const loc = at('early');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-early-'));
    const sandbox = await startSandbox({ port: 0 });
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger() });
    const applyFrom = (text: Promise<string>) =>
      reconcile(api, engineOptions({ root: dir, paths: ['-'], stream: { label: 'stdin', read: () => text }, apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: loc, env: {} }));
    const listed = () => expect(requestLines(sandbox).sort()).toEqual(['GET /integrations', 'GET /webhooks']);
    try {
      // a load that fails: the lock was held while the stream gave nothing, and is free once the failure is returned
      let give!: (text: string) => void;
      let run = applyFrom(new Promise<string>((resolve) => (give = resolve)));
      await vi.waitFor(listed, { timeout: 20_000 });
      await expect(acquireStateLock(loc)).rejects.toMatchObject({ code: ErrorCode.stateLocked });
      give('apiVersion: govops/v1\nkind: Integration\nmetadata: {}\n');
      expect(await run).toMatchObject({ stage: 'load', ok: false });
      await (await acquireStateLock(loc)).release();
      // one that loads: applied under that lock, recorded in the state
      sandbox.clearRequests();
      run = applyFrom(new Promise<string>((resolve) => (give = resolve)));
      await vi.waitFor(listed, { timeout: 20_000 });
      await expect(acquireStateLock(loc)).rejects.toMatchObject({ code: ErrorCode.stateLocked });
      give(objectStore('early'));
      const res = await run;
      expect(res, res.error).toMatchObject({ stage: 'done', ok: true, changed: true });
      expect((await loadState(loc)).resources.map((r) => r.name)).toEqual(['early']);
      await (await acquireStateLock(loc)).release();
    } finally {
      await api.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a writer that waits gets the lock when the holder process dies (the lock ends with its connection)', async () => {
    const loc = at('dies');
    // a process that takes the lock and is then killed
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      const { acquireStateLock } = await import(${JSON.stringify(new URL('../../dist/state/lock.js', import.meta.url).href)});
      await acquireStateLock(${JSON.stringify(loc)});
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    await expect(acquireStateLock(loc)).rejects.toMatchObject({ code: ErrorCode.stateLocked });
    const waiting = acquireStateLock(loc, { waitMs: 20_000 });
    child.kill('SIGKILL');
    const lock = await waiting;
    await lock.release();
    void CLI;
  }, 40_000);

  it('fencing: a write with a stale term is refused in its transaction', async () => {
    const loc = at('fenced');
    const b = pgStateFor(loc);
    await b.ready();
    psql(pg, `INSERT INTO govops.leases VALUES ('fenced', 'replica-2', 8, now(), now(), now() + interval '1 minute')`);
    b.fence = { identity: 'replica-1', term: 7 };
    const err = await saveState(loc, newState()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).code).toBe(ErrorCode.stateFenced);
    expect(psql(pg, `SELECT count(*) FROM govops.states WHERE key = 'fenced'`)).toBe('0');
    b.fence = { identity: 'replica-2', term: 8 };
    await saveState(loc, newState());
    expect(psql(pg, `SELECT count(*) FROM govops.states WHERE key = 'fenced'`)).toBe('1');
    b.fence = undefined;
  });

  it('a server that cannot be reached is GOVOPS_STATE_UNAVAILABLE (transient), and the password is not in the message', async () => {
    const url = pg.url.replace(`:${pg.port}/`, ':1/');
    const err = await loadState(url).catch((e: unknown) => e);
    expect((err as UserError).code).toBe(ErrorCode.stateUnavailable);
    expect((err as UserError).failureClass).toBe('transient');
    expect((err as Error).message).not.toContain(pg.password);
    const cli = await runGovops(['state', 'list', '--state', url]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('unavailable');
    expect(cli.stderr + cli.stdout).not.toContain(pg.password);
  });

  it('a refusal that is not an outage (a wrong password) is GOVOPS_STATE_REFUSED and says so: not "unavailable, govops retries by itself"', async () => {
    const url = pg.url.replace(`:${encodeURIComponent(pg.password)}@`, ':not-the-password@');
    expect(url).not.toBe(pg.url);
    const err = await loadState(url).catch((e: unknown) => e);
    expect((err as UserError).code).toBe(ErrorCode.stateRefused);
    expect((err as Error).message).toContain('refused');
    expect((err as Error).message).not.toContain('unavailable');
    expect((err as UserError).hint).not.toContain('retries by itself');
  });

  it('plan --out reads a PostgreSQL state another writer holds the lock of (as plan does); a missing key is created', async () => {
    // A PostgreSQL state was looked for as a file (never found): every `plan --out` took the lock to create it, and
    // failed GOVOPS_STATE_LOCKED whenever the daemon or an apply was writing (a pull request's preview in CI).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-planout-'));
    const sandbox = await startSandbox({ port: 0 });
    try {
      mkdirSync(path.join(dir, 'm'));
      writeFileSync(path.join(dir, 'm', 'store.yaml'), objectStore('store'));
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url };
      await saveState(at('planout'), newState());
      const lock = await acquireStateLock(at('planout'));
      const out = await runGovops(['plan', 'm', '--out', path.join(dir, 'plan.json'), '--state-key', 'planout'], { cwd: dir, env });
      await lock.release();
      expect(out.stderr).not.toContain('locked');
      expect(out.code).toBe(0);
      expect(existsSync(path.join(dir, 'plan.json'))).toBe(true);
      // the command it prints applies it: with the state key given on the command line (without it, apply reads the
      // `default` key's state and refuses the plan as made with another state)
      expect(out.stdout).toContain(`govops apply ${path.join(dir, 'plan.json')} --state-key planout\n`);
      const applied = await runGovops(['apply', path.join(dir, 'plan.json'), '--state-key', 'planout'], { cwd: dir, env });
      expect(applied.code, applied.stderr).toBe(0);
      const fresh = await runGovops(['plan', 'm', '--out', path.join(dir, 'plan2.json'), '--state-key', 'planout-new'], { cwd: dir, env });
      expect(fresh.code).toBe(0);
      expect(psql(pg, `SELECT count(*) FROM govops.states WHERE key = 'planout-new'`)).toBe('1');
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('export --state postgres://… names the state as host:port/db key KEY, never the URL (user, password parameter)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-export-pg-'));
    const sandbox = await startSandbox({ port: 0 });
    try {
      const res = await fetch(`${sandbox.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ webhooks: [{ name: 'pager', url: 'https://h.example.com/pager', global: false, notificationType: ['modelCreated'], actionType: 'triggered' }] }),
      });
      expect(res.status).toBeLessThan(300);
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
      // the password as the URL's parameter (the driver reads it as libpq does)
      const byParam = `postgres://govops@127.0.0.1:${pg.port}/govops?password=${encodeURIComponent(pg.password)}#exported`;
      const out = await runGovops(['export', '--out', 'm', '--state', byParam], { cwd: dir, env });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(`Recorded 1 of them in postgres 127.0.0.1:${pg.port}/govops key exported as adopted`);
      expect(out.stdout).not.toContain('postgres://');
      expect(out.stdout).not.toContain(pg.password);
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a name with a NUL character (YAML "\\0") is recorded and read back as a file state records it (jsonb refuses \\u0000)', async () => {
    // A webhook's spec.name may be any string; its name is the pending create's key. jsonb (and text) cannot hold
    // U+0000, so every apply with such a manifest failed recording the intent (GOVOPS_STATE_REFUSED) and stopped.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-nul-'));
    const sandbox = await startSandbox({ port: 0 });
    try {
      mkdirSync(path.join(dir, 'm'));
      writeFileSync(
        path.join(dir, 'm', 'hook.yaml'),
        'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: odd\nspec:\n  name: "odd\\0name"\n  url: http://127.0.0.1:9/odd\n  global: false\n  notificationType: [healthCheckFailed]\n  actionType: triggered\n',
      );
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_STATE_URL: pg.url };
      const out = await runGovops(['apply', 'm', '--state-key', 'nul'], { cwd: dir, env });
      expect(out.code, out.stderr + out.stdout).toBe(0);
      const state = await loadState(at('nul'));
      expect(state.resources).toEqual([expect.objectContaining({ kind: 'Webhook', name: 'odd', id: expect.any(String), identity: expect.stringContaining('odd\\u0000name') })]);
      // the state's own round trip: a full save and an append, strings with U+0000 and with the text \u0000
      const odd = res('n1', { key: 'a\u0000b', identity: 'literal \\u0000 text' });
      await saveState(at('nul2'), { ...newState(), resources: [odd] });
      const w = new StateWriter(at('nul2'));
      await w.writeFull({ ...newState(), resources: [odd] });
      await w.append([{ put: res('n2', { key: '\u0000', identity: '\\\u0000' }) }]);
      const back = await loadState(at('nul2'));
      expect(back.resources.map((r) => [r.key, r.identity])).toEqual([
        ['a\u0000b', 'literal \\u0000 text'],
        ['\u0000', '\\\u0000'],
      ]);
      const again = await runGovops(['plan', 'm', '--state-key', 'nul', '--detailed-exitcode'], { cwd: dir, env });
      expect(again.code, again.stderr + again.stdout).toBe(0);
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('state migrate copies file -> PostgreSQL -> file, refuses a non-empty target without --force, and verifies', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'govops-migrate-'));
    try {
      const file = path.join(dir, 'state.json');
      const state: GovopsState = { ...newState(), transitions: { 't/create': [[1, 2]] }, resources: [res('m1'), res('m2', { pending: 'create', id: '', key: 'k' })] };
      await saveState(file, state);
      const up = await runGovops(['state', 'migrate', '--state', file, '--to', pg.url, '--to-key', 'mig', '-o', 'json']);
      expect(up.stderr).toBe('');
      expect(up.code).toBe(0);
      expect(JSON.parse(up.stdout)).toMatchObject({ resources: 2, pendingIntents: 1, transitions: 1, verified: true });
      expect(up.stdout).not.toContain(pg.password);
      expect(psql(pg, `SELECT count(*) FROM govops.resources WHERE key = 'mig'`)).toBe('2');
      // again: the target holds a state now
      const again = await runGovops(['state', 'migrate', '--state', file, '--to', pg.url, '--to-key', 'mig']);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('already holds a state');
      expect(again.stderr).not.toContain(pg.password);
      // back down, through GOVOPS_STATE_URL and --state-key
      const down = path.join(dir, 'down.json');
      const back = await runGovops(['state', 'migrate', '--state-key', 'mig', '--to', down], { env: { GOVOPS_STATE_URL: pg.url } });
      expect(back.stderr).toBe('');
      expect(back.code).toBe(0);
      expect(JSON.parse(readFileSync(down, 'utf8'))).toEqual(JSON.parse(readFileSync(file, 'utf8')));
      const refused = await runGovops(['state', 'migrate', '--state-key', 'mig', '--to', down], { env: { GOVOPS_STATE_URL: pg.url } });
      expect(refused.code).not.toBe(0);
      const forced = await runGovops(['state', 'migrate', '--state-key', 'mig', '--to', down, '--force'], { env: { GOVOPS_STATE_URL: pg.url } });
      expect(forced.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("a #key written in --state wins over GOVOPS_STATE_KEY from the environment (a CI job's): state forget edits the state named", async () => {
    await saveState(at('frag-a'), { ...newState(), resources: [res('shared'), res('only-a')] });
    await saveState(at('frag-b'), { ...newState(), resources: [res('shared'), res('only-b')] });
    const names = async (key: string) => (await loadState(at(key))).resources.map((r) => r.name).sort();
    const env = { GOVOPS_STATE_KEY: 'frag-b' };
    const list = await runGovops(['state', 'list', '--state', at('frag-a'), '-o', 'json'], { env });
    expect(list.code, list.stderr).toBe(0);
    // the old code: the environment's key replaced the one written, and frag-b was listed (and edited, below)
    expect(JSON.parse(list.stdout).resources.map((r: { name: string }) => r.name)).toEqual(['only-a', 'shared']);
    const forget = await runGovops(['state', 'forget', 'shared', '--state', at('frag-a')], { env });
    expect(forget.code, forget.stderr).toBe(0);
    expect(await names('frag-a')).toEqual(['only-a']);
    expect(await names('frag-b')).toEqual(['only-b', 'shared']);
    // a --state-key given on the command line still names the key of GOVOPS_STATE_URL (the documented CI use) ...
    const fromUrlEnv = await runGovops(['state', 'list', '--state-key', 'frag-b', '-o', 'json'], { env: { GOVOPS_STATE_URL: at('frag-a') } });
    expect(JSON.parse(fromUrlEnv.stdout).resources.map((r: { name: string }) => r.name)).toEqual(['only-b', 'shared']);
    // ... and two keys on one command line that differ are refused, naming both
    const both = await runGovops(['state', 'list', '--state', at('frag-a'), '--state-key', 'frag-b']);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/--state names the state key frag-a \(#frag-a\) and --state-key frag-b/);
    expect(both.stderr).not.toContain(pg.password);
  }, 60_000);

  it('state migrate --to the same database and key spelt another way (localhost for 127.0.0.1) is refused at once, not after 10 s of waiting for its own lock', async () => {
    await saveState(at('self'), { ...newState(), resources: [res('s1')] });
    const other = withStateKey(pg.url.replace('@127.0.0.1:', '@localhost:'), 'self');
    const started = Date.now();
    const out = await runGovops(['state', 'migrate', '--state', at('self'), '--to', other, '--force']);
    expect(out.code).toBe(1);
    // the old code: after 10 s, "the govops state (postgres localhost:PORT/govops key self) is locked by process PID
    // (govops state)": this very process
    expect(out.stderr).toContain('--to names the same state as --state');
    expect(out.stderr).not.toContain(pg.password);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect((await loadState(at('self'))).resources.map((r) => r.name)).toEqual(['s1']);
  }, 60_000);
});
