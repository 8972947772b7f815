/** Checks across the whole manifest set: duplicate (kind, name), and integrations the service would 409. */
import { kindOf, naturalKey } from '../kinds/registry.js';
import type { Diagnostic, IntegrationManifest, LoadedManifest } from './types.js';
import { where } from './format.js';


/** Returns the manifests to keep (first of each duplicate) and one error per later duplicate, naming both places. */
export function checkDuplicates(manifests: readonly LoadedManifest[]): { kept: LoadedManifest[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const kept: LoadedManifest[] = [];
  const byName = new Map<string, LoadedManifest>();
  const byNaturalKey = new Map<string, LoadedManifest>();
  const byUniqueField = new Map<string, LoadedManifest>();
  for (const m of manifests) {
    const { kind, metadata } = m.manifest;
    const key = `${kind}/${metadata.name}`;
    const first = byName.get(key);
    if (first) {
      diagnostics.push({
        ...m.locate(['metadata', 'name']),
        kind,
        name: metadata.name,
        severity: 'error',
        message: `duplicate name: ${key} is also defined at ${where(first)} (names are unique per kind)`,
      });
      continue;
    }
    byName.set(key, m);
    kept.push(m);
    if (kind !== 'Integration') continue;
    const spec = (m.manifest as IntegrationManifest).spec;
    // What the service keeps unique: the natural key, and the kind's unique fields (interface 8), compared as
    // written. A field that is a secret reference or missing is not known offline: not compared.
    const nk = naturalKey(spec.type, spec.config);
    type Unique = { map: Map<string, LoadedManifest>; key: string; path: readonly string[]; message(other: string): string };
    const keys: Unique[] = [];
    if (!/=($|:)/.test(nk)) {
      keys.push({ map: byNaturalKey, key: nk, path: kindOf(spec.type).identityField, message: (other) => `same ${spec.type} integration as ${other} (${nk}): the service allows only one` });
    }
    for (const field of kindOf(spec.type).uniqueFields ?? []) {
      const value = spec.config?.[field];
      if (typeof value !== 'string') continue;
      keys.push({
        map: byUniqueField,
        key: `${spec.type}:${field}=${value}`,
        path: ['spec', 'config', field],
        message: (other) => `${field} \`${value}\` is also used by ${other}: it is unique across ${spec.type} integrations (the service refuses a second one)`,
      });
    }
    const clash = keys.find((k) => k.map.has(k.key));
    if (clash) {
      const other = clash.map.get(clash.key)!;
      diagnostics.push({
        ...m.locate([...clash.path]),
        kind,
        name: metadata.name,
        severity: 'error',
        message: clash.message(`${other.manifest.kind}/${other.manifest.metadata.name} at ${where(other)}`),
      });
      kept.pop();
      continue;
    }
    for (const k of keys) k.map.set(k.key, m);
  }
  return { kept, diagnostics };
}
