/**
 * Which secrets a manifest may reference. Manifest authors are less trusted than the operator who runs
 * govops, so references are scoped by the operator:
 * - `fromEnv` names only variables starting with the secret prefix (`--secret-env-prefix`, env
 *   GOVOPS_SECRET_ENV_PREFIX, default GOVOPS_SECRET_), and never govops' own configuration variables;
 * - `fromFile` is a relative path without `..`, read inside the secrets root (`--secrets-dir`, env
 *   GOVOPS_SECRETS_DIR; unset: the root of the manifests being read), and its real path (after
 *   symlinks) must stay inside that root.
 * Pure checks here; the loader reports them at file:line:col, resolution (secrets.ts) enforces them.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ENV_NAME, isSecretRef } from './refs.js';
import type { Diagnostic, LoadedManifest, SecretRef } from './types.js';
import { isPlainObject } from '../util/object.js';
import { isInside } from '../util/inside.js';

export const DEFAULT_SECRET_ENV_PREFIX = 'GOVOPS_SECRET_';
export const SECRETS_DIR_FLAG = '--secrets-dir';
export const SECRETS_DIR_ENV = 'GOVOPS_SECRETS_DIR';
export const SECRET_ENV_PREFIX_FLAG = '--secret-env-prefix';
export const SECRET_ENV_PREFIX_ENV = 'GOVOPS_SECRET_ENV_PREFIX';

/**
 * Whether `name` is one of govops' own configuration variables, never readable by a manifest whatever the
 * prefix: every `GOVOPS_*` name outside `GOVOPS_SECRET_*`, and GOVOPS_SECRET_ENV_PREFIX (the one configuration
 * variable inside it). A rule rather than a list, so a variable added later is covered without being listed.
 */
export function isGovopsConfigEnv(name: string): boolean {
  if (name === SECRET_ENV_PREFIX_ENV) return true;
  return name.startsWith('GOVOPS_') && !name.startsWith(DEFAULT_SECRET_ENV_PREFIX);
}

export interface SecretScope {
  /** `fromEnv` names must start with it. */
  envPrefix: string;
  /** Absolute secrets root set by the operator; `fromFile` paths are relative to it. */
  dir?: string;
}

export const DEFAULT_SECRET_SCOPE: SecretScope = { envPrefix: DEFAULT_SECRET_ENV_PREFIX };

/** The scope from flags, then the environment, then the defaults. Throws an Error naming the bad setting. */
export function secretScopeFrom(
  flags: { secretsDir?: string; secretEnvPrefix?: string },
  env: Record<string, string | undefined>,
  cwd: string,
): SecretScope {
  const prefixText = flags.secretEnvPrefix ?? env[SECRET_ENV_PREFIX_ENV];
  const prefix = prefixText === undefined || prefixText.trim() === '' ? DEFAULT_SECRET_ENV_PREFIX : prefixText.trim();
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(prefix)) {
    const from = flags.secretEnvPrefix !== undefined ? SECRET_ENV_PREFIX_FLAG : SECRET_ENV_PREFIX_ENV;
    throw new Error(`${from}: "${prefix}" is not a variable-name prefix (letters, digits and _, not starting with a digit)`);
  }
  const dirText = flags.secretsDir ?? env[SECRETS_DIR_ENV];
  const scope: SecretScope = { envPrefix: prefix };
  if (dirText !== undefined && dirText.trim() !== '') scope.dir = path.resolve(cwd, dirText.trim());
  return scope;
}

/** Why an env reference is out of scope, or undefined when allowed. */
export function envRefProblem(name: string, scope: SecretScope): string | undefined {
  if (!ENV_NAME.test(name)) return undefined; // reported by the shape check
  if (isGovopsConfigEnv(name)) {
    // under a prefix that holds govops' own variables (GOVOPS_), the way out is the default prefix's variables
    const instead = isGovopsConfigEnv(`${scope.envPrefix}X`) ? DEFAULT_SECRET_ENV_PREFIX : scope.envPrefix;
    return `fromEnv: ${name} is one of govops' own configuration variables; manifests can never read it (name a variable starting with ${instead} instead)`;
  }
  if (!name.startsWith(scope.envPrefix)) {
    return `fromEnv: ${name} is outside the secret scope: manifests may read only variables starting with ${scope.envPrefix} (rename the variable, or the operator widens the scope with ${SECRET_ENV_PREFIX_FLAG} / ${SECRET_ENV_PREFIX_ENV})`;
  }
  return undefined;
}

