/**
 * Secret resolution: replace `{fromEnv: NAME}` / `{fromFile: PATH}` references in a manifest by their
 * values (only when plan/apply need them). Pure apart from the injected env and readFile.
 * Refs are resolved in `spec.config`, `spec.deleteCredentials` and a webhook's `spec.secret`.
 * Diagnostics never contain a secret value.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { SECRET_KEYS, isIntegrationType, isSensitiveKey, kindOf } from '../kinds/registry.js';
import { isPlainObject } from '../util/object.js';
import { MIN_SECRET_LENGTH, holdsOperatorCredential, registerAuthoredSecretsInForce, registerSecretsInForce } from '../util/redact.js';
import { copyPlain } from '../util/copy.js';
import { isGovopsStateText } from '../util/own-files.js';
import type { Diagnostic, LoadedManifest, Manifest, SecretRef } from './types.js';
import { isSecretRef } from './refs.js';
import { DEFAULT_SECRET_SCOPE, fileTarget, memoRealpath, realTargetProblem, refProblem, type SecretScope } from './secret-scope.js';

export interface ResolveOptions {
  env: Record<string, string | undefined>;
  /** Reads a file as UTF-8 (default: fs.readFileSync). Throws when unreadable. */
  readFile?: (absolutePath: string) => string;
  /** Resolves symbolic links (default: fs.realpathSync). Throws when the path does not exist. */
  realpath?: (path: string) => string;
  /** Which secrets manifests may reference (default: GOVOPS_SECRET_* variables, files inside the root). */
  scope?: SecretScope;
  /** Where the manifests root's files really are when the manifests are a copy (directory snapshots). */
  secretsOrigin?: string;
  /**
   * The references already warned about as too short to be redacted: one warning per secret per run, at its
   * first reference (a short secret named by thousands of manifests is one warning, and locating each costs).
   */
  shortWarned?: Set<string>;
  /**
   * Values already resolved in this run, by reference and the folder it is read from (`resolveAllSecrets` shares
   * one): thousands of manifests name the same few secrets, and each is checked against the scope and read once.
   * Failures are not kept (each reference that fails is reported where it is).
   */
  resolvedRefs?: Map<string, string>;
}

export interface ResolvedSecrets<M extends Manifest = Manifest> {
  /** Deep copy of the manifest with every reference replaced by its value. */
  manifest: M;
  /**
   * Dotted paths (e.g. `spec.config.password`) of values that came from a reference or whose key is
   * sensitive (kinds.ts MASKED_KEYS), plus a webhook's `spec.secret`. Never print these values.
   */
  secretPaths: string[];
  diagnostics: Diagnostic[];
}

type Path = Array<string | number>;

/** Re-exported: one definition of what a secret reference is, shared with validation. */
export { isSecretRef };


export function describeRef(ref: SecretRef): string {
  return 'fromEnv' in ref ? `fromEnv: ${ref.fromEnv}` : `fromFile: ${ref.fromFile}`;
}

function dotted(p: Path): string {
  return p.map(String).join('.');
}

/** Drop one trailing newline (`\n` or `\r\n`), as editors add one at the end of a file. */
export function trimOneNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

/** One manifest's resolution in progress: its copy, what was found so far, and how to read secrets. */
interface Resolution {
  loaded: LoadedManifest;
  /** The copy whose references are replaced in place. */
  manifest: Manifest;
  env: ResolveOptions['env'];
  readFile: (absolutePath: string) => string;
  realpath: (path: string) => string;
  scope: SecretScope;
  secretsOrigin: string | undefined;
  secretPaths: Set<string>;
  diagnostics: Diagnostic[];
  shortWarned: Set<string>;
  resolvedRefs: Map<string, string> | undefined;
  /** The path of the value being walked, a stack (pushed and popped in place: copied only when recorded). */
  at: Path;
}

export function resolveSecrets<M extends Manifest>(loaded: LoadedManifest<M>, opts: ResolveOptions): ResolvedSecrets<M> {
  const manifest = copyPlain(loaded.manifest);
  const r: Resolution = {
    loaded,
    manifest,
    env: opts.env,
    readFile: opts.readFile ?? readSecretFile,
    realpath: opts.realpath ?? realpathSync,
    scope: opts.scope ?? DEFAULT_SECRET_SCOPE,
    secretsOrigin: opts.secretsOrigin,
    secretPaths: new Set<string>(),
    diagnostics: [],
    shortWarned: opts.shortWarned ?? new Set<string>(),
    resolvedRefs: opts.resolvedRefs,
    at: [],
  };
  walkSpec(r);
  return { manifest, secretPaths: [...r.secretPaths].sort(), diagnostics: r.diagnostics };
}

