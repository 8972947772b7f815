/**
 * How govops recognises its own artefacts wherever they are, so no command reads what govops wrote as a manifest
 * (docs/decisions.md "govops never reads what it writes"): a work folder carries a marker file govops writes into
 * it (every folder below is skipped by discovery), and the state file's family is known by name (given `--state`)
 * and by content (a state, journal or lock text, whatever the file is called).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The file govops writes at the top of its work folder; a folder holding it is never read for manifests. */
export const WORKDIR_MARKER = '.govops-workdir';

const MARKER_TEXT =
  'govops work folder (Git cache, revision folders, snapshots). govops discovery never reads manifests under a\n' +
  'folder holding this file. Written by govops; safe to delete with the folder.\n';

/** Mark `dir` (which exists) as a govops work folder. */
export async function markWorkdir(dir: string): Promise<void> {
  await writeFile(path.join(dir, WORKDIR_MARKER), MARKER_TEXT, { mode: 0o644 });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether a text is one govops wrote to its state's family: the state (`version`, `fingerprintKey`, `resources`),
 * a journal (first line `{"base": "<sha256>"}`), or a lock (`pid`, `token`, `createdAt`). Only JSON is looked at,
 * so a manifest (a YAML mapping with `apiVersion` and `kind`) is never taken for one.
 */
export function isGovopsStateText(text: string): boolean {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return false;
  const whole = parseJson(trimmed);
  if (isObject(whole)) {
    if (typeof whole.fingerprintKey === 'string' && Array.isArray(whole.resources) && whole.version !== undefined) return true;
    if (typeof whole.token === 'string' && typeof whole.pid === 'number' && Object.keys(whole).every((k) => LOCK_KEYS.has(k))) return true;
  }
  const first = parseJson(trimmed.split('\n', 1)[0]!);
  return isObject(first) && Object.keys(first).length === 1 && typeof first.base === 'string' && /^[0-9a-f]{64}$/.test(first.base);
}

const LOCK_KEYS = new Set(['pid', 'hostname', 'createdAt', 'token']);

/** Whether `file` is the state file `state` or one of its family (`state.journal`, `state.lock`, `state.lock.*.tmp`). */
export function isStateFamily(file: string, state: string): boolean {
  const f = path.resolve(file);
  const s = path.resolve(state);
  if (f === s) return true;
  if (path.dirname(f) !== path.dirname(s)) return false;
  const base = path.basename(f);
  const sb = path.basename(s);
  return base.startsWith(`${sb}.`) || (base.startsWith(`.${sb}.`) && base.endsWith('.tmp'));
}
