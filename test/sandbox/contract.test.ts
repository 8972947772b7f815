/**
 * govops' manifest schemas against the sandbox's request validation, which is written from the interface
 * tables (src/sandbox/integrations/interface.ts) and shares nothing with schemas/. One case per rule of
 * docs/contract.md: what govops rejects, the service rejects (400); what govops only warns about or accepts,
 * the service accepts. A misreading in either shows up here as a disagreement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDataSources } from '../../src/manifests/data-sources.js';
import { parseManifestText } from '../../src/manifests/parse.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bearer, bodyFor, call, settle, start } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());

type Verdict = 'valid' | 'warning' | 'invalid';
interface Case {
  rule: string;
  type: string;
  /** Applied to the valid body of the kind (bodyFor); `undefined` values delete the key. */
  config?: Record<string, unknown>;
  autoBootstrap?: boolean;
  /** The body itself, when the case is not a config change. */
  body?: Record<string, unknown>;
  expect: Verdict;
}

function bodyOf(c: Case): Record<string, unknown> {
  if (c.body) return c.body;
  const base = bodyFor(c.type, 7) as { type: string; autoBootstrap?: boolean; config?: Record<string, unknown> };
  const config = { ...base.config, ...c.config };
  for (const [k, v] of Object.entries(c.config ?? {})) if (v === undefined) delete config[k];
  return { type: c.type, autoBootstrap: c.autoBootstrap ?? base.autoBootstrap, config };
}

/** govops' verdict on the body written as a manifest (plain-literal credential warnings aside). */
function govops(body: Record<string, unknown>): { verdict: Verdict; messages: string[] } {
  const manifest = { apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'case' }, spec: body };
  const { diagnostics } = parseManifestText(JSON.stringify(manifest), 'case.yaml', '/tmp');
  const relevant = diagnostics.filter((d) => !/is a plain literal/.test(d.message));
  const verdict = relevant.some((d) => d.severity === 'error') ? 'invalid' : relevant.length ? 'warning' : 'valid';
  return { verdict, messages: relevant.map((d) => `${d.severity}: ${d.message}`) };
}

