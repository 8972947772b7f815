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
    const nk = naturalKey(spec.type, spec.config);
    if (/=($|:)/.test(nk)) continue; // field is a secret reference or missing: cannot compare
    const other = byNaturalKey.get(nk);
    if (other) {
      diagnostics.push({
        ...m.locate([...kindOf(spec.type).identityField]),
        kind,
        name: metadata.name,
        severity: 'error',
        message: `same ${spec.type} integration as ${other.manifest.kind}/${other.manifest.metadata.name} at ${where(other)} (${nk}): the service allows only one`,
      });
      kept.pop();
    } else byNaturalKey.set(nk, m);
  }
  return { kept, diagnostics };
}
