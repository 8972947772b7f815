/**
 * The authentication shapes and nested defaults the random sets (arbitraries.ts) do not reach, under every server
 * behaviour: cloud_warehouse oAuth (useCertificate left out, so true by default; or false with a clientSecret) and
 * userPassword with lineage and audit at their defaults, columnar_warehouse okta and userPassword with
 * impersonation at its default role, object_store `auto`, sql_analytics with every metadata delimiter at its default.
 * After the apply, the plan has nothing to do and a second apply writes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BEHAVIOUR_SETS, label, world, writesOf, type World } from './helpers.js';

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const doc = (name: string, type: string, autoBootstrap: boolean, config: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'govops/v1', kind: 'Integration', metadata: { name }, spec: { type, autoBootstrap, config, ...extra } }, null, 1);
const secret = (name: string) => ({ fromEnv: name });

const MANIFESTS: Record<string, string> = {
  'oauth-cert.yaml': doc('oauth-cert', 'cloud_warehouse', false, {
    host: 'oa1.example.com',
    warehouse: 'WH',
    database: 'GOV',
    authenticationType: 'oAuth',
    oAuthClientConfig: { provider: 'okta', clientId: 'cid', authorityUrl: 'https://idp.example.com', publicCertificateThumbprint: 'AB12', oauthPrivateKey: secret('GOVOPS_SECRET_A') },
  }),
  'oauth-secret.yaml': doc('oauth-secret', 'cloud_warehouse', false, {
    host: 'oa2.example.com',
    warehouse: 'WH',
    database: 'GOV',
    authenticationType: 'oAuth',
    oAuthClientConfig: { provider: 'okta', clientId: 'cid', authorityUrl: 'https://idp.example.com', useCertificate: false, clientSecret: secret('GOVOPS_SECRET_B') },
  }),
  'cw-user.yaml': doc('cw-user', 'cloud_warehouse', false, {
    host: 'cw.example.com',
    warehouse: 'WH',
    database: 'GOV',
    authenticationType: 'userPassword',
    username: 'SYS',
    password: secret('GOVOPS_SECRET_C'),
    port: 443,
    audit: { enabled: true, historicalIngestionMonths: 3 },
    impersonation: { enabled: true, role: 'SERVICE_IMPERSONATION' },
    userRolePattern: { exclude: [] },
    workspaces: { enabled: false, warehouses: [] },
    lineage: { enabled: true, lineageConfig: { tableFilter: '^.*$', tagFilterRegex: '^.*$', ingestBatchSize: 1000 } },
  }),
  'okta.yaml': doc('okta', 'columnar_warehouse', false, {
    host: 'okta.example.com',
    database: 'gov',
    authenticationType: 'okta',
    okta: { username: 'u', password: secret('GOVOPS_SECRET_D'), appId: 'app', idpHost: 'https://idp.example.com', role: 'r' },
  }),
  'col-user.yaml': doc('col-user', 'columnar_warehouse', false, {
    host: 'colu.example.com',
    database: 'gov',
    authenticationType: 'userPassword',
    username: 'u',
    password: secret('GOVOPS_SECRET_E'),
    port: 5439,
    impersonation: { enabled: true },
  }),
  'store-auto.yaml': doc('store-auto', 'object_store', false, {
    name: 'auto-store',
    cloudAccountId: '123456789012',
    cloudRegion: 'eu-west-1',
    cloudLocationRole: 'arn:role/grants',
    cloudLocationPath: 's3://auto-store/',
    authenticationType: 'auto',
    port: 443,
  }),
  'sql-delims.yaml': doc('sql-delims', 'sql_analytics', false, {
    host: 'delims.example.com',
    database: 'd',
    schema: 's',
    username: 'svc',
    password: secret('GOVOPS_SECRET_F'),
    port: 1433,
    metadataDelimiters: { hashDelimiter: '|', hashKeyDelimiter: ':', arrayDelimiter: ',' },
    impersonation: { enabled: false },
  }),
  'dw.yaml': doc('dw', 'dataset_warehouse', false, { role: 'r', datasetSuffix: '_s', dataset: 'service', location: 'EU', credential: secret('GOVOPS_SECRET_G'), port: 443 }),
  'lake.yaml': doc('lake', 'lakehouse', false, {
    workspaceUrl: 'https://lake.example.com/',
    httpPath: '/sql/1',
    token: secret('GOVOPS_SECRET_H'),
    catalog: 'service',
    audit: { enabled: false },
    groupPattern: { deny: 'service_exemption_group' },
  }),
  'dsql.yaml': JSON.stringify({ apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'dsql' }, spec: { type: 'distributed_sql' } }),
};
const ENV = Object.fromEntries('ABCDEFGH'.split('').map((l) => [`GOVOPS_SECRET_${l}`, `value-${l}`]));

const SETS = BEHAVIOUR_SETS;

describe.each(SETS.map((set) => ({ set, name: label(set) })))('every kind, its other auth shapes and defaults written out, under $name', ({ set }) => {
  it('apply, then a plan with nothing to do (also without the state: adopts only) and an apply that writes nothing', async () => {
    w = await world(set);
    Object.assign(w.env, ENV);
    for (const [file, text] of Object.entries(MANIFESTS)) await w.write(file, text);
    const first = await w.run();
    expect(first.ok, first.error).toBe(true);
    const again = await w.run({ apply: false });
    const acting = (again.plan?.changes ?? []).filter((c) => c.action !== 'noop');
    expect(acting, JSON.stringify(acting, null, 1)).toEqual([]);
    // without the state, each is adopted as it is: nothing to change
    const stateless = await w.run({ apply: false, statePath: `${w.dir}/none/state.json` });
    const changed = stateless.plan!.changes.filter((c) => c.action !== 'adopt' || c.changes.length > 0);
    expect(changed, JSON.stringify(changed, null, 1)).toEqual([]);
    w.sandbox.clearRequests();
    const second = await w.run();
    expect(second.ok, second.error).toBe(true);
    expect(writesOf(w.sandbox)).toEqual([]);
  });
});
