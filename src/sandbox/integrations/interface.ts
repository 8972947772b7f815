/**
 * The integration config tables of the service interface (2.3-2.11) and the delete payloads (2.9), written
 * down as data from the interface document itself, not from govops' schemas: the sandbox models the
 * service, so a misreading in govops' manifest schemas shows up as a disagreement in the tests
 * (test/sandbox/contract.test.ts) instead of being shared by both.
 */
import type { IntegrationType } from '../../kinds/registry.js';

export type Obj = Record<string, unknown>;

/** A condition on the object holding a field (and the body's autoBootstrap), with its wording. */
export interface Condition {
  text: string;
  holds(parent: Obj, autoBootstrap: boolean): boolean;
}

export interface FieldSpec {
  type: 'string' | 'number' | 'boolean' | 'object' | 'array';
  /** Required always (true) or when the condition holds. */
  required?: true | Condition;
  /** Applied when the field is absent. For objects: filled (sub-defaults) when absent ("disabled" in the tables). */
  default?: unknown;
  enum?: readonly string[];
  min?: number;
  max?: number;
  /** A rule stated in the table ("Valid URL hostname", "must start with an underscore"...). */
  rule?: { text: string; test(value: string): boolean };
  fields?: Record<string, FieldSpec>;
  /** Arrays: items are strings. */
  items?: 'string';
}

const when = (field: string, value: unknown): Condition => ({
  text: `when ${field} is ${String(value)}`,
  holds: (parent) => parent[field] === value,
});
const whenAuto: Condition = { text: 'when autoBootstrap is true', holds: (_p, auto) => auto };
/** useCertificate is optional with default true. */
const whenCertificate = (on: boolean): Condition => ({
  text: `when useCertificate is ${String(on)}`,
  holds: (parent) => (parent.useCertificate ?? true) === on,
});

const S = (extra: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'string', ...extra });
const REQ = { required: true } as const;

const port = (def: number): FieldSpec => ({ type: 'number', default: def, min: 0, max: 65535 });

/** A label of a URL's host: letters, digits, `-` (not at either end) and `_` (RFC 3986 reg-name; DNS host names refuse it). */
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*\\.?$`);

/** "Valid URL hostname": a host name (or address), without scheme, port or path; `_` included (account hosts hold it). */
export const hostnameRule = { text: 'must be a valid host name (no scheme, port or path)', test: (v: string) => HOSTNAME.test(v) };

/** "Workspace URL": the workspace's URL, or its host as the service's users commonly write it. */
const workspaceRule = {
  text: 'must be the workspace URL (https://host/...) or host',
  test: (v: string): boolean => {
    try {
      const u = new URL(v.includes('://') ? v : `https://${v}`);
      return (u.protocol === 'https:' || u.protocol === 'http:') && HOSTNAME.test(u.hostname);
    } catch {
      return false;
    }
  },
};

/** cloud_warehouse `privateKey` (2.8): "New lines in the key are replaced by a backslash followed by n". */
const privateKeyRule = {
  text: 'must have its new lines replaced by a backslash followed by n (2.8)',
  test: (v: string): boolean => !/[\r\n]/.test(v),
};

const impersonation = (role: string): FieldSpec => ({
  type: 'object',
  default: {},
  fields: { enabled: { type: 'boolean', default: false }, role: S({ default: role }) },
});

const okta: FieldSpec = {
  type: 'object',
  fields: { username: S(REQ), password: S(REQ), appId: S(REQ), idpHost: S(REQ), role: S(REQ) },
};

const oAuthClientConfig: FieldSpec = {
  type: 'object',
  fields: {
    provider: S(REQ),
    clientId: S(REQ),
    authorityUrl: S(REQ),
    useCertificate: { type: 'boolean', default: true },
    publicCertificateThumbprint: S({ required: whenCertificate(true) }),
    oauthPrivateKey: S({ required: whenCertificate(true) }),
    clientSecret: S({ required: whenCertificate(false) }),
    resource: S(),
  },
};

