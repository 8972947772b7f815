/**
 * govops state on disk (`.govops/state.json`): load (missing → fresh state with a new random
 * fingerprint key), save atomically (temp file, fsync, rename, fsync dir), and pure helpers to read
 * and change the managed resources. The state never holds a secret value: only HMAC fingerprints.
 */
import { createHmac, hash, randomBytes } from 'node:crypto';
import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { ErrorCode, UserError } from '../errors.js';
import type { Hashing } from '../plan/types.js';
import { READABLE_STATE_VERSIONS, STATE_VERSION, type GovopsState, type ManagedResource } from './types.js';
import { ensureDir } from '../util/fs.js';
import { isPlainObject } from '../util/object.js';
import { isPgLocation } from './location.js';
import { pgState } from './pg/lazy.js';
import { assertLockStillHeld } from './lock.js';
import { recordedWebhookIdentity } from '../service/kinds.js';

export { acquireStateLock, withStateLock, lockPathFor, type StateLock, type LockOptions } from './lock.js';

/** How a state folder that cannot be created is reported (saveState and the lock). */
export const STATE_DIR = {
  what: 'the folder of the state file',
  hint: 'choose a state file in a folder govops can create and write: --state PATH or GOVOPS_STATE',
};

export { DEFAULT_STATE_PATH } from './types.js';

export function newState(): GovopsState {
  return { version: STATE_VERSION, fingerprintKey: randomBytes(32).toString('hex'), resources: [] };
}

/** HMAC-SHA256 (hex) of a secret value under the state's key. */
export function fingerprint(key: string | Buffer, value: string): string {
  return createHmac('sha256', typeof key === 'string' ? Buffer.from(key, 'hex') : key).update(value, 'utf8').digest('hex');
}

/**
 * The hashing the planner is given (plan/desired.ts): fingerprints under the state's key, sha256 digests.
 * The key is decoded once, and digests use the one-shot `crypto.hash` (no Hash object per resource).
 */
export function hashingFor(key: string): Hashing & { readonly computed: number } {
  const keyBytes = Buffer.from(key, 'hex');
  // One HMAC per distinct secret value (issue #26: at 10,000 manifests most secrets are a few shared values);
  // the cache lives as long as this object (one plan) and is bounded.
  const cache = new Map<string, string>();
  let computed = 0;
  return {
    fingerprint: (value) => {
      if (value.length > FINGERPRINT_CACHE_VALUE_LENGTH) {
        computed++;
        return fingerprint(keyBytes, value); // not a secret value (a manifest's canonical JSON): not kept
      }
      let fp = cache.get(value);
      if (fp === undefined) {
        fp = fingerprint(keyBytes, value);
        computed++;
        if (cache.size >= FINGERPRINT_CACHE_SIZE) cache.clear();
        cache.set(value, fp);
      }
      return fp;
    },
    digest: digestText,
    get computed() {
      return computed;
    },
  };
}

/** Distinct secret values whose fingerprints one plan keeps. */
export const FINGERPRINT_CACHE_SIZE = 4096;
/** Longer values are fingerprinted every time (secrets are short; canonical JSON of whole manifests is not). */
export const FINGERPRINT_CACHE_VALUE_LENGTH = 1024;

/** Fingerprints of several secret values, keyed by their path. */
export function fingerprintAll(key: string, values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of Object.keys(values).sort()) out[p] = fingerprint(key, values[p]!);
  return out;
}

function corrupt(file: string, why: string): UserError {
  return new UserError(
    `state file ${file} is corrupt: ${why}`,
    `restore it from a backup, or move it away to start over (govops will then adopt the live resources that match manifests, and will not delete anything it no longer knows about)`,
    { code: ErrorCode.stateCorrupt },
  );
}