/** Record a diagnostic at `p` of the manifest. */
function report(r: Resolution, p: Path, message: string, rule?: string, severity: Diagnostic['severity'] = 'error'): void {
  const at = r.loaded.locate(p);
  r.diagnostics.push({
    file: at.file,
    line: at.line,
    column: at.column,
    kind: r.manifest.kind,
    name: r.manifest.metadata?.name,
    severity,
    message,
    ...(rule ? { rule } : {}),
  });
}

/** The value of one reference, or undefined after recording a diagnostic. */
function resolveRef(r: Resolution, ref: SecretRef, p: Path): string | undefined {
  // A file reference is read relative to the manifest's folder, inside its root: both are part of the key.
  const key = r.resolvedRefs && ('fromEnv' in ref ? `e\0${ref.fromEnv}` : `f\0${r.loaded.dir}\0${r.loaded.root ?? ''}\0${ref.fromFile}`);
  const known = key === undefined ? undefined : r.resolvedRefs!.get(key);
  if (known !== undefined) return known;
  const outOfScope = refProblem(ref, r.scope);
  if (outOfScope) {
    report(r, p, `${dotted(p)}: ${outOfScope}`, 'secret-scope');
    return undefined;
  }
  const value = 'fromEnv' in ref ? resolveEnvRef(r, ref, p) : resolveFileRef(r, ref, p);
  if (key !== undefined && value !== undefined) r.resolvedRefs!.set(key, value);
  return value;
}

function resolveEnvRef(r: Resolution, ref: Extract<SecretRef, { fromEnv: string }>, p: Path): string | undefined {
  const value = r.env[ref.fromEnv];
  if (value === undefined) {
    report(r, p, `${dotted(p)}: environment variable ${ref.fromEnv} is not set (${describeRef(ref)})`);
    return undefined;
  }
  if (value === '') {
    report(r, p, `${dotted(p)}: environment variable ${ref.fromEnv} is empty (${describeRef(ref)})`);
    return undefined;
  }
  // As a file's (below): a variable in the scope the operator widened (`--secret-env-prefix CI_`) may carry the
  // run's own credential under another name (a CI exporting the API token twice); the author would have it sent.
  if (holdsOperatorCredential(value)) {
    report(r, p, `${dotted(p)}: fromEnv: ${ref.fromEnv} holds one of govops' own credentials of this run (its API token, a Git token, a push or status token): manifests can never read it; refused`, 'secret-scope');
    return undefined;
  }
  return value;
}

function resolveFileRef(r: Resolution, ref: Extract<SecretRef, { fromFile: string }>, p: Path): string | undefined {
  const where = dotted(p);
  const target = fileTarget(ref.fromFile, r.scope, {
    manifestDir: r.loaded.dir,
    manifestsRoot: r.loaded.root ?? r.loaded.dir,
    ...(r.secretsOrigin !== undefined ? { origin: r.secretsOrigin } : {}),
  });
  const file = target.file;
  try {
    // The real path is checked, then read (never the link again: a swap in between cannot escape).
    const real = realpathOrUndefined(r, file);
    const escape = real === undefined ? undefined : realTargetProblem(real, r.realpath(target.root), ref.fromFile, r.scope);
    if (escape) {
      report(r, p, `${where}: ${escape}`, 'secret-scope');
      return undefined;
    }
    const text = r.readFile(real ?? file);
    // govops' own state, journal or lock (the state's fingerprint key, the lock's token) may lie in the manifests'
    // folder under any name (`--dir DIR --state DIR/state.json`, `plan - --state prod-state.json`): never a secret.
    if (isGovopsStateText(text)) {
      report(r, p, `${where}: fromFile: ${ref.fromFile} is govops' own state (a state file, its journal or its lock): manifests can never read it; refused`, 'secret-scope');
      return undefined;
    }
    // A credential of govops' own run kept in the manifests' folder (a CI job's `echo "$TOKEN" > token` beside them,
    // then `--token-file token`, or an env file or a JSON credentials file holding it among other lines): the author
    // would have it sent, as a credential, to a host of their choosing.
    const value = trimOneNewline(text);
    if (holdsOperatorCredential(value)) {
      report(r, p, `${where}: fromFile: ${ref.fromFile} holds one of govops' own credentials of this run (its API token, a Git token, a push or status token): manifests can never read it; refused`, 'secret-scope');
      return undefined;
    }
    return value;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === CHANGED) {
      report(r, p, `${where}: fromFile: ${ref.fromFile} changed while it was read (a folder or file on its path was replaced, by a link perhaps); refused without reading it`, 'secret-scope');
      return undefined;
    }
    const why = code === TOO_LARGE ? ` (larger than ${MAX_SECRET_FILE_BYTES} bytes: a secret file holds one value)` : code === NOT_A_FILE ? ' (not a regular file)' : code ? ` (${code})` : '';
    report(r, p, `${where}: cannot read secret file ${file}${why} (${describeRef(ref)})`, SECRET_FILE_UNREADABLE);
    return undefined;
  }
}

