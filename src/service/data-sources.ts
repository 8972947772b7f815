/**
 * Facts about object-store data sources (interface 2.3, 4.2) shared by the client, the planner and the
 * sandbox. The interface gives the payload but not the endpoints (4.2: "not shown"); the paths here are
 * govops' choice from public evidence (docs/decisions.md "Data sources"), and the client's are configurable.
 */

/** The integration kind data sources are registered under (and the `type` of the create body). */
export const DATA_SOURCE_INTEGRATION_TYPE = 'object_store';

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
