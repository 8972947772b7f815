/**
 * Offline preview (pure): which resources a change of manifests adds, removes or changes, by
 * comparing the manifests of two revisions — no live state. Secret values (values under a sensitive
 * key that are not references) are never copied into the result; references are names, and shown.
 */
import { isSecretRef } from '../manifests/secrets.js';
import type { LoadedManifest } from '../manifests/types.js';
import { deepEqual, isPlainObject } from '../plan/diff.js';
import { isSensitiveKey } from '../service/kinds.js';

export interface ManifestFieldChange {
  /** Dotted path from the manifest root, e.g. `spec.config.port`. */
  path: string;
  before?: unknown;
  after?: unknown;
  /** A secret value changed: no values shown. */
  sensitive: boolean;
}

export interface ManifestChange {
  resourceKind: 'Integration' | 'Webhook';
  name: string;
  action: 'added' | 'removed' | 'changed';
  integrationType?: string;
  /** Where the manifest is (in the new revision; in the base for a removal). */
  source: { file: string; line: number; column: number };
  changes: ManifestFieldChange[];
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

const keyOf = (m: LoadedManifest): string => `${m.manifest.kind}/${m.manifest.metadata.name}`;

function entry(m: LoadedManifest, action: ManifestChange['action'], changes: ManifestFieldChange[]): ManifestChange {
  const c: ManifestChange = {
    resourceKind: m.manifest.kind,
    name: m.manifest.metadata.name,
    action,
    source: { file: m.source.file, line: m.source.line, column: m.source.column },
    changes,
  };
  if (m.manifest.kind === 'Integration') c.integrationType = m.manifest.spec.type;
  return c;
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

/** Resources added, removed or changed from `base` to `head`, Integrations first, then by name. */
export function diffManifestSets(base: readonly LoadedManifest[], head: readonly LoadedManifest[]): ManifestChange[] {
  const baseByKey = new Map(base.map((m) => [keyOf(m), m]));
  const headKeys = new Set(head.map(keyOf));
  const out: ManifestChange[] = [];
  for (const m of head) {
    const old = baseByKey.get(keyOf(m));
    if (!old) out.push(entry(m, 'added', []));
    else {
      const changes = diffManifest(old, m);
      if (changes.length) out.push(entry(m, 'changed', changes));
    }
  }
  for (const m of base) if (!headKeys.has(keyOf(m))) out.push(entry(m, 'removed', []));
  return out.sort((a, b) =>
    a.resourceKind === b.resourceKind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.resourceKind === 'Integration' ? -1 : 1,
  );
}
