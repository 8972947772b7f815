/**
 * Facts about object-store data sources (interface 2.3, 4.2) shared by the client, the planner and the
 * sandbox. The interface gives the payload but not the endpoints (4.2: "not shown"); the paths here are
 * govops' choice from public evidence (docs/decisions.md "Data sources"), and the client's are configurable.
 */
import { withoutTrailingSlashes } from '../util/strings.js';

/** Create (POST), list (GET) and read one (GET {path}/{id}) by default. */
export const DEFAULT_DATA_SOURCES_PATH = '/native-s3/handler';
/** Delete one: DELETE {path}/{id} by default. */
export const DEFAULT_DATA_SOURCE_DELETE_PATH = '/dataSource';

/**
 * The identity of a data source in the service: its integration and its prefix. Two data sources of one
 * integration never share a prefix; the planner matches live data sources by it, a pending create is found by it.
 */
export function dataSourceKey(integrationId: string, prefix: string): string {
  return `${integrationId}|${prefix}`;
}

/**
 * Whether `prefix` lies under the base location `location` (2.3 `cloudLocationPath`, the "base location
 * prefix used when registering data sources"), path segment by path segment: `s3://b/base`, `s3://b/base/`
 * and `s3://b/base/x/*` are under `s3://b/base`; `s3://b/basement` is not. The location itself counts; a
 * scheme root (`s3://`) holds every path of that scheme. Compared exactly (object keys are case-sensitive).
 * govops' reading; the sandbox checks the rule with its own code (src/sandbox/data-sources/interface.ts).
 */
export function prefixUnderLocation(location: string, prefix: string): boolean {
  if (location === '') return false;
  const base = withoutTrailingSlashes(location);
  if (base === '' || base.endsWith(':')) return prefix.startsWith(location);
  return prefix === base || prefix.startsWith(`${base}/`);
}

/**
 * A base location as govops reads it (`prefixUnderLocation`): two locations that hold the same prefixes read alike.
 * Trailing slashes go (`s3://b/base/` is `s3://b/base`); case stays (object keys are case-sensitive); a scheme root
 * or a path of slashes only (compared as a raw prefix there) stays as written. Uniqueness (2.3) is compared as
 * written: this reading only makes `validate` warn of two paths the service may hold to be one.
 */
export function locationAsCompared(location: string): string {
  const base = withoutTrailingSlashes(location);
  return base === '' || base.endsWith(':') ? location : base;
}