function rootHint(scope: SecretScope): string {
  return scope.dir
    ? `inside the secrets folder ${scope.dir} (${SECRETS_DIR_FLAG} / ${SECRETS_DIR_ENV})`
    : `inside the folder of the manifests being read (the operator sets another secrets folder with ${SECRETS_DIR_FLAG} / ${SECRETS_DIR_ENV})`;
}

/** Why a file reference is out of scope by its text alone (absolute, `..`, NUL), or undefined. */
export function fileRefProblem(file: string, scope: SecretScope): string | undefined {
  if (file.includes('\0')) return 'fromFile: the path contains a NUL character';
  if (path.isAbsolute(file) || path.win32.isAbsolute(file)) {
    return `fromFile: ${file} is an absolute path; secret files are read only by a relative path ${rootHint(scope)}`;
  }
  const segments = file.split(/[\\/]+/);
  if (segments.includes('..')) {
    return `fromFile: ${file} climbs out with ".."; secret files are read only ${rootHint(scope)}`;
  }
  if (!scope.dir && segments.some((s) => s.startsWith('.') && s !== '.')) {
    return `fromFile: ${file} names a hidden file or folder (.git, .govops, ...), which never holds a manifest secret; secret files are read only ${rootHint(scope)}`;
  }
  return undefined;
}

/** The problem with a reference by its text alone, or undefined. */
export function refProblem(ref: SecretRef, scope: SecretScope): string | undefined {
  return 'fromEnv' in ref ? envRefProblem(ref.fromEnv, scope) : fileRefProblem(ref.fromFile, scope);
}

/** Where a secret file reference points, and the root it must stay inside. */
export interface FileTarget {
  /** Lexical absolute path of the file. */
  file: string;
  /** The root the real path must stay inside. */
  root: string;
}

/**
 * The file a `fromFile` reference names. With a secrets folder: relative to it. Without: relative to
 * the manifest's folder (`manifestDir`), inside `manifestsRoot`; `origin` is where the manifests root's
 * files really are when the manifests were copied (the directory source's snapshots hold no secret files).
 */
export function fileTarget(
  ref: string,
  scope: SecretScope,
  where: { manifestDir: string; manifestsRoot: string; origin?: string },
): FileTarget {
  if (scope.dir) return { file: path.resolve(scope.dir, ref), root: scope.dir };
  const root = where.origin ?? where.manifestsRoot;
  const rel = path.relative(where.manifestsRoot, where.manifestDir);
  const base = rel.startsWith('..') || path.isAbsolute(rel) ? where.manifestDir : path.join(root, rel);
  return { file: path.resolve(base, ref), root };
}

/** Why an already resolved real path is out of its (real) root, or undefined. */
export function realTargetProblem(real: string, realRoot: string, ref: string, scope: SecretScope): string | undefined {
  if (isInside(realRoot, real)) {
    // Without a secrets folder the root is the manifests' own folder: a link may not lead into its
    // hidden parts (.git/config holds CI credentials, .govops/ the state's fingerprint key).
    const hidden = !scope.dir && path.relative(realRoot, real).split(path.sep).some((s) => s.startsWith('.') && s !== '.');
    if (!hidden) return undefined;
    return `fromFile: ${ref} is a symbolic link into a hidden file or folder (.git, .govops, ...); refused without reading it`;
  }
  return `fromFile: ${ref} is a symbolic link (or lies under one) leading out of the secrets root; refused without reading it (secret files are read only ${rootHint(scope)})`;
}

/**
 * Why the real path of `target` (after symlinks) leaves its root, or undefined when it stays inside
 * or does not exist (then reading it fails with ENOENT). Never reads the file.
 */