/** Check one parsed resource entry (`where` names it in the error). */
export function checkResource(r: unknown, file: string, where: string): asserts r is ManagedResource {
  if (!isPlainObject(r)) throw corrupt(file, `${where} must be an object`);
  if (r.kind !== 'Integration' && r.kind !== 'Webhook' && r.kind !== 'DataSource') throw corrupt(file, `${where}.kind must be Integration, Webhook or DataSource`);
  for (const k of ['name', 'id', 'specHash'] as const) {
    if (typeof r[k] !== 'string') throw corrupt(file, `${where}.${k} must be a string`);
  }
  if (r.origin !== 'created' && r.origin !== 'adopted') throw corrupt(file, `${where}.origin must be created or adopted`);
  if (!isPlainObject(r.secretFingerprints)) throw corrupt(file, `${where}.secretFingerprints must be an object`);
  if (r.pending !== undefined && r.pending !== 'create' && r.pending !== 'delete') {
    throw corrupt(file, `${where}.pending must be create or delete`);
  }
  if (r.key !== undefined && typeof r.key !== 'string') throw corrupt(file, `${where}.key must be a string`);
  if (r.identity !== undefined && typeof r.identity !== 'string') throw corrupt(file, `${where}.identity must be a string`);
  if (r.copies !== undefined && (!Array.isArray(r.copies) || !r.copies.every((c) => typeof c === 'string'))) {
    throw corrupt(file, `${where}.copies must be a list of ids (strings)`);
  }
  if (r.preexisting !== undefined && (!Array.isArray(r.preexisting) || !r.preexisting.every((c) => typeof c === 'string'))) {
    throw corrupt(file, `${where}.preexisting must be a list of ids (strings)`);
  }
}

/** Only well-formed transition samples are kept (the field is advisory: never a reason to refuse a state). */
export function cleanTransitions(v: unknown): Record<string, Array<[number, number]>> | undefined {
  if (!isPlainObject(v)) return undefined;
  const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  const out: Record<string, Array<[number, number]>> = {};
  for (const [k, samples] of Object.entries(v)) {
    if (!Array.isArray(samples)) continue;
    const ok = samples.filter((x): x is [number, number] => Array.isArray(x) && x.length === 2 && num(x[0]) && num(x[1]) && x[0] <= x[1]);
    if (ok.length) out[k] = ok;
  }
  return out;
}

