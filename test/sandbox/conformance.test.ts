/**
 * Row-by-row conformance of the integration payload rules (interface 2.3-2.11, 8) over real HTTP:
 * every required / conditional / range / pattern rule is a 400 naming the field, the defaults of every
 * kind are filled in, every credential key is masked, and the id quirk holds in every body.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { MASK } from '../../src/service/kinds.js';
import { bodyFor, call, settle, start, DELETE_PAYLOAD, CLOUD_DELETE_PAYLOAD, KINDS } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 20 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.reset());

type Config = Record<string, unknown>;
type Body = { type: string; autoBootstrap?: boolean; config?: Config };

/** bodyFor(kind) with its config changed by `edit` (and autoBootstrap by `auto` when given). */
function variant(kind: string, edit: (c: Config) => void, auto?: boolean): Body {
  const b = structuredClone(bodyFor(kind)) as Body;
  edit(b.config!);
  if (auto !== undefined) b.autoBootstrap = auto;
  return b;
}

const cwOAuth = (oauth: Config): ((c: Config) => void) => (c) => {
  c.authenticationType = 'oAuth';
  delete c.password;
  delete c.role;
  c.oAuthClientConfig = { provider: 'p', clientId: 'id', authorityUrl: 'https://login.example.com', ...oauth };
};
const colAuth = (auth: string, extra: Config): ((c: Config) => void) => (c) => {
  c.authenticationType = auth;
  delete c.username;
  delete c.password;
  Object.assign(c, extra);
};
const okta = { username: 'o', password: 'op', appId: 'a', idpHost: 'https://idp.example.com', role: 'r' };
const accessKey = { databaseUser: 'du', accessKeyId: 'AK', secretKey: 'sk' };