export function realPathProblem(target: FileTarget, ref: string, scope: SecretScope, realpath: (p: string) => string = realpathSync): string | undefined {
  let real: string;
  let realRoot: string;
  try {
    realRoot = realpath(target.root);
    real = realpath(target.file);
  } catch {
    return undefined;
  }
  return realTargetProblem(real, realRoot, ref, scope);
}

/** Every secret reference of a manifest (config, deleteCredentials, a webhook's secret), with its path. */
export function collectRefs(manifest: unknown): Array<{ ref: SecretRef; path: Array<string | number> }> {
  const out: Array<{ ref: SecretRef; path: Array<string | number> }> = [];
  // `p` is a stack (pushed and popped in place), copied only for a reference found
  const p: Array<string | number> = [];
  const walk = (v: unknown): void => {
    if (isSecretRef(v)) out.push({ ref: v, path: [...p] });
    else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        p.push(i);
        walk(v[i]);
        p.pop();
      }
    } else if (isPlainObject(v)) {
      for (const k in v) {
        p.push(k);
        walk(v[k]);
        p.pop();
      }
    }
  };
  const m = manifest as { kind?: unknown; spec?: unknown };
  if (!isPlainObject(m.spec)) return out;
  const fields = m.kind === 'Webhook' ? ['secret'] : ['config', 'deleteCredentials'];
  for (const f of fields) {
    if (!(f in m.spec)) continue;
    p.push('spec', f);
    walk(m.spec[f]);
    p.length = 0;
  }
  return out;
}

/** realpathSync remembered (failures too) for the span of one load: many manifests name the same secret file. */
export function memoRealpath(): (p: string) => string {
  const seen = new Map<string, string | Error>();
  return (p) => {
    let r = seen.get(p);
    if (r === undefined) {
      try {
        r = realpathSync(p);
      } catch (err) {
        r = err as Error;
      }
      seen.set(p, r);
    }
    if (r instanceof Error) throw r;
    return r;
  };
}

/** What one load remembers of the checks (many manifests name the same references): see `scopeMemo`. */
export interface ScopeMemo {
  realpath: (p: string) => string;
  /** The problem of a reference from a folder (undefined: none), by folder and reference. */
  problems: Map<string, string | undefined>;
}

/** A memo for the span of one load (the scope and the files do not change within it). */
export function scopeMemo(): ScopeMemo {
  return { realpath: memoRealpath(), problems: new Map() };
}

/**
 * The scope problems of one loaded manifest, as diagnostics at the reference (`file:line:col`).
 * A secret file that exists is checked for symlinks leading out of the root (never read).
 */
export function scopeDiagnostics(loaded: LoadedManifest, scope: SecretScope, origin?: string, memo?: ScopeMemo): Diagnostic[] {
  const out: Diagnostic[] = [];
  const problemOf = (ref: SecretRef): string | undefined => {
    let message = refProblem(ref, scope);
    if (!message && 'fromFile' in ref) {
      const target = fileTarget(ref.fromFile, scope, { manifestDir: loaded.dir, manifestsRoot: loaded.root ?? loaded.dir, ...(origin ? { origin } : {}) });
      message = realPathProblem(target, ref.fromFile, scope, memo?.realpath);
    }
    return message;
  };
  for (const { ref, path: p } of collectRefs(loaded.manifest)) {
    const key = 'fromEnv' in ref ? 'fromEnv' : 'fromFile';
    let message: string | undefined;
    if (memo) {
      const k = key === 'fromEnv' ? `e\0${(ref as { fromEnv: string }).fromEnv}` : `f\0${loaded.dir}\0${loaded.root ?? ''}\0${(ref as { fromFile: string }).fromFile}`;
      if (memo.problems.has(k)) message = memo.problems.get(k);
      else memo.problems.set(k, (message = problemOf(ref)));
    } else message = problemOf(ref);
    if (!message) continue;
    const at = loaded.locate([...p, key]);
    out.push({
      file: at.file,
      line: at.line,
      column: at.column,
      kind: loaded.manifest.kind,
      name: loaded.manifest.metadata?.name,
      severity: 'error',
      message: `${p.join('.')}: ${message}`,
      rule: 'secret-scope',
    });
  }
  return out;
}