/** Check the parsed JSON is a state of a version we understand. */
export function parseState(text: string, file: string): GovopsState {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw corrupt(file, `not valid JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(data)) throw corrupt(file, 'expected a JSON object');
  if (typeof data.version !== 'number' || !READABLE_STATE_VERSIONS.includes(data.version)) {
    throw new UserError(
      `state file ${file} has version ${JSON.stringify(data.version)}; this govops reads versions ${READABLE_STATE_VERSIONS.join(' and ')}`,
      'use the govops release that wrote it, or move the file away to start over',
      { code: ErrorCode.stateCorrupt },
    );
  }
  if (typeof data.fingerprintKey !== 'string' || !/^[0-9a-f]{64}$/.test(data.fingerprintKey)) {
    throw corrupt(file, 'fingerprintKey must be 64 hex characters');
  }
  if (!Array.isArray(data.resources)) throw corrupt(file, 'resources must be an array');
  data.resources.forEach((r, i) => checkResource(r, file, `resources[${i}]`));
  if (data.transitions !== undefined) {
    const t = cleanTransitions(data.transitions);
    if (t) data.transitions = t;
    else delete data.transitions;
  }
  // (version 1: the same records, a webhook's url perhaps in clear, which the reader keys: withKeyedIdentities)
  data.version = STATE_VERSION;
  return data as unknown as GovopsState;
}

export function journalPathFor(statePath: string): string {
  return `${statePath}.journal`;
}

export function digestText(text: string): string {
  return hash('sha256', text, 'hex');
}

const entryKey = (kind: string, name: string): string => `${kind}\0${name}`;

/**
 * Replay a journal onto the state read from `stateText`. The journal's first line names the sha256 of
 * the state text it was written against; a journal of another state (left behind by a full save that
 * replaced it) is ignored. A torn last line (a crash mid-append) is ignored; a bad line before it is
 * corruption.
 */
export function replayJournal(state: GovopsState, stateText: string, journalText: string, file: string): GovopsState {
  const lines = journalText.split('\n');
  const complete = lines.length - 1; // what follows the last newline is empty, or a torn line
  let header: unknown;
  try {
    header = complete > 0 ? JSON.parse(lines[0]!) : undefined;
  } catch {
    header = undefined;
  }
  if (!isPlainObject(header) || header.base !== digestText(stateText)) return state;
  const byKey = new Map(state.resources.map((r) => [entryKey(r.kind, r.name), r]));
  const jfile = journalPathFor(file);
  for (let i = 1; i < complete; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch (err) {
      throw corrupt(jfile, `line ${i + 1} is not valid JSON (${(err as Error).message})`);
    }
    if (isPlainObject(e) && e.put !== undefined) {
      checkResource(e.put, jfile, `line ${i + 1}: put`);
      byKey.set(entryKey(e.put.kind, e.put.name), e.put);
    } else if (isPlainObject(e) && isPlainObject(e.remove) && typeof e.remove.kind === 'string' && typeof e.remove.name === 'string') {
      byKey.delete(entryKey(e.remove.kind, e.remove.name));
    } else {
      throw corrupt(jfile, `line ${i + 1} must be {"put": resource} or {"remove": {kind, name}}`);
    }
  }
  return { ...state, resources: [...byKey.values()] };
}

/** The end of a keyed webhook identity (a full save of 10,000 webhooks does not parse each one). */
const KEYED_WEBHOOK_IDENTITY = /,\{"urlHmac":"[0-9a-f]{64}"\}\]$/;

/**
 * The state with every webhook identity in the form recorded now (service/kinds.ts `recordedWebhookIdentity`): the
 * URL by its keyed fingerprint. A state (or journal) written by an older govops holds `[name, url]`, the URL in clear
 * (a credential, for a chat webhook or an `?access_token=`): read, it is the same identity, and the next save writes
 * it without the URL. The same state object when nothing changes.
 */
export function withKeyedIdentities<S extends GovopsState>(state: S): S {
  let changed = false;
  const resources = state.resources.map((r) => {
    if (r.kind !== 'Webhook' || r.identity === undefined || KEYED_WEBHOOK_IDENTITY.test(r.identity)) return r;
    const identity = recordedWebhookIdentity(r.identity, state.fingerprintKey);
    if (identity === r.identity) return r;
    changed = true;
    return { ...r, identity };
  });
  if (!changed) return state;
  const out = { ...state, resources };
  readWithOlderRecords.add(out);
  return out;
}

/** States `withKeyedIdentities` rewrote (read from a state written by an older govops). */
const readWithOlderRecords = new WeakSet<GovopsState>();

/**
 * Whether this state was read with records in an older form (a webhook's url in clear): an apply saves it even when
 * it has nothing to change, so the url does not stay in the file or rows until the next change.
 */
export function readWithOlderForm(state: GovopsState): boolean {
  return readWithOlderRecords.has(state);
}

/** Links followed at most (the kernel's own limit for a path, ELOOP). */
const MAX_LINKS = 40;

/**
 * The file a state path names: a symbolic link (`.govops/state.json` pointing at a persistent volume) is followed, to
 * a file that may not exist yet, so the state is read and saved where it points and its journal and lock sit beside
 * it. Saved through the link itself, the rename replaced the link with a file of its own: the state went to the
 * link's folder and the target was left behind unchanged (the next run on the volume forgot everything recorded
 * since), and a writer given the link and one given the target took two different locks. A path that is no link is
 * returned as given.
 */
export async function resolveStatePath(file: string): Promise<string> {
  let current = file;
  for (let i = 0; i < MAX_LINKS; i++) {
    let target: string;
    try {
      target = await fs.readlink(current);
    } catch {
      return current; // not a link (EINVAL), or nothing there: reading or writing it says what is wrong
    }
    current = path.resolve(path.dirname(path.resolve(current)), target);
  }
  throw new UserError(`cannot read state file ${file}: more than ${MAX_LINKS} symbolic links in a row`, 'point --state at the state file itself, or at a link to it', {
    code: ErrorCode.io,
  });
}

/** Read the state (a `postgres://` location: from the database; src/state/pg/) (and the journal of changes since it was saved); a missing file is a fresh state (not written until saved). */
export async function loadState(file: string): Promise<GovopsState> {
  if (isPgLocation(file)) return (await pgState(file)).load();
  file = await resolveStatePath(file);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return newState();
    throw new UserError(`cannot read state file ${file}: ${(err as Error).message}`, 'check the --state path and its permissions', {
      code: ErrorCode.io,
    });
  }
  const state = parseState(text, file);
  let journal: string;
  try {
    journal = await fs.readFile(journalPathFor(file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return withKeyedIdentities(state);
    throw new UserError(`cannot read state journal ${journalPathFor(file)}: ${(err as Error).message}`, 'check the --state path and its permissions', {
      code: ErrorCode.io,
    });
  }
  return withKeyedIdentities(replayJournal(state, text, journal, file));
}

/**
 * Whether a state is saved at the location (a file, or a row under the PostgreSQL state key); reads only, no lock. A
 * file that cannot be looked at (EACCES on its folder, ENOTDIR) is a typed I/O error, not "no state": a named state
 * was reported as not there ("check --state") when it was there and unreadable.
 */
export async function stateExists(location: string): Promise<boolean> {
  if (isPgLocation(location)) return (await pgState(location)).exists();
  return (await statStateFile(location, 'state file')) !== undefined;
}

/**
 * A state file's (or its journal's) stat, undefined when it does not exist. Any other failure (EACCES, ENOTDIR, a read
 * error) is a typed I/O error naming the path: taken as "no state", a state that is there was reported missing, or read
 * as managing nothing (delivery health dropped its pending retries).
 */
export async function statStateFile(file: string, what: 'state file' | 'state journal'): Promise<Stats | undefined> {
  try {
    return await fs.stat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(`cannot read ${what} ${file}: ${(err as Error).message}`, 'check the --state path and its permissions', { code: ErrorCode.io });
  }
}

/** Canonical text of a state: resources sorted by kind then name, stable key order, webhook URLs only by fingerprint. */
export function serializeState(state: GovopsState): string {
  // Whoever built the state (an adoption, an export, a test), no webhook URL is written (withKeyedIdentities).
  state = withKeyedIdentities(state);
  // Each key built once, not twice per comparison (a full save of 10,000 resources sorts ~130,000 pairs).
  const keyed = state.resources.map((r) => ({ k: `${r.kind}\0${r.name}`, r }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  const resources = keyed.map((x) => x.r);
  // Fields others add to the state (src/state/types.ts may grow) are kept; resources go last.
  const { version: _read, fingerprintKey, resources: _unsorted, ...extra } = state;
  return `${JSON.stringify({ version: STATE_VERSION, fingerprintKey, ...extra, resources }, null, 2)}\n`;
}

/**
 * Write the state atomically: temp file in the same folder, fsync, rename over, fsync the folder.
 * Returns the sha256 of the text written (a journal started after it names it). A journal of the state
 * it replaces no longer applies (its digest differs) and is removed.
 */
export async function saveState(file: string, state: GovopsState): Promise<string> {
  if (isPgLocation(file)) return (await pgState(file)).save(state);
  file = await resolveStatePath(file);
  assertLockStillHeld(file);
  const dir = path.dirname(path.resolve(file));
  await ensureDir(dir, STATE_DIR);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  // Not through the redactor: the state holds no secret (names, ids, hashes, fingerprints) and no text from
  // outside, and govops reads it back: redaction would rewrite its keys and values (issue 22).
  const text = serializeState(state);
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (err) {
    // A disk that filled up mid-write leaves no (empty or partial) temp file behind.
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dir);
  await fs.rm(journalPathFor(file), { force: true });
  return digestText(text);
}

export async function fsyncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}

// ---- pure helpers over the state value --------------------------------------------------------

export type ResourceKind = ManagedResource['kind'];

export function getResource(state: GovopsState, kind: ResourceKind, name: string): ManagedResource | undefined {
  return state.resources.find((r) => r.kind === kind && r.name === name);
}

/** A new state with `resource` added or replacing the one with the same (kind, name). */
export function putResource(state: GovopsState, resource: ManagedResource): GovopsState {
  const rest = state.resources.filter((r) => !(r.kind === resource.kind && r.name === resource.name));
  return { ...state, resources: [...rest, resource] };
}

/** A new state without the resource (kind, name). */
export function removeResource(state: GovopsState, kind: ResourceKind, name: string): GovopsState {
  return { ...state, resources: state.resources.filter((r) => !(r.kind === kind && r.name === name)) };
}