/** [rule, invalid body, field the 400 names, a valid body differing only in that rule]. */
const RULES: Array<[string, Body, string, Body]> = [
  ['2.3 object_store cloudSecretAccessKey required with accessKey', variant('object_store', (c) => delete c.cloudSecretAccessKey), 'cloudSecretAccessKey', variant('object_store', (c) => (c.authenticationType = 'auto', delete c.cloudAccessKeyId, delete c.cloudSecretAccessKey))],
  ['2.3 object_store cloudAccessKeyId required with accessKey', variant('object_store', (c) => delete c.cloudAccessKeyId), 'cloudAccessKeyId', variant('object_store', (c) => (c.authenticationType = 'auto', delete c.cloudAccessKeyId, delete c.cloudSecretAccessKey))],
  ['2.3 object_store authenticationType auto|accessKey', variant('object_store', (c) => (c.authenticationType = 'iam')), 'authenticationType', bodyFor('object_store') as Body],
  ['2.3 object_store cloudRegion required', variant('object_store', (c) => delete c.cloudRegion), 'cloudRegion', bodyFor('object_store') as Body],
  ['2.4 sql_analytics schema required', variant('sql_analytics', (c) => delete c.schema), 'schema', bodyFor('sql_analytics') as Body],
  ['2.4 sql_analytics host is a hostname', variant('sql_analytics', (c) => (c.host = 'not a host')), 'host', bodyFor('sql_analytics') as Body],
  ['2.5 lakehouse token required', variant('lakehouse', (c) => delete c.token), 'token', bodyFor('lakehouse') as Body],
  ['2.5 lakehouse catalog must not start with a number', variant('lakehouse', (c) => (c.catalog = '1cat')), 'catalog', variant('lakehouse', (c) => (c.catalog = 'cat_1'))],
  ['2.5 lakehouse catalog letters, numbers, underscores', variant('lakehouse', (c) => (c.catalog = 'my-cat')), 'catalog', variant('lakehouse', (c) => (c.catalog = 'my_cat'))],
  ['2.6 dataset_warehouse datasetSuffix starts with _', variant('dataset_warehouse', (c) => (c.datasetSuffix = 'secure')), 'datasetSuffix', bodyFor('dataset_warehouse') as Body],
  ['2.6 dataset_warehouse location required', variant('dataset_warehouse', (c) => delete c.location), 'location', bodyFor('dataset_warehouse') as Body],
  ['2.7 columnar initialDatabase if autoBootstrap', variant('columnar_warehouse', (c) => delete c.initialDatabase), 'initialDatabase', variant('columnar_warehouse', (c) => delete c.initialDatabase, false)],
  ['2.7 columnar authenticationType enum', variant('columnar_warehouse', (c) => (c.authenticationType = 'keyPair')), 'authenticationType', bodyFor('columnar_warehouse') as Body],
  ['2.7 columnar accessKey needs secretKey', variant('columnar_warehouse', colAuth('accessKey', { databaseUser: 'du', accessKeyId: 'AK' })), 'secretKey', variant('columnar_warehouse', colAuth('accessKey', accessKey))],
  ['2.7 columnar okta object required with okta', variant('columnar_warehouse', colAuth('okta', {})), 'okta', variant('columnar_warehouse', colAuth('okta', { okta }))],
  ...(['username', 'password', 'appId', 'role'] as const).map((f): [string, Body, string, Body] => [`2.11 okta object needs ${f}`, variant('columnar_warehouse', colAuth('okta', { okta: { ...okta, [f]: undefined } })), `okta.${f}`, variant('columnar_warehouse', colAuth('okta', { okta }))]),
  ['2.11 okta object needs idpHost', variant('columnar_warehouse', colAuth('okta', { okta: { ...okta, idpHost: undefined } })), 'idpHost', variant('columnar_warehouse', colAuth('okta', { okta }))],
  ['2.8 cloud_warehouse warehouse required', variant('cloud_warehouse', (c) => delete c.warehouse), 'warehouse', bodyFor('cloud_warehouse') as Body],
  ['2.8 cloud_warehouse role when autoBootstrap', variant('cloud_warehouse', (c) => delete c.role), 'role', variant('cloud_warehouse', (c) => delete c.role, false)],
  ['2.8 cloud_warehouse privateKey if keyPair', variant('cloud_warehouse', (c) => (c.authenticationType = 'keyPair', delete c.password)), 'privateKey', variant('cloud_warehouse', (c) => (c.authenticationType = 'keyPair', delete c.password, c.privateKey = 'k\\nk'))],
  ['2.8 oAuth requires autoBootstrap false', variant('cloud_warehouse', cwOAuth({ publicCertificateThumbprint: 't', oauthPrivateKey: 'k' }), true), 'autoBootstrap', variant('cloud_warehouse', cwOAuth({ publicCertificateThumbprint: 't', oauthPrivateKey: 'k' }), false)],
  ['2.8 oAuth certificate needs a thumbprint', variant('cloud_warehouse', cwOAuth({ oauthPrivateKey: 'k' }), false), 'publicCertificateThumbprint', variant('cloud_warehouse', cwOAuth({ publicCertificateThumbprint: 't', oauthPrivateKey: 'k' }), false)],
  ['2.8 oAuth without certificate needs clientSecret', variant('cloud_warehouse', cwOAuth({ useCertificate: false }), false), 'clientSecret', variant('cloud_warehouse', cwOAuth({ useCertificate: false, clientSecret: 's' }), false)],
  ['2.8 / 8 historicalIngestionMonths 1-12', variant('cloud_warehouse', (c) => (c.audit = { enabled: true, historicalIngestionMonths: 13 })), 'historicalIngestionMonths', variant('cloud_warehouse', (c) => (c.audit = { enabled: true, historicalIngestionMonths: 12 }))],
  ['2.8 / 8 historicalIngestionMonths minimum 1', variant('cloud_warehouse', (c) => (c.audit = { enabled: true, historicalIngestionMonths: 0 })), 'historicalIngestionMonths', variant('cloud_warehouse', (c) => (c.audit = { enabled: true, historicalIngestionMonths: 1 }))],
  ['2.8 lineageConfig required when enabled', variant('cloud_warehouse', (c) => (c.lineage = { enabled: true })), 'lineageConfig', variant('cloud_warehouse', (c) => (c.lineage = { enabled: true, lineageConfig: {} }))],
  ['2.8 / 8 ingestBatchSize minimum 1', variant('cloud_warehouse', (c) => (c.lineage = { enabled: true, lineageConfig: { ingestBatchSize: 0 } })), 'ingestBatchSize', variant('cloud_warehouse', (c) => (c.lineage = { enabled: true, lineageConfig: { ingestBatchSize: 1 } }))],
  ['4.1 autoBootstrap required', (() => { const b = bodyFor('sql_analytics') as Body; delete b.autoBootstrap; return b; })(), 'autoBootstrap', bodyFor('sql_analytics') as Body],
  ['4.1 config required', { type: 'lakehouse', autoBootstrap: true }, 'config', bodyFor('lakehouse') as Body],
  ['4.1 type is one of the seven kinds', { type: 'warehouse', autoBootstrap: false, config: {} }, 'type', { type: 'distributed_sql' }],
  ['4.1 distributed_sql takes no config fields (autoBootstrap false and an empty config are fine)', { type: 'distributed_sql', config: { host: 'x.example.com' } }, 'config', { type: 'distributed_sql', autoBootstrap: false, config: {} }],
  ['4.1 distributed_sql takes no autoBootstrap true (docs/sandbox.md)', { type: 'distributed_sql', autoBootstrap: true }, 'autoBootstrap', { type: 'distributed_sql', autoBootstrap: false, config: {} }],
];