const cases: Case[] = [
  // 2.1 / 4.1 body
  { rule: '4.1 type is one of the seven kinds', type: 'x', body: { type: 'lakehous', autoBootstrap: true, config: {} }, expect: 'invalid' },
  { rule: '4.1 autoBootstrap required (not distributed_sql)', type: 'lakehouse', body: { type: 'lakehouse', config: bodyFor('lakehouse', 7).config as object }, expect: 'invalid' },
  { rule: '4.1 config required (not distributed_sql)', type: 'lakehouse', body: { type: 'lakehouse', autoBootstrap: true }, expect: 'invalid' },
  { rule: '4.1 distributed_sql with only type', type: 'distributed_sql', body: { type: 'distributed_sql' }, expect: 'valid' },
  { rule: '4.1 autoBootstrap false for object_store', type: 'object_store', autoBootstrap: true, expect: 'invalid' },
  { rule: '4.1 autoBootstrap false for dataset_warehouse', type: 'dataset_warehouse', autoBootstrap: true, expect: 'invalid' },
  { rule: '4.1 autoBootstrap is a boolean', type: 'lakehouse', body: { type: 'lakehouse', autoBootstrap: 'yes', config: bodyFor('lakehouse', 7).config as object }, expect: 'invalid' },
  // 2.3 object_store
  { rule: '2.3 name required', type: 'object_store', config: { name: undefined }, expect: 'invalid' },
  { rule: '2.3 cloudLocationPath required', type: 'object_store', config: { cloudLocationPath: undefined }, expect: 'invalid' },
  { rule: '2.3 authenticationType auto or accessKey', type: 'object_store', config: { authenticationType: 'iam' }, expect: 'invalid' },
  { rule: '2.3 access keys required with accessKey', type: 'object_store', config: { cloudSecretAccessKey: undefined }, expect: 'invalid' },
  { rule: '2.3 access keys not used with auto (warning)', type: 'object_store', config: { authenticationType: 'auto' }, expect: 'warning' },
  { rule: '2.3 cloudRoleToAssume is a string', type: 'object_store', config: { cloudRoleToAssume: 'arn:role/assume' }, expect: 'valid' },
  { rule: '8 port 0-65535', type: 'object_store', config: { port: 70000 }, expect: 'invalid' },
  { rule: '2.3 port is a number', type: 'object_store', config: { port: '443' }, expect: 'invalid' },
  { rule: 'port not a whole number (warning)', type: 'object_store', config: { port: 443.5 }, expect: 'warning' },
  // 2.4 sql_analytics
  { rule: '2.4 host required', type: 'sql_analytics', config: { host: undefined }, expect: 'invalid' },
  { rule: '2.4 host is a valid URL hostname', type: 'sql_analytics', config: { host: 'https://sql.example.com/db' }, expect: 'invalid' },
  { rule: '2.4 host: a URL hostname may hold an underscore (RFC 3986 reg-name)', type: 'sql_analytics', config: { host: 'pool_1.sql.example.com' }, expect: 'valid' },
  { rule: '2.4 host: no port', type: 'sql_analytics', config: { host: 'sql.example.com:1433' }, expect: 'invalid' },
  { rule: '2.4 password required', type: 'sql_analytics', config: { password: undefined }, expect: 'invalid' },
  { rule: '2.4 metadataDelimiters strings', type: 'sql_analytics', config: { metadataDelimiters: { hashDelimiter: 1 } }, expect: 'invalid' },
  { rule: '2.10 impersonation.enabled boolean', type: 'sql_analytics', config: { impersonation: { enabled: 'yes' } }, expect: 'invalid' },
  { rule: '2.10 impersonation with role', type: 'sql_analytics', config: { impersonation: { enabled: true, role: 'IMP' } }, expect: 'valid' },
  { rule: 'empty required string (warning)', type: 'sql_analytics', config: { schema: '' }, expect: 'warning' },
  { rule: 'unknown config field (warning)', type: 'sql_analytics', config: { hots: 'x' }, expect: 'warning' },
  // 2.5 lakehouse
  { rule: '2.5 workspaceUrl as a bare host', type: 'lakehouse', config: { workspaceUrl: 'my-workspace.cloud.example.com' }, expect: 'valid' },
  { rule: '2.5 workspaceUrl as an https URL', type: 'lakehouse', config: { workspaceUrl: 'https://my-workspace.cloud.example.com/' }, expect: 'valid' },
  { rule: '2.5 workspaceUrl is a URL or host', type: 'lakehouse', config: { workspaceUrl: 'ftp://w.example.com' }, expect: 'invalid' },
  { rule: '2.5 workspaceUrl: a URL with a port of 0-65535 (8 Port range)', type: 'lakehouse', config: { workspaceUrl: 'https://w.example.com:8443/' }, expect: 'valid' },
  { rule: '2.5 workspaceUrl: a URL whose port is out of range is no URL', type: 'lakehouse', config: { workspaceUrl: 'https://w.example.com:99999/' }, expect: 'invalid' },
  { rule: '2.5 token required', type: 'lakehouse', config: { token: undefined }, expect: 'invalid' },
  { rule: '2.5 catalog letters, numbers, underscores', type: 'lakehouse', config: { catalog: 'my-catalog' }, expect: 'invalid' },
  { rule: '2.5 catalog not starting with a number', type: 'lakehouse', config: { catalog: '1cat' }, expect: 'invalid' },
  { rule: '2.5 audit.enabled boolean', type: 'lakehouse', config: { audit: { enabled: 1 } }, expect: 'invalid' },
  { rule: '2.5 groupPattern.deny string', type: 'lakehouse', config: { groupPattern: { deny: 'admins' } }, expect: 'valid' },
  // 2.6 dataset_warehouse
  { rule: '2.6 datasetSuffix starts with an underscore', type: 'dataset_warehouse', config: { datasetSuffix: 'secure' }, expect: 'invalid' },
  { rule: '2.6 credential required', type: 'dataset_warehouse', config: { credential: undefined }, expect: 'invalid' },
  { rule: '2.6 location required', type: 'dataset_warehouse', config: { location: undefined }, expect: 'invalid' },
  // 2.7 columnar_warehouse
  { rule: '2.7 initialDatabase when autoBootstrap', type: 'columnar_warehouse', config: { initialDatabase: undefined }, expect: 'invalid' },
  { rule: '2.7 no initialDatabase needed without autoBootstrap', type: 'columnar_warehouse', autoBootstrap: false, config: { initialDatabase: undefined }, expect: 'valid' },
  { rule: '2.7 authenticationType enum', type: 'columnar_warehouse', config: { authenticationType: 'Okta' }, expect: 'invalid' },
  { rule: '2.7 accessKey needs databaseUser, accessKeyId, secretKey', type: 'columnar_warehouse', config: { authenticationType: 'accessKey', databaseUser: 'd', accessKeyId: 'a', username: undefined, password: undefined }, expect: 'invalid' },
  { rule: '2.7 accessKey with sessionToken', type: 'columnar_warehouse', config: { authenticationType: 'accessKey', databaseUser: 'd', accessKeyId: 'a', secretKey: 's', sessionToken: 't', username: undefined, password: undefined }, expect: 'valid' },
  { rule: '2.7 password not used with accessKey (warning)', type: 'columnar_warehouse', config: { authenticationType: 'accessKey', databaseUser: 'd', accessKeyId: 'a', secretKey: 's', username: undefined }, expect: 'warning' },
  { rule: '2.11 okta object complete', type: 'columnar_warehouse', config: { authenticationType: 'okta', username: undefined, password: undefined, okta: { username: 'u', password: 'p', appId: 'a', idpHost: 'https://idp' } }, expect: 'invalid' },
  { rule: '2.11 okta', type: 'columnar_warehouse', config: { authenticationType: 'okta', username: undefined, password: undefined, okta: { username: 'u', password: 'p', appId: 'a', idpHost: 'https://idp', role: 'r' } }, expect: 'valid' },
  // 2.8 cloud_warehouse
  { rule: '2.8 role when autoBootstrap', type: 'cloud_warehouse', config: { role: undefined }, expect: 'invalid' },
  { rule: '2.8 host of an account name with an underscore', type: 'cloud_warehouse', config: { host: 'myorg-my_account.snowflakecomputing.com' }, expect: 'valid' },
  { rule: '2.8 warehouse required', type: 'cloud_warehouse', config: { warehouse: undefined }, expect: 'invalid' },
  { rule: '2.8 keyPair needs privateKey', type: 'cloud_warehouse', config: { authenticationType: 'keyPair', password: undefined }, expect: 'invalid' },
  { rule: '2.8 oAuth needs oAuthClientConfig', type: 'cloud_warehouse', autoBootstrap: false, config: { authenticationType: 'oAuth', password: undefined, role: undefined }, expect: 'invalid' },
  { rule: '2.8 oAuth requires autoBootstrap false', type: 'cloud_warehouse', config: { authenticationType: 'oAuth', password: undefined, oAuthClientConfig: { provider: 'p', clientId: 'c', authorityUrl: 'a', useCertificate: false, clientSecret: 's' } }, expect: 'invalid' },
  { rule: '2.8 useCertificate (default true) needs thumbprint and key', type: 'cloud_warehouse', autoBootstrap: false, config: { authenticationType: 'oAuth', password: undefined, role: undefined, oAuthClientConfig: { provider: 'p', clientId: 'c', authorityUrl: 'a' } }, expect: 'invalid' },
  { rule: '2.8 useCertificate false needs clientSecret', type: 'cloud_warehouse', autoBootstrap: false, config: { authenticationType: 'oAuth', password: undefined, role: undefined, oAuthClientConfig: { provider: 'p', clientId: 'c', authorityUrl: 'a', useCertificate: false } }, expect: 'invalid' },
  { rule: '2.8 oAuth with certificate', type: 'cloud_warehouse', autoBootstrap: false, config: { authenticationType: 'oAuth', password: undefined, role: undefined, oAuthClientConfig: { provider: 'p', clientId: 'c', authorityUrl: 'a', publicCertificateThumbprint: 't', oauthPrivateKey: 'k' } }, expect: 'valid' },
  { rule: '2.8 historicalIngestionMonths 1-12', type: 'cloud_warehouse', config: { audit: { enabled: true, historicalIngestionMonths: 13 } }, expect: 'invalid' },
  { rule: '2.8 ingestBatchSize minimum 1', type: 'cloud_warehouse', config: { lineage: { enabled: true, lineageConfig: { ingestBatchSize: 0 } } }, expect: 'invalid' },
  { rule: '2.8 lineageConfig required when enabled', type: 'cloud_warehouse', config: { lineage: { enabled: true } }, expect: 'invalid' },
  { rule: '2.8 lineage filters (any text; a non-JS regex is a warning)', type: 'cloud_warehouse', config: { lineage: { enabled: true, lineageConfig: { tableFilter: '(?i)^fin.*$' } } }, expect: 'warning' },
  { rule: '2.8 userRolePattern.exclude strings', type: 'cloud_warehouse', config: { userRolePattern: { exclude: [1] } }, expect: 'invalid' },
  { rule: '2.8 workspaces.warehouses strings', type: 'cloud_warehouse', config: { workspaces: { enabled: true, warehouses: ['A', 'B'] } }, expect: 'valid' },
];