/** The rule of a secret file that could not be read: the daemon looks at such a revision again at each resync. */
export const SECRET_FILE_UNREADABLE = 'secret-file-unreadable';

/**
 * A secret file holds one value: only a regular file of at most this many bytes is read. A pull request can name any
 * file under the manifests' root (a secrets folder is optional): one of any size would be read whole, and a FIFO
 * would block the process.
 */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;
const TOO_LARGE = 'EFBIG';
const NOT_A_FILE = 'GOVOPS_NOT_A_FILE';
const CHANGED = 'GOVOPS_FILE_CHANGED';

/** Whether `path` still has no link on the way and names the file `opened` (same device and inode). */
function sameFileNow(path: string, opened: Stats): boolean {
  try {
    if (realpathSync(path) !== path) return false;
    const now = statSync(path);
    return now.dev === opened.dev && now.ino === opened.ino;
  } catch {
    return false;
  }
}

/**
 * Read a secret file: opened without blocking, checked to be a small regular file, then read. `path` is the real path
 * checked against the root: the file opened must still be the one there, reached through no link. A folder on the
 * way swapped for a link out of the root after the check (the real path alone is no guarantee: `open` follows links
 * in every component) opens another file, and is refused without reading it.
 */
function readSecretFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!sameFileNow(path, st)) throw Object.assign(new Error(`${path}: changed while it was read`), { code: CHANGED });
    if (!st.isFile()) throw Object.assign(new Error(`${path}: not a regular file`), { code: NOT_A_FILE });
    if (st.size > MAX_SECRET_FILE_BYTES) throw Object.assign(new Error(`${path}: larger than ${MAX_SECRET_FILE_BYTES} bytes`), { code: TOO_LARGE });
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** The real path of a file, or undefined when it is missing (reading it then reports ENOENT). */
function realpathOrUndefined(r: Resolution, file: string): string | undefined {
  try {
    return r.realpath(file);
  } catch {
    return undefined;
  }
}

/** The references of `spec.config` and `spec.deleteCredentials` (integrations) or `spec.secret` (webhooks). */
function walkSpec(r: Resolution): void {
  const spec = (r.manifest as { spec?: unknown }).spec;
  if (!isPlainObject(spec)) return;
  if (r.manifest.kind === 'Integration') {
    if (isPlainObject(spec.config)) walkFields(r, spec.config, 'config');
    if (isPlainObject(spec.deleteCredentials)) walkFields(r, spec.deleteCredentials, 'deleteCredentials');
  } else if (r.manifest.kind === 'Webhook' && spec.secret !== undefined) {
    r.at.push('spec', 'secret');
    walk(r, spec, 'secret', true);
    r.at.length = 0;
  }
}

/** Walk every key of `spec.<field>`. */
function walkFields(r: Resolution, holder: Record<string, unknown>, field: string): void {
  for (const k of Object.keys(holder)) {
    r.at.push('spec', field, k);
    walk(r, holder, k, false);
    r.at.length = 0;
  }
}

/**
 * Walk `holder[key]` (at path `r.at`), replacing refs in place; `sensitive` marks a subtree under a sensitive
 * key.
 */
function walk(r: Resolution, holder: Record<string, unknown> | unknown[], key: string | number, sensitive: boolean): void {
  const value = (holder as Record<string | number, unknown>)[key];
  const isSensitive = sensitive || (typeof key === 'string' && isSensitiveKey(key));
  if (isSecretRef(value)) {
    replaceRef(r, holder, key, value);
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walkChild(r, value, i, isSensitive);
    return;
  }
  if (isPlainObject(value)) {
    for (const k of Object.keys(value)) walkChild(r, value, k, isSensitive);
    return;
  }
  if (isSensitive && value !== undefined && value !== null) recordSensitiveLiteral(r, holder, key, value);
}

