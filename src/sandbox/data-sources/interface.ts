/**
 * The object-store data source payload of the service interface (2.3), written down as data from the
 * interface document (not from govops' schemas), and the sandbox's reading of what it implies:
 * - `type` (string, required): the object_store kind; `integrationId` (number, required);
 *   `dataSources[]` with `dataSourceName` (string, required) and `prefix` (string, required);
 * - response items: `dataSourceId` (integer), `prefix` (string), `dataSourceName` (string);
 * - `cloudLocationPath` of the integration is the "base location prefix used when registering data
 *   sources": a prefix must lie under it.
 * The endpoints are not shown (4.2); the sandbox serves them where govops looks by default
 * (src/service/data-sources.ts, docs/decisions.md "Data sources").
 */
import { withoutTrailingSlashes } from '../../util/strings.js';

export const CREATE_FIELDS = {
  type: { type: 'string', required: true },
  integrationId: { type: 'number', required: true },
  dataSources: { type: 'array', required: true },
} as const;

export const ITEM_FIELDS = {
  dataSourceName: { type: 'string', required: true },
  prefix: { type: 'string', required: true },
} as const;

/** The integration kind data sources belong to (2.3 is the object_store config). */
export const OWNER_KIND = 'object_store';

/**
 * "Under the base location": the location itself, or a path below it at a `/` boundary
 * (`s3://b/base` holds `s3://b/base/x`, not `s3://b/basement`).
 */
export function isUnderLocation(prefix: string, location: string): boolean {
  const base = withoutTrailingSlashes(location);
  if (base === '' || base.endsWith(':')) return location !== '' && prefix.startsWith(location);
  return prefix === base || prefix.startsWith(`${base}/`);
}
