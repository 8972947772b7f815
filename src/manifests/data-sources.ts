/**
 * Checks of DataSource manifests against the rest of the set (pure): each names a data-source host (src/kinds/)
 * Integration manifest of the set, its prefix lies under that integration's `cloudLocationPath`
 * (interface 2.3: the "base location prefix used when registering data sources"), and within one
 * integration a prefix (the identity) and a data source name are each used once.
 */
import { DATA_SOURCE_INTEGRATION_TYPE } from '../kinds/registry.js';
import { prefixUnderLocation } from '../service/data-sources.js';
import { suggestion } from './suggest.js';
import type { DataSourceManifest, Diagnostic, IntegrationManifest, LoadedManifest } from './types.js';
import { where } from './format.js';
import { withArticle } from '../util/strings.js';

export { prefixUnderLocation };

/** One error per broken rule, at the field that breaks it (`file:line:col`). */
export function checkDataSources(manifests: readonly LoadedManifest[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const integrations = new Map<string, LoadedManifest<IntegrationManifest>>();
  for (const m of manifests) {
    if (m.manifest.kind === 'Integration') integrations.set(m.manifest.metadata.name, m as LoadedManifest<IntegrationManifest>);
  }
  const byPrefix = new Map<string, LoadedManifest>();
  const byName = new Map<string, LoadedManifest>();
  for (const m of manifests) {
    if (m.manifest.kind !== 'DataSource') continue;
    const ds = m as LoadedManifest<DataSourceManifest>;
    const { name } = ds.manifest.metadata;
    const spec = ds.manifest.spec;
    const error = (path: string[], message: string): void => {
      diagnostics.push({ ...ds.locate(path), kind: 'DataSource', name, severity: 'error', message });
    };
    const parent = integrations.get(spec.integration);
    if (!parent) {
      error(
        ['spec', 'integration'],
        `no Integration manifest named \`${spec.integration}\`: a data source is registered under an ${DATA_SOURCE_INTEGRATION_TYPE} Integration manifest of the same set${suggestion(spec.integration, integrations.keys())}`,
      );
      continue;
    }
    if (parent.manifest.spec.type !== DATA_SOURCE_INTEGRATION_TYPE) {
      error(
        ['spec', 'integration'],
        `Integration/${spec.integration} (${where(parent)}) is ${withArticle(parent.manifest.spec.type)} integration: data sources are registered under ${DATA_SOURCE_INTEGRATION_TYPE} integrations only (interface 2.3)`,
      );
      continue;
    }
    // A secret reference (an object) is not known offline: the service checks it.
    const location = (parent.manifest.spec.config ?? {}).cloudLocationPath;
    if (typeof location === 'string' && !prefixUnderLocation(location, spec.prefix)) {
      error(
        ['spec', 'prefix'],
        `prefix \`${spec.prefix}\` is not under the cloudLocationPath \`${location}\` of Integration/${spec.integration} (interface 2.3: the base location used when registering data sources); write a path that starts with \`${location.endsWith('/') ? location : `${location}/`}\``,
      );
      continue;
    }
    const prefixKey = `${spec.integration}\u0000${spec.prefix}`;
    const samePrefix = byPrefix.get(prefixKey);
    if (samePrefix) {
      error(
        ['spec', 'prefix'],
        `prefix \`${spec.prefix}\` of Integration/${spec.integration} is also registered by DataSource/${samePrefix.manifest.metadata.name} at ${where(samePrefix)} (a data source is identified by its integration and prefix)`,
      );
      continue;
    }
    byPrefix.set(prefixKey, ds);
    const nameKey = `${spec.integration}\u0000${spec.dataSourceName}`;
    const sameName = byName.get(nameKey);
    if (sameName) {
      error(
        ['spec', 'dataSourceName'],
        `dataSourceName \`${spec.dataSourceName}\` is also used by DataSource/${sameName.manifest.metadata.name} at ${where(sameName)}: data source names are unique per integration`,
      );
      continue;
    }
    byName.set(nameKey, ds);
  }
  return diagnostics;
}