describe('govops validate and the service agree on every rule (docs/contract.md)', () => {
  it.each(cases)('$rule', async (c) => {
    const body = bodyOf(c);
    const mine = govops(body);
    expect(mine.verdict, mine.messages.join('\n')).toBe(c.expect);
    const res = await call(sb, 'POST', '/integrations?dryRun=true', { body });
    const service = res.status === 200 ? 'accepted' : res.status === 400 ? 'rejected' : `HTTP ${res.status}`;
    expect(service, res.text).toBe(c.expect === 'invalid' ? 'rejected' : 'accepted');
  });
});

describe('webhooks: govops validate and POST /webhooks agree', () => {
  const ok = { url: 'https://hooks.example.com/x', global: false, notificationType: ['modelCreated'], actionType: 'triggered' };
  const hookCases: Array<{ rule: string; spec: Record<string, unknown>; expect: Verdict }> = [
    { rule: '4.3 valid', spec: ok, expect: 'valid' },
    { rule: '4.3 actionType triggered or receive', spec: { ...ok, actionType: 'sent' }, expect: 'invalid' },
    { rule: '6 event names', spec: { ...ok, notificationType: ['modelCreatd'] }, expect: 'invalid' },
    { rule: '2.12 ALL_NOTIFICATIONS', spec: { ...ok, notificationType: ['ALL_NOTIFICATIONS'] }, expect: 'valid' },
    { rule: '4.3 global boolean', spec: { ...ok, global: 'no' }, expect: 'invalid' },
    { rule: 'url not http(s) (warning)', spec: { ...ok, url: 'mailto:x@example.com' }, expect: 'warning' },
    { rule: 'empty notificationType (warning)', spec: { ...ok, notificationType: [] }, expect: 'warning' },
    { rule: 'repeated notificationType (warning)', spec: { ...ok, notificationType: ['modelCreated', 'modelCreated'] }, expect: 'warning' },
  ];
  it.each(hookCases)('$rule', async (c) => {
    const manifest = { apiVersion: 'govops/v1', kind: 'Webhook', metadata: { name: 'hook' }, spec: c.spec };
    const { diagnostics } = parseManifestText(JSON.stringify(manifest), 'h.yaml', '/tmp');
    const verdict = diagnostics.some((d) => d.severity === 'error') ? 'invalid' : diagnostics.length ? 'warning' : 'valid';
    expect(verdict, diagnostics.map((d) => d.message).join('\n')).toBe(c.expect);
    const res = await call(sb, 'POST', '/webhooks', { token: bearer(sb.adminToken), body: { webhooks: [{ ...c.spec, name: 'hook' }] } });
    expect(res.status).toBe(200);
    expect(res.body.errors.length === 0 ? 'accepted' : 'rejected', JSON.stringify(res.body.errors)).toBe(c.expect === 'invalid' ? 'rejected' : 'accepted');
  });
});

