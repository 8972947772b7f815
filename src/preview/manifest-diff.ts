/**
 * Field changes between two manifests of one resource (pure), for the pull request's change per resource
 * (pr-diff.ts). Secret values (values under a sensitive key that are not references) are never copied into
 * the result; references are names, and shown.
 */
import { isSecretRef } from '../manifests/secrets.js';
import type { LoadedManifest } from '../manifests/types.js';
import { deepEqual } from '../plan/diff.js';
import { isPlainObject } from '../util/object.js';
import { isSensitiveKey } from '../kinds/registry.js';

export interface ManifestFieldChange {
  /** Dotted path from the manifest root, e.g. `spec.config.port`. */
  path: string;
  before?: unknown;
  after?: unknown;
  /** A secret value changed: no values shown. */
  sensitive: boolean;
}

/** The value may be shown: a reference, or a value holding no secret. */
function showable(v: unknown, sensitive: boolean): boolean {
  if (v === undefined || isSecretRef(v)) return true;
  if (sensitive) return false;
  if (Array.isArray(v)) return v.every((x) => showable(x, false));
  if (isPlainObject(v)) return Object.entries(v).every(([k, x]) => showable(x, isSensitiveKey(k)));
  return true;
}

/** Sensitive whatever their key: a webhook's signing secret (as `resolveSecrets` treats it). */
const ALWAYS_SENSITIVE: ReadonlySet<string> = new Set(['spec.secret']);

function walk(path: string, before: unknown, after: unknown, sensitive: boolean, out: ManifestFieldChange[]): void {
  if (deepEqual(before, after)) return;
  const bothObjects = isPlainObject(before) && isPlainObject(after) && !isSecretRef(before) && !isSecretRef(after);
  if (bothObjects) {
    const b = before as Record<string, unknown>;
    const a = after as Record<string, unknown>;
    for (const k of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
      const child = `${path}.${k}`;
      walk(child, b[k], a[k], sensitive || isSensitiveKey(k) || ALWAYS_SENSITIVE.has(child), out);
    }
    return;
  }
  if (showable(before, sensitive) && showable(after, sensitive)) {
    const c: ManifestFieldChange = { path, sensitive: false };
    if (before !== undefined) c.before = structuredClone(before);
    if (after !== undefined) c.after = structuredClone(after);
    out.push(c);
  } else out.push({ path, sensitive: true });
}

/** Field changes between two manifests of the same resource (metadata and spec). */
export function diffManifest(before: LoadedManifest, after: LoadedManifest): ManifestFieldChange[] {
  const out: ManifestFieldChange[] = [];
  const { name: _b, ...metaBefore } = before.manifest.metadata;
  const { name: _a, ...metaAfter } = after.manifest.metadata;
  walk('metadata', metaBefore, metaAfter, false, out);
  walk('spec', before.manifest.spec, after.manifest.spec, false, out);
  return out;
}

/** Every leaf under `value` as an addition (objects opened, so one secret hides only itself). */
function leaves(path: string, value: unknown, sensitive: boolean, out: ManifestFieldChange[]): void {
  if (isPlainObject(value) && !isSecretRef(value)) {
    for (const k of Object.keys(value).sort()) {
      const child = `${path}.${k}`;
      leaves(child, value[k], sensitive || isSensitiveKey(k) || ALWAYS_SENSITIVE.has(child), out);
    }
    return;
  }
  if (showable(value, sensitive)) out.push({ path, after: structuredClone(value), sensitive: false });
  else out.push({ path, sensitive: true });
}

/** Every field of a new manifest, as additions (secret values as sensitive). */
export function manifestFields(m: LoadedManifest): ManifestFieldChange[] {
  const out: ManifestFieldChange[] = [];
  const { name: _n, ...meta } = m.manifest.metadata;
  leaves('metadata', meta, false, out);
  leaves('spec', m.manifest.spec, false, out);
  return out;
}