/** Config tables 2.3-2.8 (distributed_sql: "not shown"; it is created with only `type`). */
export const CONFIG: Readonly<Record<Exclude<IntegrationType, 'distributed_sql'>, Record<string, FieldSpec>>> = {
  object_store: {
    name: S(REQ),
    cloudAccountId: S(REQ),
    cloudRegion: S(REQ),
    cloudLocationRole: S(REQ),
    cloudLocationPath: S(REQ),
    cloudRoleToAssume: S({ default: [] }),
    authenticationType: S({ ...REQ, enum: ['auto', 'accessKey'] }),
    cloudAccessKeyId: S({ required: when('authenticationType', 'accessKey') }),
    cloudSecretAccessKey: S({ required: when('authenticationType', 'accessKey') }),
    port: port(443),
  },
  sql_analytics: {
    host: S({ ...REQ, rule: hostnameRule }),
    database: S(REQ),
    schema: S(REQ),
    username: S(REQ),
    password: S(REQ),
    metadataDelimiters: {
      type: 'object',
      default: {},
      fields: { hashDelimiter: S({ default: '|' }), hashKeyDelimiter: S({ default: ':' }), arrayDelimiter: S({ default: ',' }) },
    },
    port: port(1433),
    impersonation: impersonation('SERVICE_IMPERSONATION'),
    connectArgs: S(),
  },
  lakehouse: {
    port: port(443),
    workspaceUrl: S({ ...REQ, rule: workspaceRule }),
    httpPath: S(REQ),
    token: S(REQ),
    audit: { type: 'object', default: {}, fields: { enabled: { type: 'boolean', default: false } } },
    catalog: S({
      default: 'service',
      rule: { text: 'letters, numbers and underscores only, not starting with a number', test: (v) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(v) },
    }),
    groupPattern: { type: 'object', fields: { deny: S({ default: 'service_exemption_group' }) } },
  },
  dataset_warehouse: {
    role: S(REQ),
    datasetSuffix: S({ ...REQ, rule: { text: 'must start with an underscore', test: (v) => v.startsWith('_') } }),
    dataset: S({ default: 'service' }),
    location: S(REQ),
    credential: S(REQ),
    port: port(443),
  },
  columnar_warehouse: {
    host: S({ ...REQ, rule: hostnameRule }),
    database: S(REQ),
    initialDatabase: S({ required: whenAuto }),
    authenticationType: S({ ...REQ, enum: ['userPassword', 'accessKey', 'okta'] }),
    username: S({ required: when('authenticationType', 'userPassword') }),
    password: S({ required: when('authenticationType', 'userPassword') }),
    okta: { ...okta, required: when('authenticationType', 'okta') },
    databaseUser: S({ required: when('authenticationType', 'accessKey') }),
    accessKeyId: S({ required: when('authenticationType', 'accessKey') }),
    secretKey: S({ required: when('authenticationType', 'accessKey') }),
    sessionToken: S(),
    port: port(5439),
    impersonation: impersonation('service_impersonation'),
    connectArgs: S(),
  },
  cloud_warehouse: {
    host: S({ ...REQ, rule: hostnameRule }),
    warehouse: S(REQ),
    database: S(REQ),
    authenticationType: S({ ...REQ, enum: ['userPassword', 'keyPair', 'oAuth'] }),
    username: S({ required: when('authenticationType', 'userPassword') }),
    password: S({ required: when('authenticationType', 'userPassword') }),
    privateKey: S({ required: when('authenticationType', 'keyPair'), rule: privateKeyRule }),
    oAuthClientConfig: { ...oAuthClientConfig, required: when('authenticationType', 'oAuth') },
    role: S({ required: whenAuto }),
    port: port(443),
    audit: {
      type: 'object',
      default: {},
      fields: {
        enabled: { type: 'boolean', default: false },
        historicalIngestionMonths: { type: 'number', default: 3, min: 1, max: 12 },
      },
    },
    impersonation: impersonation('SERVICE_IMPERSONATION'),
    userRolePattern: { type: 'object', fields: { exclude: { type: 'array', items: 'string', default: [] } } },
    workspaces: {
      type: 'object',
      default: {},
      fields: { enabled: { type: 'boolean', default: false }, warehouses: { type: 'array', items: 'string', default: [] } },
    },
    connectArgs: S(),
    privilegedConnectArgs: S(),
    lineage: {
      type: 'object',
      fields: {
        enabled: { type: 'boolean', default: false },
        lineageConfig: {
          type: 'object',
          required: when('enabled', true),
          fields: {
            tableFilter: S({ default: '^.*$' }),
            tagFilterRegex: S({ default: '^.*$' }),
            ingestBatchSize: { type: 'number', default: 1000, min: 1 },
          },
        },
      },
    },
  },
};

/** Delete payloads (2.9), for the kinds that have one (when created with autoBootstrap true). */
export const DELETE_PAYLOAD: Readonly<Partial<Record<IntegrationType, Record<string, FieldSpec>>>> = {
  sql_analytics: {
    authenticationType: S({ ...REQ, enum: ['userPassword'] }),
    username: S(REQ),
    password: S(REQ),
  },
  columnar_warehouse: {
    authenticationType: S({ ...REQ, enum: ['userPassword', 'accessKey', 'okta'] }),
    username: S({ required: when('authenticationType', 'userPassword') }),
    password: S({ required: when('authenticationType', 'userPassword') }),
    databaseUser: S({ required: when('authenticationType', 'accessKey') }),
    accessKeyId: S({ required: when('authenticationType', 'accessKey') }),
    secretKey: S({ required: when('authenticationType', 'accessKey') }),
    sessionToken: S(),
    okta: { ...okta, required: when('authenticationType', 'okta') },
  },
  cloud_warehouse: {
    authenticationType: S({ ...REQ, enum: ['userPassword', 'keyPair', 'oAuth'] }),
    username: S({ required: when('authenticationType', 'userPassword') }),
    password: S({ required: when('authenticationType', 'userPassword') }),
    privateKey: S({ required: when('authenticationType', 'keyPair'), rule: privateKeyRule }),
    oAuthClientConfig: { ...oAuthClientConfig, required: when('authenticationType', 'oAuth') },
    // "required when autoBootstrap is true": a delete payload is only sent for such integrations
    role: S(REQ),
  },
};
