/**
 * Secret resolution: replace `{fromEnv: NAME}` / `{fromFile: PATH}` references in a manifest by their
 * values (only when plan/apply need them). Pure apart from the injected env and readFile.
 * Refs are resolved in `spec.config`, `spec.deleteCredentials` and a webhook's `spec.secret`.
 * Diagnostics never contain a secret value.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { SECRET_KEYS, isSensitiveKey } from '../kinds/registry.js';
import { isPlainObject } from '../util/object.js';
import { MIN_SECRET_LENGTH, registerSecretsInForce } from '../util/redact.js';
import { copyPlain } from '../util/copy.js';
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

export function resolveSecrets<M extends Manifest>(loaded: LoadedManifest<M>, opts: ResolveOptions): ResolvedSecrets<M> {
  const readFile = opts.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const realpath = opts.realpath ?? realpathSync;
  const manifest = copyPlain(loaded.manifest);
  const secretPaths = new Set<string>();
  const diagnostics: Diagnostic[] = [];

  const scope = opts.scope ?? DEFAULT_SECRET_SCOPE;
  const fail = (p: Path, message: string, rule?: string, severity: Diagnostic['severity'] = 'error') => {
    const at = loaded.locate(p);
    diagnostics.push({
      file: at.file,
      line: at.line,
      column: at.column,
      kind: manifest.kind,
      name: manifest.metadata?.name,
      severity,
      message,
      ...(rule ? { rule } : {}),
    });
  };

  /** The value of one reference, or undefined after recording a diagnostic. */
  const resolveRef = (ref: SecretRef, p: Path): string | undefined => {
    const where = dotted(p);
    const outOfScope = refProblem(ref, scope);
    if (outOfScope) {
      fail(p, `${where}: ${outOfScope}`, 'secret-scope');
      return undefined;
    }
    if ('fromEnv' in ref) {
      const value = opts.env[ref.fromEnv];
      if (value === undefined) {
        fail(p, `${where}: environment variable ${ref.fromEnv} is not set (${describeRef(ref)})`);
        return undefined;
      }
      if (value === '') {
        fail(p, `${where}: environment variable ${ref.fromEnv} is empty (${describeRef(ref)})`);
        return undefined;
      }
      return value;
    }
    const target = fileTarget(ref.fromFile, scope, {
      manifestDir: loaded.dir,
      manifestsRoot: loaded.root ?? loaded.dir,
      ...(opts.secretsOrigin !== undefined ? { origin: opts.secretsOrigin } : {}),
    });
    const file = target.file;
    try {
      // The real path is checked, then read (never the link again: a swap in between cannot escape).
      let real: string | undefined;
      try {
        real = realpath(file);
      } catch {
        real = undefined; // missing: reading it reports ENOENT
      }
      const escape = real === undefined ? undefined : realTargetProblem(real, realpath(target.root), ref.fromFile, scope);
      if (escape) {
        fail(p, `${where}: ${escape}`, 'secret-scope');
        return undefined;
      }
      return trimOneNewline(readFile(real ?? file));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      fail(p, `${where}: cannot read secret file ${file}${code ? ` (${code})` : ''} (${describeRef(ref)})`);
      return undefined;
    }
  };

  /**
   * Walk a value, replacing refs in place; `sensitive` marks a subtree under a sensitive key. `p` is the
   * path of `holder[key]`, a stack (pushed and popped in place: copied only when recorded).
   */
  const p: Path = [];
  const walk = (holder: Record<string, unknown> | unknown[], key: string | number, sensitive: boolean): void => {
    const value = (holder as Record<string | number, unknown>)[key];
    const isSensitive = sensitive || (typeof key === 'string' && isSensitiveKey(key));
    if (isSecretRef(value)) {
      secretPaths.add(dotted(p));
      const resolved = resolveRef(value, [...p]);
      if (resolved !== undefined) {
        // The redactor ignores values this short (replacing every `abc` would garble every output): say so.
        if (resolved.length < MIN_SECRET_LENGTH) {
          fail([...p], `${dotted(p)}: the secret (${describeRef(value)}) is shorter than ${MIN_SECRET_LENGTH} characters: too short to be redacted, it may be printed as it is`, 'secret-length', 'warning');
        }
        registerSecretsInForce(resolved);
        (holder as Record<string | number, unknown>)[key] = resolved;
      }
      return;
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        p.push(i);
        walk(value, i, isSensitive);
        p.pop();
      }
      return;
    }
    if (isPlainObject(value)) {
      for (const k of Object.keys(value)) {
        p.push(k);
        walk(value, k, isSensitive);
        p.pop();
      }
      return;
    }
    if (isSensitive && value !== undefined && value !== null) {
      const where = dotted(p);
      secretPaths.add(where);
      // A credential written as a plain literal is still a secret of this run (not a username).
      if (typeof value === 'string' && typeof key === 'string' && (SECRET_KEYS.has(key) || where === 'spec.secret')) registerSecretsInForce(value);
    }
  };
  const walkFields = (holder: Record<string, unknown>, field: string): void => {
    for (const k of Object.keys(holder)) {
      p.push('spec', field, k);
      walk(holder, k, false);
      p.length = 0;
    }
  };

  const spec = (manifest as { spec?: unknown }).spec;
  if (isPlainObject(spec)) {
    if (manifest.kind === 'Integration') {
      if (isPlainObject(spec.config)) walkFields(spec.config, 'config');
      if (isPlainObject(spec.deleteCredentials)) walkFields(spec.deleteCredentials, 'deleteCredentials');
    } else if (manifest.kind === 'Webhook' && spec.secret !== undefined) {
      p.push('spec', 'secret');
      walk(spec, 'secret', true);
      p.length = 0;
    }
  }

  return { manifest, secretPaths: [...secretPaths].sort(), diagnostics };
}

/** Resolve many manifests; the diagnostics of all of them together. */
export function resolveAllSecrets(loaded: LoadedManifest[], opts: ResolveOptions): { resolved: ResolvedSecrets[]; diagnostics: Diagnostic[] } {
  // Many manifests name the same secret file: each is resolved and read once per call.
  const files = new Map<string, string>();
  const read = opts.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const shared: ResolveOptions = {
    ...opts,
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
