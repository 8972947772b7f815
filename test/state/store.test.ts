/** govops state: load/save (atomic), corrupt files, fingerprints, helpers, and the lock. */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UserError } from '../../src/errors.js';
import { acquireStateLock, lockPathFor, withStateLock } from '../../src/state/lock.js';
import {
  FINGERPRINT_CACHE_SIZE,
  fingerprint,
  fingerprintAll,
  hashingFor,
  newState,
  getResource,
  loadState,
  putResource,
  removeResource,
  saveState,
} from '../../src/state/store.js';
import { StateWriter } from '../../src/state/journal.js';
import type { ManagedResource } from '../../src/state/types.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'govops-state-'));
  file = path.join(dir, '.govops', 'state.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const SECRETS = { 'config.password': 'hunter2-very-secret', 'config.token': 'dapi-0123456789' };

function resource(name: string, key: string): ManagedResource {
  return {
    kind: 'Integration',
    name,
    id: '42',
    type: 'sql_analytics',
    origin: 'created',
    autoBootstrap: true,
    specHash: 'abc',
    secretFingerprints: fingerprintAll(key, SECRETS),
    revision: 'deadbeef',
    updatedAt: new Date(0).toISOString(),
  };
}

describe('state store', () => {
  it('a missing file is a fresh state with a random 32-byte key; not written until saved', async () => {
    const a = await loadState(file);
    const b = await loadState(file);
    expect(a.resources).toEqual([]);
    expect(a.fingerprintKey).toMatch(/^[0-9a-f]{64}$/);
    expect(a.fingerprintKey).not.toBe(b.fingerprintKey);
    expect(existsSync(file)).toBe(false);
  });

  it('saves atomically, round-trips, and never contains a secret value', async () => {
    let state = await loadState(file);
    state = putResource(state, resource('db', state.fingerprintKey));
    state = putResource(state, { ...resource('a-first', state.fingerprintKey), kind: 'Webhook' });
    await saveState(file, state);
    const text = readFileSync(file, 'utf8');
    for (const v of Object.values(SECRETS)) expect(text).not.toContain(v);
    const back = await loadState(file);
    expect(back).toEqual({ ...state, resources: [state.resources[0], state.resources[1]] });
    expect(back.resources.map((r) => r.kind)).toEqual(['Integration', 'Webhook']);
    // no temp files left behind
    expect(readdirSync(path.dirname(file))).toEqual(['state.json']);
    expect(getResource(back, 'Integration', 'db')!.secretFingerprints['config.password']).toBe(
      fingerprint(state.fingerprintKey, SECRETS['config.password']),
    );
  });

  it('overwrites via rename: a reader never sees a partial file', async () => {
    const state = await loadState(file);
    await saveState(file, state);
    const before = readFileSync(file, 'utf8');
    const writes = Array.from({ length: 20 }, (_, i) => saveState(file, putResource(state, resource(`r${i}`, state.fingerprintKey))));
    const reads: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) reads.push(loadState(file));
    await Promise.all([...writes, ...reads]);
    expect(before).toContain('"resources": []');
    expect((await loadState(file)).resources).toHaveLength(1);
  });

  it('a corrupt file is a UserError naming the path and how to fix it', async () => {
    await saveState(file, await loadState(file));
    writeFileSync(file, '{"version":1, "fingerprintKey": "zz", ');
    const err = await loadState(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toContain(file);
    expect((err as UserError).hint).toMatch(/backup|move it away/);
    writeFileSync(file, JSON.stringify({ version: 1, fingerprintKey: 'a'.repeat(64), resources: [{ kind: 'Thing' }] }));
    await expect(loadState(file)).rejects.toThrow(/resources\[0\]\.kind/);
    writeFileSync(file, JSON.stringify({ version: 99, fingerprintKey: 'a'.repeat(64), resources: [] }));
    await expect(loadState(file)).rejects.toThrow(/version 99/);
  });

  it('keeps fields others add to the state', async () => {
    const state = { ...(await loadState(file)), lastRevision: 'abc123' };
    await saveState(file, state);
    expect(await loadState(file)).toEqual(state);
  });

  it('fingerprints are keyed HMACs: same value, different key, different fingerprint', () => {
    const k1 = 'a'.repeat(64);
    const k2 = 'b'.repeat(64);
    expect(fingerprint(k1, 'x')).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint(k1, 'x')).toBe(fingerprint(k1, 'x'));
    expect(fingerprint(k1, 'x')).not.toBe(fingerprint(k2, 'x'));
    expect(fingerprint(k1, 'x')).not.toBe(fingerprint(k1, 'y'));
  });

  it('put replaces by (kind, name); remove drops it; both leave the input untouched', async () => {
    const s0 = await loadState(file);
    const s1 = putResource(s0, resource('db', s0.fingerprintKey));
    const s2 = putResource(s1, { ...resource('db', s0.fingerprintKey), id: '43' });
    expect(s0.resources).toHaveLength(0);
    expect(s2.resources.map((r) => r.id)).toEqual(['43']);
    expect(removeResource(s2, 'Webhook', 'db').resources).toHaveLength(1);
    expect(removeResource(s2, 'Integration', 'db').resources).toHaveLength(0);
  });
});