function walkChild(r: Resolution, holder: Record<string, unknown> | unknown[], key: string | number, sensitive: boolean): void {
  r.at.push(key);
  walk(r, holder, key, sensitive);
  r.at.pop();
}

/** Replace the reference at `holder[key]` by its value (left as it is, with a diagnostic, when unresolved). */
function replaceRef(r: Resolution, holder: Record<string, unknown> | unknown[], key: string | number, ref: SecretRef): void {
  r.secretPaths.add(dotted(r.at));
  const resolved = resolveRef(r, ref, [...r.at]);
  if (resolved === undefined) return;
  // The redactor ignores values this short (replacing every `abc` would garble every output): say so.
  if (resolved.length < MIN_SECRET_LENGTH && !r.shortWarned.has(describeRef(ref))) {
    r.shortWarned.add(describeRef(ref));
    report(r, [...r.at], `${dotted(r.at)}: the secret (${describeRef(ref)}) is shorter than ${MIN_SECRET_LENGTH} characters: too short to be redacted, it may be printed as it is (said once, at its first reference)`, 'secret-length', 'warning');
  }
  // A file in the manifests' own tree (no secrets folder) holds what the manifests' author wrote: the author's value
  const sent = wireForm(r, resolved);
  if ('fromFile' in ref && !r.scope.dir) registerAuthoredSecretsInForce(resolved, sent);
  else registerSecretsInForce(resolved, sent);
  (holder as Record<string | number, unknown>)[key] = sent;
}

/**
 * The value as the service takes it at `r.at`: in a field of the kind's `escapedNewlines` (cloud_warehouse
 * `privateKey`, interface 2.8: "New lines in the key are replaced by a backslash followed by n"), each new line
 * (`\n`, `\r\n`) written as a backslash followed by n; any other value as it is.
 */
function wireForm(r: Resolution, value: string): string {
  if (r.manifest.kind !== 'Integration' || r.at.length !== 3 || (r.at[1] !== 'config' && r.at[1] !== 'deleteCredentials')) return value;
  const type = (r.manifest.spec as { type?: unknown }).type;
  if (!isIntegrationType(type) || !kindOf(type).escapedNewlines?.includes(String(r.at[2]))) return value;
  return value.replace(/\r\n|\r|\n/g, '\\n');
}

/** A literal value under a sensitive key: its path is secret, and a credential is a secret of this run. */
function recordSensitiveLiteral(r: Resolution, holder: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  const where = dotted(r.at);
  r.secretPaths.add(where);
  const sent = typeof value === 'string' ? wireForm(r, value) : value;
  if (sent !== value) (holder as Record<string | number, unknown>)[key] = sent;
  // A credential written as a plain literal is still a secret of this run (not a username).
  if (typeof value === 'string' && typeof key === 'string' && (SECRET_KEYS.has(key) || where === 'spec.secret')) registerAuthoredSecretsInForce(value, sent as string);
}

/** Resolve many manifests; the diagnostics of all of them together. */
export function resolveAllSecrets(loaded: LoadedManifest[], opts: ResolveOptions): { resolved: ResolvedSecrets[]; diagnostics: Diagnostic[] } {
  // Many manifests name the same secret file: each is resolved and read once per call.
  const files = new Map<string, string>();
  const read = opts.readFile ?? readSecretFile;
  const shared: ResolveOptions = {
    ...opts,
    shortWarned: opts.shortWarned ?? new Set<string>(),
    resolvedRefs: opts.resolvedRefs ?? new Map<string, string>(),
    realpath: opts.realpath ?? memoRealpath(),
    readFile: (p) => {
      let text = files.get(p);
      if (text === undefined) {
        text = read(p);
        files.set(p, text);
      }
      return text;
    },
  };
  const resolved = loaded.map((l) => resolveSecrets(l, shared));
  return { resolved, diagnostics: resolved.flatMap((r) => r.diagnostics) };
}

/** Read a value at a dotted path (array indices as numbers in the path). */
function valueAt(root: unknown, dottedPath: string): unknown {
  let cur: unknown = root;
  for (const part of dottedPath.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * The secret values of a resolved manifest, keyed by their path relative to `spec` (e.g.
 * `config.password`, `deleteCredentials.password`, `secret`) — the keys of the state's
 * `secretFingerprints`. Only string values (unresolved refs are skipped). Never print these.
 */
export function secretValues(resolved: ResolvedSecrets): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of resolved.secretPaths) {
    const v = valueAt(resolved.manifest, p);
    if (typeof v === 'string' && p.startsWith('spec.')) out[p.slice('spec.'.length)] = v;
  }
  return out;
}
