/**
 * Manifest shapes as users write them (schemas/ is the source of truth; these types follow it).
 */
import type { IntegrationType } from '../service/kinds.js';

export const API_VERSION = 'govops/v1';
export type ManifestKind = 'Integration' | 'Webhook';

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
  url: string;
  global: boolean;
  notificationType: string[];
  actionType: 'triggered' | 'receive';
  secret?: SecretString;
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

export type Manifest = IntegrationManifest | WebhookManifest;

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
  /** Absolute folder of the file: `fromFile` paths are relative to it. */
  dir: string;
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
}

/** The result of loading + validating a set of manifest paths. */
export interface ManifestSet {
  manifests: LoadedManifest[];
  diagnostics: Diagnostic[];
}
