/**
 * govops state on disk (`.govops/state.json`): load (missing → fresh state with a new random
 * fingerprint key), save atomically (temp file, fsync, rename, fsync dir), and pure helpers to read
 * and change the managed resources. The state never holds a secret value: only HMAC fingerprints.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ErrorCode, UserError } from '../errors.js';
import type { Hashing } from '../plan/types.js';
import { STATE_VERSION, type GovopsState, type ManagedResource } from './types.js';
import { redactJsonText } from '../util/redact.js';
import { ensureDir } from '../util/fs.js';
import { isPlainObject } from '../util/object.js';

export { acquireStateLock, withStateLock, lockPathFor, type StateLock, type LockOptions } from './lock.js';

/** How a state folder that cannot be created is reported (saveState and the lock). */
export const STATE_DIR = {
  what: 'the folder of the state file',
  hint: 'choose a state file in a folder govops can create and write: --state PATH or GOVOPS_STATE',
};

export const DEFAULT_STATE_PATH = '.govops/state.json';

export function newState(): GovopsState {
  return { version: STATE_VERSION, fingerprintKey: randomBytes(32).toString('hex'), resources: [] };
}

/** HMAC-SHA256 (hex) of a secret value under the state's key. */
export function fingerprint(key: string, value: string): string {
  return createHmac('sha256', Buffer.from(key, 'hex')).update(value, 'utf8').digest('hex');
}

/** The hashing the planner is given (plan/desired.ts): fingerprints under the state's key, sha256 digests. */
export function hashingFor(key: string): Hashing {
  return {
    fingerprint: (value) => fingerprint(key, value),
    digest: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
  };
}

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

/** Check the parsed JSON is a state of a version we understand. */
export function parseState(text: string, file: string): GovopsState {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw corrupt(file, `not valid JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(data)) throw corrupt(file, 'expected a JSON object');
  if (data.version !== STATE_VERSION) {
    throw new UserError(
      `state file ${file} has version ${JSON.stringify(data.version)}; this govops reads version ${STATE_VERSION}`,
      'use the govops release that wrote it, or move the file away to start over',
      { code: ErrorCode.stateCorrupt },
    );
  }
  if (typeof data.fingerprintKey !== 'string' || !/^[0-9a-f]{64}$/.test(data.fingerprintKey)) {
    throw corrupt(file, 'fingerprintKey must be 64 hex characters');
  }
  if (!Array.isArray(data.resources)) throw corrupt(file, 'resources must be an array');
  data.resources.forEach((r, i) => {
    if (!isPlainObject(r)) throw corrupt(file, `resources[${i}] must be an object`);
    if (r.kind !== 'Integration' && r.kind !== 'Webhook' && r.kind !== 'DataSource') throw corrupt(file, `resources[${i}].kind must be Integration, Webhook or DataSource`);
    for (const k of ['name', 'id', 'specHash'] as const) {
      if (typeof r[k] !== 'string') throw corrupt(file, `resources[${i}].${k} must be a string`);
    }
    if (r.origin !== 'created' && r.origin !== 'adopted') throw corrupt(file, `resources[${i}].origin must be created or adopted`);
    if (!isPlainObject(r.secretFingerprints)) throw corrupt(file, `resources[${i}].secretFingerprints must be an object`);
    if (r.pending !== undefined && r.pending !== 'create' && r.pending !== 'delete') {
      throw corrupt(file, `resources[${i}].pending must be create or delete`);
    }
    if (r.key !== undefined && typeof r.key !== 'string') throw corrupt(file, `resources[${i}].key must be a string`);
  });
  return data as unknown as GovopsState;
}

/** Read the state; a missing file is a fresh state (not written until saved). */
export async function loadState(file: string): Promise<GovopsState> {
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
  return parseState(text, file);
}

/** Canonical text of a state: resources sorted by kind then name, stable key order. */
export function serializeState(state: GovopsState): string {
  const key = (r: ManagedResource) => `${r.kind}\0${r.name}`;
  const resources = [...state.resources].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  // Fields others add to the state (src/state/types.ts may grow) are kept; resources go last.
  const { version, fingerprintKey, resources: _unsorted, ...extra } = state;
  return `${JSON.stringify({ version, fingerprintKey, ...extra, resources }, null, 2)}\n`;
}

/** Write the state atomically: temp file in the same folder, fsync, rename over, fsync the folder. */
export async function saveState(file: string, state: GovopsState): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  await ensureDir(dir, STATE_DIR);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    // Through the one redactor: no text from outside (an error echoing a request) brings a secret in.
    await handle.writeFile(redactJsonText(serializeState(state)), 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dir);
}

async function fsyncDir(dir: string): Promise<void> {
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

export function findResourceById(state: GovopsState, kind: ResourceKind, id: string): ManagedResource | undefined {
  return state.resources.find((r) => r.kind === kind && r.id === id);
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