describe('payload rules of 2.3-2.11 and 8 (POST ?dryRun=true)', () => {
  it.each(RULES)('%s', async (_rule, invalid, field, valid) => {
    const bad = await call(sb, 'POST', '/integrations?dryRun=true', { body: invalid });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(bad.body.message).toContain(field);
    const good = await call(sb, 'POST', '/integrations?dryRun=true', { body: valid });
    expect(good.status, good.text).toBe(200);
  });

  it.each(KINDS.filter((k) => k !== 'distributed_sql'))('8 port range 0-65535 for %s (also on PUT)', async (kind) => {
    for (const [port, status] of [[65536, 400], [-1, 400], [0, 200], [65535, 200]] as const) {
      const r = await call(sb, 'POST', '/integrations?dryRun=true', { body: variant(kind, (c) => (c.port = port)) });
      expect(r.status, `${kind} port ${port}`).toBe(status);
    }
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor(kind) });
    await settle(sb, c.body.id);
    const put = await call(sb, 'PUT', `/integrations/${c.body.id}`, { body: variant(kind, (cfg) => (cfg.port = 70000)) });
    expect(put.status).toBe(400);
    expect(put.body.message).toContain('port');
  });
});

describe('defaults are filled in for every kind (and returned by GET)', () => {
  const DEFAULTS: Array<[string, Body, Config]> = [
    ['object_store', bodyFor('object_store') as Body, { port: 443 }],
    ['sql_analytics', bodyFor('sql_analytics') as Body, { port: 1433, metadataDelimiters: { hashDelimiter: '|', hashKeyDelimiter: ':', arrayDelimiter: ',' }, impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION' } }],
    ['lakehouse', variant('lakehouse', (c) => (c.groupPattern = {})), { port: 443, catalog: 'service', audit: { enabled: false }, groupPattern: { deny: 'service_exemption_group' } }],
    ['dataset_warehouse', bodyFor('dataset_warehouse') as Body, { port: 443, dataset: 'service' }],
    ['columnar_warehouse', bodyFor('columnar_warehouse') as Body, { port: 5439, impersonation: { enabled: false, role: 'service_impersonation' } }],
    [
      'cloud_warehouse',
      variant('cloud_warehouse', (c) => Object.assign(c, { audit: { enabled: true }, userRolePattern: {}, lineage: { enabled: true, lineageConfig: {} } })),
      {
        port: 443,
        audit: { enabled: true, historicalIngestionMonths: 3 },
        impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION' },
        workspaces: { enabled: false, warehouses: [] },
        userRolePattern: { exclude: [] },
        lineage: { enabled: true, lineageConfig: { tableFilter: '^.*$', tagFilterRegex: '^.*$', ingestBatchSize: 1000 } },
      },
    ],
    ['cloud_warehouse oAuthClientConfig', variant('cloud_warehouse', cwOAuth({ publicCertificateThumbprint: 't', oauthPrivateKey: 'k' }), false), { oAuthClientConfig: { useCertificate: true } }],
  ];
  it.each(DEFAULTS)('%s', async (_name, body, expected) => {
    const c = await call(sb, 'POST', '/integrations', { body });
    expect(c.status, c.text).toBe(200);
    const got = await call(sb, 'GET', `/integrations/${c.body.id}`);
    expect(got.body.config).toMatchObject(expected);
    const list = await call(sb, 'GET', '/integrations');
    expect(list.body[0].config).toMatchObject(expected);
  });
});

describe('credential fields are masked at any depth, in get and list', () => {
  const SECRETS: Array<[string, Body, string[]]> = [
    ['object_store cloudSecretAccessKey', bodyFor('object_store') as Body, ['cloudSecretAccessKey']],
    ['lakehouse token', bodyFor('lakehouse') as Body, ['token']],
    ['dataset_warehouse credential', bodyFor('dataset_warehouse') as Body, ['credential']],
    ['columnar accessKey secretKey and sessionToken', variant('columnar_warehouse', colAuth('accessKey', { ...accessKey, sessionToken: 'st-secret' })), ['secretKey', 'sessionToken']],
    ['cloud_warehouse privateKey', variant('cloud_warehouse', (c) => (c.authenticationType = 'keyPair', delete c.password, c.privateKey = 'pk-secret')), ['privateKey', 'username']],
    ['oAuthClientConfig.oauthPrivateKey (nested)', variant('cloud_warehouse', cwOAuth({ publicCertificateThumbprint: 't', oauthPrivateKey: 'opk-secret' }), false), ['oAuthClientConfig.oauthPrivateKey']],
    ['oAuthClientConfig.clientSecret (nested)', variant('cloud_warehouse', cwOAuth({ useCertificate: false, clientSecret: 'cs-secret' }), false), ['oAuthClientConfig.clientSecret']],
  ];
  it.each(SECRETS)('%s', async (_name, body, paths) => {
    const c = await call(sb, 'POST', '/integrations', { body });
    expect(c.status, c.text).toBe(200);
    const got = await call(sb, 'GET', `/integrations/${c.body.id}`);
    const list = await call(sb, 'GET', '/integrations');
    for (const path of paths) {
      const keys = path.split('.');
      const value = (o: Config): unknown => keys.reduce<unknown>((x, k) => (x as Config)[k], o);
      const sent = value(body.config!);
      expect(value(got.body.config)).toBe(MASK);
      expect(value(list.body[0].config)).toBe(MASK);
      expect(got.text).not.toContain(JSON.stringify(sent));
    }
  });
});

describe('the id quirk in every body: string everywhere, number only in the status body', () => {
  it('create, dry-run create, get, list, dry-run update, update, 409 body, dry-run delete, delete, status', async () => {
    const dry = await call(sb, 'POST', '/integrations?dryRun=true', { body: bodyFor('sql_analytics') });
    expect(typeof dry.body.id).toBe('string');
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    const id = c.body.id;
    expect(id).toMatch(/^\d+$/);
    expect((await call(sb, 'GET', `/integrations/${id}/status`)).body.id).toBe(Number(id));
    await settle(sb, id);
    expect((await call(sb, 'GET', `/integrations/${id}`)).body.id).toBe(id);
    expect((await call(sb, 'GET', '/integrations')).body[0].id).toBe(id);
    const conflict = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    expect(conflict.status).toBe(409);
    expect(conflict.body.id).toBe(id);
    expect((await call(sb, 'PUT', `/integrations/${id}?dryRun=true`, { body: bodyFor('sql_analytics') })).body.id).toBe(id);
    // The transitional statuses are held while they are looked at (a loaded machine may take longer than
    // the 20 ms transition between two requests), then released: the test waits on state, not on time.
    sb.setStuckTransitions(['editing', 'deleting']);
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') })).body.id).toBe(id);
    const editing = await call(sb, 'GET', `/integrations/${id}/status`);
    expect(editing.body).toEqual({ id: Number(id), status: 'editing' });
    sb.setStuckTransitions(['deleting']);
    expect(await settle(sb, id)).toBe('enabled');
    expect((await call(sb, 'DELETE', `/integrations/${id}?dryRun=true`, { body: DELETE_PAYLOAD })).body.id).toBe(id);
    expect((await call(sb, 'DELETE', `/integrations/${id}`, { body: DELETE_PAYLOAD })).body.id).toBe(id);
    expect((await call(sb, 'GET', `/integrations/${id}/status`)).body).toEqual({ id: Number(id), status: 'deleting' });
    sb.setStuckTransitions(false);
    expect(await settle(sb, id)).toBe('removed');
  });
});

describe('2.9 delete payloads per kind (DELETE ?dryRun=true of an autoBootstrap integration)', () => {
  const CASES: Array<[string, string, Config, number]> = [
    ['sql_analytics userPassword', 'sql_analytics', DELETE_PAYLOAD, 200],
    ['sql_analytics only userPassword', 'sql_analytics', { ...DELETE_PAYLOAD, authenticationType: 'accessKey' }, 400],
    ['sql_analytics needs password', 'sql_analytics', { authenticationType: 'userPassword', username: 'a' }, 400],
    ['columnar accessKey', 'columnar_warehouse', { authenticationType: 'accessKey', ...accessKey, sessionToken: 'st' }, 200],
    ['columnar accessKey needs secretKey', 'columnar_warehouse', { authenticationType: 'accessKey', databaseUser: 'du', accessKeyId: 'AK' }, 400],
    ['columnar okta', 'columnar_warehouse', { authenticationType: 'okta', okta }, 200],
    ['columnar okta needs the okta object', 'columnar_warehouse', { authenticationType: 'okta' }, 400],
    ['cloud_warehouse userPassword with role', 'cloud_warehouse', CLOUD_DELETE_PAYLOAD, 200],
    ['cloud_warehouse keyPair needs privateKey', 'cloud_warehouse', { authenticationType: 'keyPair', role: 'R' }, 400],
    ['cloud_warehouse keyPair', 'cloud_warehouse', { authenticationType: 'keyPair', privateKey: 'k', role: 'R' }, 200],
  ];
  it.each(CASES)('%s', async (_name, kind, payload, status) => {
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor(kind) });
    await settle(sb, c.body.id);
    const r = await call(sb, 'DELETE', `/integrations/${c.body.id}?dryRun=true`, { body: payload });
    expect(r.status, r.text).toBe(status);
    if (status === 400) expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect((await call(sb, 'GET', `/integrations/${c.body.id}/status`)).body.status).toBe('enabled');
  });
});
