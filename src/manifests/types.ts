/**
 * Manifest shapes as users write them (schemas/ is the source of truth; these types follow it).
 */
import type { ErrorCodeValue } from '../errors.js';
import type { IntegrationType } from '../kinds/registry.js';

export const API_VERSION = 'govops/v1';
export type ManifestKind = 'Integration' | 'Webhook' | 'DataSource';

/** A secret reference: resolved only when plan/apply need the value, never by validate. */
export type SecretRef = { fromEnv: string } | { fromFile: string };

/** A string value that may be written as a secret reference. */
export type SecretString = string | SecretRef;

export interface Metadata {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface IntegrationSpec {
  type: IntegrationType;
  autoBootstrap?: boolean;
  config?: Record<string, unknown>;
  deleteCredentials?: Record<string, unknown>;
}

export interface WebhookSpec {
  /** The webhook's name in the service (any non-empty string); absent: metadata.name (`webhookServiceName`). */
  name?: string;
  url: string;
  global: boolean;
  notificationType: string[];
  actionType: 'triggered' | 'receive';
  secret?: SecretString;
}

/** An object-store data source (interface 2.3): registered under an Integration manifest of the data-source host kind. */
export interface DataSourceSpec {
  /** metadata.name of its Integration manifest (the data-source host kind); govops sends its live id as `integrationId`. */
  integration: string;
  dataSourceName: string;
  /** Must lie under the integration's `cloudLocationPath`. */
  prefix: string;
}

export interface IntegrationManifest {
  apiVersion: typeof API_VERSION;
  kind: 'Integration';
  metadata: Metadata;
  spec: IntegrationSpec;
}

export interface WebhookManifest {
  apiVersion: typeof API_VERSION;
  kind: 'Webhook';
  metadata: Metadata;
  spec: WebhookSpec;
}

export interface DataSourceManifest {
  apiVersion: typeof API_VERSION;
  kind: 'DataSource';
  metadata: Metadata;
  spec: DataSourceSpec;
}

export type Manifest = IntegrationManifest | WebhookManifest | DataSourceManifest;

export interface SourceLocation {
  /** Path as given/found (relative to the cwd or the source root). */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** A manifest read from a file, with where it came from. */
export interface LoadedManifest<M extends Manifest = Manifest> {
  manifest: M;
  /** Where the document starts. */
  source: SourceLocation;
  /** Absolute folder of the file: `fromFile` paths are relative to it (unless a secrets folder is set). */
  dir: string;
  /** The scanned root the file was found under (set by the loader): the default secrets root. */
  root?: string;
  /** Where a value inside the document is, by its path (e.g. ['spec','config','host']). */
  locate(path: ReadonlyArray<string | number>): SourceLocation;
}

export type Severity = 'error' | 'warning';

/** One problem found in the manifests. Printed as `file:line:col: Kind/name: message`. */
export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  kind?: string;
  name?: string;
  severity: Severity;
  message: string;
  /** Set when the file could not be read (an I/O failure, not the manifest's fault): `GOVOPS_SOURCE_IO`. */
  code?: ErrorCodeValue;
  /** The security rule broken, when it is one (`secret-scope`, `symlink`, `submodule`). */
  rule?: string;
}

/** The result of loading + validating a set of manifest paths. */
export interface ManifestSet {
  manifests: LoadedManifest[];
  diagnostics: Diagnostic[];
}

// ---------------------------------------------------------------------------------------------
// Per-kind config shapes as written in manifests (schemas/config/*.json; any string may be a
// secret reference). `IntegrationSpec.config` stays a plain record; these document and narrow it.

export interface ImpersonationConfig {
  enabled?: boolean;
  role?: string;
}

export interface ObjectStoreConfig {
  name: string;
  cloudAccountId: string;
  cloudRegion: string;
  cloudLocationRole: string;
  cloudLocationPath: string;
  cloudRoleToAssume?: string;
  authenticationType: 'auto' | 'accessKey';
  cloudAccessKeyId?: SecretString;
  cloudSecretAccessKey?: SecretString;
  port?: number;
}

export interface SqlAnalyticsConfig {
  host: SecretString;
  database: SecretString;
  schema: SecretString;
  username: SecretString;
  password: SecretString;
  metadataDelimiters?: { hashDelimiter?: string; hashKeyDelimiter?: string; arrayDelimiter?: string };
  port?: number;
  impersonation?: ImpersonationConfig;
  connectArgs?: SecretString;
}

export interface LakehouseConfig {
  port?: number;
  workspaceUrl: SecretString;
  httpPath: SecretString;
  token: SecretString;
  audit?: { enabled?: boolean };
  catalog?: string;
  groupPattern?: { deny?: string };
}

export interface DatasetWarehouseConfig {
  role: SecretString;
  datasetSuffix: string;
  dataset?: string;
  location: string;
  credential: SecretString;
  port?: number;
}

export interface OktaConfig {
  username: SecretString;
  password: SecretString;
  appId: SecretString;
  idpHost: SecretString;
  role: SecretString;
}

export interface ColumnarWarehouseConfig {
  host: SecretString;
  database: SecretString;
  initialDatabase?: SecretString;
  authenticationType: 'userPassword' | 'accessKey' | 'okta';
  username?: SecretString;
  password?: SecretString;
  okta?: OktaConfig;
  databaseUser?: SecretString;
  accessKeyId?: SecretString;
  secretKey?: SecretString;
  sessionToken?: SecretString;
  port?: number;
  impersonation?: ImpersonationConfig;
  connectArgs?: SecretString;
}

export interface OAuthClientConfig {
  provider: SecretString;
  clientId: SecretString;
  authorityUrl: SecretString;
  useCertificate?: boolean;
  publicCertificateThumbprint?: SecretString;
  oauthPrivateKey?: SecretString;
  clientSecret?: SecretString;
  resource?: SecretString;
}

export interface CloudWarehouseConfig {
  host: SecretString;
  warehouse: SecretString;
  database: SecretString;
  authenticationType: 'userPassword' | 'keyPair' | 'oAuth';
  username?: SecretString;
  password?: SecretString;
  privateKey?: SecretString;
  oAuthClientConfig?: OAuthClientConfig;
  role?: SecretString;
  port?: number;
  audit?: { enabled?: boolean; historicalIngestionMonths?: number };
  impersonation?: ImpersonationConfig;
  userRolePattern?: { exclude?: string[] };
  workspaces?: { enabled?: boolean; warehouses?: string[] };
  connectArgs?: SecretString;
  privilegedConnectArgs?: SecretString;
  lineage?: {
    enabled?: boolean;
    lineageConfig?: { tableFilter?: string; tagFilterRegex?: string; ingestBatchSize?: number };
  };
}

/** The 2.9 delete payloads as written in `spec.deleteCredentials`. */
export interface DeleteCredentials {
  authenticationType: 'userPassword' | 'accessKey' | 'okta' | 'keyPair' | 'oAuth';
  username?: SecretString;
  password?: SecretString;
  databaseUser?: SecretString;
  accessKeyId?: SecretString;
  secretKey?: SecretString;
  sessionToken?: SecretString;
  okta?: OktaConfig;
  privateKey?: SecretString;
  oAuthClientConfig?: OAuthClientConfig;
  role?: SecretString;
}
