/** Manifest text builders shared by the apply, reconcile and daemon tests. */

/** A lakehouse integration (autoBootstrap true) whose token comes from the environment variable `tokenEnv`. */
export function lakehouseManifest(o: { name: string; host: string; httpPath: string; tokenEnv: string }): string {
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${o.name}
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://${o.host}
    httpPath: ${o.httpPath}
    token: { fromEnv: ${o.tokenEnv} }
`;
}

/**
 * The lakehouse `lake` (https://lake.example.com) in the manual flow (autoBootstrap false), with its token from
 * GOVOPS_SECRET_LAKE_TOKEN, an optional `govops/manual-step` acknowledgment and other annotations.
 */
export function manualLakeManifest(httpPath: string, ack?: string, annotations: Record<string, string> = {}): string {
  const all = { ...annotations, ...(ack ? { 'govops/manual-step': ack } : {}) };
  const lines = Object.entries(all).map(([k, v]) => `\n    ${k}: "${v}"`).join('');
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: lake${lines ? `\n  annotations:${lines}` : ''}
spec:
  type: lakehouse
  autoBootstrap: false
  config:
    workspaceUrl: https://lake.example.com
    httpPath: ${httpPath}
    token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN }
`;
}

/** The config of `manualLakeManifest` as written (for computing its manual-step tokens). */
export const manualLakeConfig = (httpPath: string): Record<string, unknown> => ({
  workspaceUrl: 'https://lake.example.com',
  httpPath,
  token: { fromEnv: 'GOVOPS_SECRET_LAKE_TOKEN' },
});

/** An object_store Integration manifest with the given cloudLocationPath. */
export const objectStoreManifest = (name: string, location: string): string => `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: ${name}
    cloudAccountId: "123456789012"
    cloudRegion: us-east-1
    cloudLocationRole: arn:cloud:iam::123456789012:role/grants
    cloudLocationPath: ${location}
    authenticationType: auto
`;

/** A DataSource manifest (dataSourceName defaults to the manifest name). */
export const dataSourceManifest = (name: string, integration: string, prefix: string, dataSourceName = name): string => `apiVersion: govops/v1
kind: DataSource
metadata:
  name: ${name}
spec:
  integration: ${integration}
  dataSourceName: ${dataSourceName}
  prefix: ${prefix}
`;

/** The sql_analytics integration `sql` (db.example.com) in the manual flow, its password from `passwordEnv`. */
export function manualSqlManifest(passwordEnv: string): string {
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: sql
spec:
  type: sql_analytics
  autoBootstrap: false
  config:
    host: db.example.com
    database: governance
    schema: secure_views
    username: govops_system
    password: { fromEnv: ${passwordEnv} }
`;
}