describe('a state path that is a symbolic link', () => {
  it('is followed: the state is saved where it points (the link stays), its journal and lock sit beside the target', async () => {
    // `.govops/state.json` -> a persistent volume: the save's rename used to replace the link with a file of its own,
    // leaving the volume's state as it was (the next run forgot what this one recorded), and the link and the target
    // were two locks on one state.
    const volume = path.join(dir, 'volume');
    mkdirSync(volume);
    mkdirSync(path.dirname(file));
    const target = path.join(volume, 'state.json');
    symlinkSync(path.relative(path.dirname(file), target), file); // relative, to a file not written yet
    const chained = path.join(dir, 'chained.json');
    symlinkSync(file, chained); // a link to the link

    const s = newState();
    await saveState(file, s);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, 'utf8')).fingerprintKey).toBe(s.fingerprintKey);

    const writer = new StateWriter(chained);
    await writer.writeFull(putResource(s, resource('db', s.fingerprintKey)));
    await writer.append([{ put: { ...resource('lake', s.fingerprintKey), pending: 'create', id: '' } }]);
    await writer.close();
    expect(lstatSync(file).isSymbolicLink() && lstatSync(chained).isSymbolicLink()).toBe(true);
    expect(existsSync(`${target}.journal`)).toBe(true);
    for (const p of [file, chained, target]) expect((await loadState(p)).resources.map((r) => r.name).sort()).toEqual(['db', 'lake']);

    const lock = await acquireStateLock(chained);
    expect(lock.path).toBe(lockPathFor(target));
    const err = await acquireStateLock(target).catch((e: unknown) => e);
    expect((err as UserError).message).toContain('is locked by');
    await lock.release();
    expect(readdirSync(path.dirname(file))).toEqual(['state.json']); // nothing written beside the link
  });

  it('a loop of links is a typed error, not a hang or an empty state', async () => {
    mkdirSync(path.dirname(file));
    symlinkSync(`${file}.other`, file);
    symlinkSync(file, `${file}.other`);
    const err = await loadState(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).code).toBe('GOVOPS_IO');
  });
});