describe('data sources: govops validate and the create endpoint agree (interface 2.3)', () => {
  const dsCases: Array<{ rule: string; location: string; items: Array<{ dataSourceName: unknown; prefix: unknown }>; expect: Verdict }> = [
    { rule: '2.3 valid', location: 's3://bucket-7/base', items: [{ dataSourceName: 'a', prefix: 's3://bucket-7/base/a' }], expect: 'valid' },
    { rule: '2.3 several under one location', location: 's3://bucket-7/', items: [{ dataSourceName: 'a', prefix: 's3://bucket-7/a' }, { dataSourceName: 'b', prefix: 's3://bucket-7/b/*' }], expect: 'valid' },
    { rule: '2.3 the location itself', location: 's3://bucket-7/base/', items: [{ dataSourceName: 'a', prefix: 's3://bucket-7/base' }], expect: 'valid' },
    { rule: '2.3 prefix under cloudLocationPath', location: 's3://bucket-7/base', items: [{ dataSourceName: 'a', prefix: 's3://other/a' }], expect: 'invalid' },
    { rule: '2.3 under at a path boundary', location: 's3://bucket-7/base', items: [{ dataSourceName: 'a', prefix: 's3://bucket-7/basement' }], expect: 'invalid' },
    { rule: '2.3 prefix is a string', location: 's3://bucket-7/', items: [{ dataSourceName: 'a', prefix: 7 }], expect: 'invalid' },
    { rule: '2.3 dataSourceName is a string', location: 's3://bucket-7/', items: [{ dataSourceName: true, prefix: 's3://bucket-7/a' }], expect: 'invalid' },
    { rule: 'identity: one prefix once per integration', location: 's3://bucket-7/', items: [{ dataSourceName: 'a', prefix: 's3://bucket-7/a' }, { dataSourceName: 'b', prefix: 's3://bucket-7/a' }], expect: 'invalid' },
    { rule: 'names unique per integration', location: 's3://bucket-7/', items: [{ dataSourceName: 'a', prefix: 's3://bucket-7/a' }, { dataSourceName: 'a', prefix: 's3://bucket-7/b' }], expect: 'invalid' },
    { rule: 'empty name (warning)', location: 's3://bucket-7/', items: [{ dataSourceName: '', prefix: 's3://bucket-7/a' }], expect: 'warning' },
  ];
  it.each(dsCases)('$rule', async (c) => {
    sb.reset();
    const integration = { apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'store' }, spec: { ...bodyFor('object_store', 7), config: { ...(bodyFor('object_store', 7).config as object), cloudLocationPath: c.location } } };
    const texts = [integration, ...c.items.map((item, i) => ({ apiVersion: 'govops/v1', kind: 'DataSource', metadata: { name: `ds-${i}` }, spec: { integration: 'store', ...item } }))];
    const parsed = texts.map((m, i) => parseManifestText(JSON.stringify(m), `m${i}.yaml`, '/tmp'));
    const diagnostics = [...parsed.flatMap((p) => p.diagnostics), ...checkDataSources(parsed.flatMap((p) => p.manifests))].filter((d) => !/is a plain literal/.test(d.message));
    const verdict = diagnostics.some((d) => d.severity === 'error') ? 'invalid' : diagnostics.length ? 'warning' : 'valid';
    expect(verdict, diagnostics.map((d) => d.message).join('\n')).toBe(c.expect);
    const created = await call(sb, 'POST', '/integrations', { body: integration.spec });
    expect(await settle(sb, created.body.id)).toBe('enabled');
    const res = await call(sb, 'POST', '/native-s3/handler', { body: { type: 'object_store', integrationId: Number(created.body.id), dataSources: c.items } });
    const service = res.status === 200 ? 'accepted' : res.status === 400 || res.status === 409 ? 'rejected' : `HTTP ${res.status}`;
    expect(service, res.text).toBe(c.expect === 'invalid' ? 'rejected' : 'accepted');
  });
});

describe('a lakehouse workspace is its host', () => {
  it('`https://h/` and `h` are the same workspace: 409 on a second create, and not a change of a non-editable attribute', async () => {
    const body = { type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'https://same.example.com/', httpPath: '/p', token: 't' } };
    const made = await call(sb, 'POST', '/integrations', { body });
    expect(made.status).toBe(200);
    const again = await call(sb, 'POST', '/integrations?dryRun=true', { body: { ...body, config: { ...body.config, workspaceUrl: 'SAME.example.com' } } });
    expect(again.status).toBe(409);
    const put = await call(sb, 'PUT', `/integrations/${made.body.id}?dryRun=true`, { body: { ...body, config: { ...body.config, workspaceUrl: 'same.example.com' } } });
    expect(put.status, put.text).toBe(200);
    const moved = await call(sb, 'PUT', `/integrations/${made.body.id}?dryRun=true`, { body: { ...body, config: { ...body.config, workspaceUrl: 'other.example.com' } } });
    expect(moved.status).toBe(400);
    expect(moved.body.message).toContain('config.workspaceUrl');
  });
});