describe('state lock', () => {
  it('a second acquire fails with a UserError naming the holder; release frees it', async () => {
    const lock = await acquireStateLock(file);
    const err = await acquireStateLock(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toContain(`process ${process.pid} on ${os.hostname()}`);
    await lock.release();
    expect(existsSync(lockPathFor(file))).toBe(false);
    await withStateLock(file, async () => expect(existsSync(lockPathFor(file))).toBe(true));
    expect(existsSync(lockPathFor(file))).toBe(false);
  });

  it('waits for the holder when asked to', async () => {
    const lock = await acquireStateLock(file);
    setTimeout(() => void lock.release(), 100);
    const second = await acquireStateLock(file, { waitMs: 5000, pollMs: 10 });
    expect(second.info.token).not.toBe(lock.info.token);
    await second.release();
  });

  it('the time of day set back while it waits does not lengthen the wait: it gives up after waitMs', async () => {
    const lock = await acquireStateLock(file);
    try {
      // NTP sets the time of day an hour back once the wait began (its first reading: the deadline)
      const realNow = Date.now.bind(Date);
      let readings = 0;
      vi.spyOn(Date, 'now').mockImplementation(() => (readings++ === 0 ? realNow() : realNow() - 3_600_000));
      const started = performance.now();
      const outcome = await Promise.race([
        acquireStateLock(file, { waitMs: 200, pollMs: 10 }).then((l) => l.release().then(() => 'taken'), (e: unknown) => e),
        new Promise((ok) => setTimeout(() => ok('still waiting after 10 s'), 10_000)),
      ]);
      expect(outcome).toBeInstanceOf(UserError);
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      vi.restoreAllMocks();
      await lock.release();
    }
  });

  it('a lock held by another live process blocks; once that process dies the lock is stale and taken over', async () => {
    const lockFile = lockPathFor(file);
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await acquireStateLock(file).then((l) => l.release());
      writeFileSync(lockFile, JSON.stringify({ pid: child.pid, hostname: os.hostname(), createdAt: new Date().toISOString(), token: 'x' }));
      await expect(acquireStateLock(file)).rejects.toThrow(new RegExp(`process ${child.pid}`));
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    const lock = await acquireStateLock(file);
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('a lock naming this very process (pid and host) that it does not hold is stale: a restarted container', async () => {
    // A container killed mid-reconcile (OOM, a failed liveness probe) and restarted in the same pod keeps the host
    // name, and its new node process gets the same pid in the fresh PID namespace (tini is 1). The lock left behind
    // names that pid: "alive" (it is this process) blocked every reconcile until the TTL (10 minutes) ran out.
    const lockFile = lockPathFor(file);
    await acquireStateLock(file).then((l) => l.release());
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, hostname: os.hostname(), createdAt: new Date().toISOString(), token: 'previous-run' }));
    const lock = await acquireStateLock(file);
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).token).toBe(lock.info.token);
    // One this process does hold still blocks a second acquire in it.
    await expect(acquireStateLock(file)).rejects.toThrow(new RegExp(`process ${process.pid}`));
    await lock.release();
  });

  it('a lock from another host not refreshed within the TTL is stale', async () => {
    const lockFile = lockPathFor(file);
    await acquireStateLock(file).then((l) => l.release());
    writeFileSync(lockFile, JSON.stringify({ pid: 1, hostname: 'elsewhere', createdAt: '2020-01-01T00:00:00Z', token: 'x' }));
    await expect(acquireStateLock(file, { ttlMs: 60_000 })).rejects.toThrow(/elsewhere/);
    const old = new Date(Date.now() - 120_000);
    utimesSync(lockFile, old, old);
    const lock = await acquireStateLock(file, { ttlMs: 60_000 });
    await lock.release();
  });

  it('a writer whose lock another process took over (judged stale) writes nothing more: GOVOPS_STATE_FENCED', async () => {
    // `govops apply` suspended with Ctrl-Z past the TTL (or its host asleep, or its lock file deleted by hand): a
    // second apply takes the lock and records its creates; the first, resumed, saved its own state over them.
    const s = newState();
    const lock = await acquireStateLock(file, { ttlMs: 60_000 });
    const writer = new StateWriter(file);
    await writer.writeFull(putResource(s, resource('db', s.fingerprintKey)));
    await writer.append([{ put: resource('lake', s.fingerprintKey) }]);
    const old = new Date(Date.now() - 120_000);
    utimesSync(lockPathFor(file), old, old); // not refreshed for two TTLs: stale for the next writer
    const src = path.resolve('dist/state/lock.js');
    const script = `import(${JSON.stringify(src)}).then(async (m) => { await m.acquireStateLock(${JSON.stringify(file)}, { ttlMs: 60000 }); process.stdout.write('took'); process.exit(0); });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => child.once('close', r));
    expect(out).toBe('took');
    const theirs = readFileSync(lockPathFor(file), 'utf8');
    const before = readFileSync(file, 'utf8');
    const journal = readFileSync(`${file}.journal`, 'utf8');

    for (const write of [
      () => saveState(file, newState()),
      () => writer.append([{ remove: { kind: 'Integration', name: 'db' } }]),
      () => writer.writeFull(newState()),
    ]) {
      const err = await write().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).code).toBe('GOVOPS_STATE_FENCED');
      expect((err as UserError).message).toMatch(/no longer this process's \(now held by process \d+ on /);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readFileSync(`${file}.journal`, 'utf8')).toBe(journal);
    await writer.close();
    await lock.release();
    expect(readFileSync(lockPathFor(file), 'utf8')).toBe(theirs); // theirs, left in place
    rmSync(lockPathFor(file));
    await saveState(file, newState()); // no lock of this process: not checked
  });

  it('two processes racing for the lock: exactly one wins', async () => {
    const src = path.resolve('dist/state/lock.js');
    // The winner holds the lock until its stdin closes, i.e. until both have reported.
    const script = `import(${JSON.stringify(src)}).then(async (m) => {
      try { const l = await m.acquireStateLock(${JSON.stringify(file)}); process.stdout.write('won');
        process.stdin.resume(); process.stdin.on('end', () => l.release().then(() => process.exit(0))); }
      catch (e) { process.stdout.write('lost:' + e.message); process.exit(0); }
    });`;
    const children = [0, 1].map(() => spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] }));
    const outs = await Promise.all(
      children.map(
        (p) =>
          new Promise<string>((resolve) => {
            let out = '';
            p.stdout!.on('data', (d: Buffer) => {
              out += d.toString();
              resolve(out);
            });
            p.on('close', () => resolve(out));
          }),
      ),
    );
    for (const c of children) c.stdin!.end();
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('close', r)))));
    expect(outs.filter((o) => o === 'won')).toHaveLength(1);
    expect(outs.find((o) => o !== 'won')).toMatch(/^lost:.*locked by process \d+/);
    expect(existsSync(lockPathFor(file))).toBe(false);
  });
});

describe('hashingFor', () => {
  it('computes one HMAC per distinct secret value of a plan, and the same fingerprints as without the cache', () => {
    const key = newState().fingerprintKey;
    const h = hashingFor(key);
    const values = ['pw-wh', 'pw-admin', 'sk', 'tok'];
    for (let i = 0; i < 10_000; i++) expect(h.fingerprint(values[i % 4]!)).toBe(fingerprint(key, values[i % 4]!));
    expect(h.computed).toBe(4);
    // bounded: past the cache's size it starts over, and stays right
    for (let i = 0; i < FINGERPRINT_CACHE_SIZE + 10; i++) h.fingerprint(`v-${i}`);
    expect(h.fingerprint('v-1')).toBe(fingerprint(key, 'v-1'));
    expect(h.fingerprint('pw-wh')).toBe(fingerprint(key, 'pw-wh'));
    expect(hashingFor(newState().fingerprintKey).fingerprint('pw-wh')).not.toBe(h.fingerprint('pw-wh'));
    const long = 'x'.repeat(5000);
    const before = h.computed;
    expect(h.fingerprint(long)).toBe(fingerprint(key, long));
    expect(h.fingerprint(long)).toBe(fingerprint(key, long));
    expect(h.computed).toBe(before + 2); // long values are not kept
  });
});
