/**
 * Each schema rule of issue 2: a failing fixture, with the line/column the error points at. Rules the service
 * interface does not state are warnings (issue 8, docs/contract.md): `severity: 'warning'`, and no error.
 */
import { describe, expect, it } from 'vitest';
import { at, errors, integration, parse, warnings } from './helpers.js';

interface Case {
  name: string;
  text: string;
  /** Text in the fixture where the error must point, and a part of its message. */
  where: string;
  message: string | RegExp;
  nth?: number;
  /** A warning, not an error: the document is still valid. */
  severity?: 'warning';
}

const cloudBase = (auth: string, extra = '', autoBootstrap = false) =>
  integration(
    'cloud_warehouse',
    `  autoBootstrap: ${autoBootstrap}\n  config:\n    host: wh.example.com\n    warehouse: WH\n    database: DB\n    authenticationType: ${auth}\n${extra}`,
  );
const columnarBase = (auth: string, extra = '', autoBootstrap = false) =>
  integration(
    'columnar_warehouse',
    `  autoBootstrap: ${autoBootstrap}\n  config:\n    host: c.example.com\n    database: d\n    authenticationType: ${auth}\n${extra}`,
  );
const up = '    username: u\n    password: { fromEnv: P }\n';
const webhook = (spec: string) => `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: hook\nspec:\n${spec}`;
const hookSpec = '  url: https://h.example.com/x\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n';

const cases: Case[] = [
  { name: 'required field (points at the parent key)', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n'), where: 'config:', message: 'missing required field `host`' },
  { name: 'unknown field with did-you-mean', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    hots: h.example.com\n    host: h.example.com\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n'), where: 'hots:', message: 'unknown field `hots` (did you mean `host`?)', severity: 'warning' },
  { name: 'type', text: cloudBase('userPassword', `${up}    port: "443"\n`), where: '"443"', message: 'must be a number, not a string' },
  { name: 'enum with suggestion', text: cloudBase('userPasword', up), where: 'userPasword', message: /must be one of userPassword, keyPair, oAuth.*did you mean `userPassword`/ },
  { name: 'object_store authenticationType enum', text: integration('object_store', '  autoBootstrap: false\n  config:\n    name: n\n    cloudAccountId: "1"\n    cloudRegion: r\n    cloudLocationRole: x\n    cloudLocationPath: p\n    authenticationType: iam\n'), where: 'iam', message: 'must be one of auto, accessKey, not `iam`' },
  { name: 'columnar_warehouse authenticationType enum', text: columnarBase('Okta'), where: 'Okta', message: 'must be one of userPassword, accessKey, okta, not `Okta` (did you mean `okta`?)' },
  { name: 'port range', text: cloudBase('userPassword', `${up}    port: 65536\n`), where: '65536', message: 'must be between 0 and 65535' },
  { name: 'negative port', text: cloudBase('userPassword', `${up}    port: -1\n`), where: '-1', message: 'must be between 0 and 65535' },
  { name: 'historicalIngestionMonths 1-12', text: cloudBase('userPassword', `${up}    audit: { enabled: true, historicalIngestionMonths: 13 }\n`), where: '13', message: 'must be between 1 and 12' },
  { name: 'historicalIngestionMonths >= 1', text: cloudBase('userPassword', `${up}    audit: { enabled: true, historicalIngestionMonths: 0 }\n`), where: '0 }', message: 'must be between 1 and 12' },
  { name: 'ingestBatchSize >= 1', text: cloudBase('userPassword', `${up}    lineage:\n      enabled: true\n      lineageConfig:\n        ingestBatchSize: 0\n`), where: '0\n', message: 'must be >= 1' },
  { name: 'lineage.enabled requires lineageConfig', text: cloudBase('userPassword', `${up}    lineage:\n      enabled: true\n`), where: 'lineage:', message: 'missing required field `lineageConfig` (required when enabled is true)' },
  { name: 'lineage tableFilter is a regular expression', text: cloudBase('userPassword', `${up}    lineage:\n      lineageConfig:\n        tableFilter: "(unclosed"\n`), where: '"(unclosed"', message: 'is not a valid regular expression', severity: 'warning' },
  { name: 'lakehouse catalog pattern', text: integration('lakehouse', '  autoBootstrap: false\n  config:\n    workspaceUrl: https://w.example.com\n    httpPath: /p\n    token: { fromEnv: T }\n    catalog: 1catalog\n'), where: '1catalog', message: /not starting with a digit/ },
  { name: 'lakehouse catalog characters', text: integration('lakehouse', '  autoBootstrap: false\n  config:\n    workspaceUrl: https://w.example.com\n    httpPath: /p\n    token: { fromEnv: T }\n    catalog: my-catalog\n'), where: 'my-catalog', message: /letters, digits and underscores/ },
  { name: 'lakehouse workspaceUrl is a host or an http(s) URL', text: integration('lakehouse', '  autoBootstrap: false\n  config:\n    workspaceUrl: ftp://w.example.com\n    httpPath: /p\n    token: { fromEnv: T }\n'), where: 'ftp://', message: 'is not valid: the workspace host (my-workspace.cloud.example.com) or an http(s) URL of it' },
  { name: 'datasetSuffix starts with _', text: integration('dataset_warehouse', '  autoBootstrap: false\n  config:\n    role: r\n    datasetSuffix: secure\n    location: US\n    credential: { fromFile: key.json }\n'), where: 'secure', message: 'must start with an underscore' },
  { name: 'autoBootstrap false for dataset_warehouse', text: integration('dataset_warehouse', '  autoBootstrap: true\n  config:\n    role: r\n    datasetSuffix: _s\n    location: US\n    credential: { fromFile: key.json }\n'), where: 'true', message: 'must be false when type is dataset_warehouse' },
  { name: 'autoBootstrap false for object_store', text: integration('object_store', '  autoBootstrap: true\n  config:\n    name: n\n    cloudAccountId: "1"\n    cloudRegion: r\n    cloudLocationRole: x\n    cloudLocationPath: p\n    authenticationType: auto\n'), where: 'true', message: 'must be false when type is object_store' },
  { name: 'object_store accessKey needs the keys', text: integration('object_store', '  autoBootstrap: false\n  config:\n    name: n\n    cloudAccountId: "1"\n    cloudRegion: r\n    cloudLocationRole: x\n    cloudLocationPath: p\n    authenticationType: accessKey\n'), where: 'config:', message: 'missing required field `cloudAccessKeyId` (required when authenticationType is accessKey)' },
  { name: 'columnar accessKey', text: columnarBase('accessKey', '    databaseUser: d\n    accessKeyId: a\n'), where: 'config:', message: 'missing required field `secretKey` (required when authenticationType is accessKey)' },
  { name: 'columnar accessKey forbids password', text: columnarBase('accessKey', '    databaseUser: d\n    accessKeyId: a\n    secretKey: { fromEnv: S }\n    password: { fromEnv: P }\n'), where: 'password:', message: 'field `password` is not used when authenticationType is accessKey', severity: 'warning' },
  { name: 'columnar okta needs okta', text: columnarBase('okta'), where: 'config:', message: 'missing required field `okta` (required when authenticationType is okta)' },
  { name: 'columnar okta object is complete', text: columnarBase('okta', '    okta:\n      username: u\n      password: { fromEnv: P }\n      appId: a\n      idpHost: https://idp.example.com\n'), where: 'okta:\n', message: 'missing required field `role`' },
  { name: 'columnar userPassword', text: columnarBase('userPassword', '    username: u\n'), where: 'config:', message: 'missing required field `password` (required when authenticationType is userPassword)' },
  { name: 'columnar initialDatabase when autoBootstrap', text: columnarBase('userPassword', up, true), where: 'config:', message: 'missing required field `initialDatabase` (required when type is columnar_warehouse and autoBootstrap is true)' },
  { name: 'cloud userPassword', text: cloudBase('userPassword', '    username: u\n'), where: 'config:', message: 'missing required field `password` (required when authenticationType is userPassword)' },
  { name: 'cloud keyPair', text: cloudBase('keyPair'), where: 'config:', message: 'missing required field `privateKey` (required when authenticationType is keyPair)' },
  { name: 'cloud keyPair forbids password', text: cloudBase('keyPair', '    privateKey: { fromEnv: K }\n    password: { fromEnv: P }\n'), where: 'password:', message: 'field `password` is not used when authenticationType is keyPair', severity: 'warning' },
  { name: 'cloud oAuth', text: cloudBase('oAuth'), where: 'config:', message: 'missing required field `oAuthClientConfig` (required when authenticationType is oAuth)' },
  { name: 'cloud oAuth requires autoBootstrap false', text: cloudBase('oAuth', '    role: R\n    oAuthClientConfig: { provider: p, clientId: c, authorityUrl: a, useCertificate: false, clientSecret: { fromEnv: S } }\n', true), where: 'true', message: 'must be false when type is cloud_warehouse and config.authenticationType is oAuth' },
  { name: 'useCertificate true (default) needs thumbprint and key', text: cloudBase('oAuth', '    oAuthClientConfig:\n      provider: p\n      clientId: c\n      authorityUrl: a\n      clientSecret: { fromEnv: S }\n'), where: 'oAuthClientConfig:', message: 'missing required field `publicCertificateThumbprint` (required unless useCertificate is false)' },
  { name: 'useCertificate true forbids clientSecret', text: cloudBase('oAuth', '    oAuthClientConfig:\n      provider: p\n      clientId: c\n      authorityUrl: a\n      publicCertificateThumbprint: t\n      oauthPrivateKey: { fromEnv: K }\n      clientSecret: { fromEnv: S }\n'), where: 'clientSecret:', message: 'field `clientSecret` is not used unless useCertificate is false', severity: 'warning' },
  { name: 'useCertificate false needs clientSecret', text: cloudBase('oAuth', '    oAuthClientConfig:\n      provider: p\n      clientId: c\n      authorityUrl: a\n      useCertificate: false\n'), where: 'oAuthClientConfig:', message: 'missing required field `clientSecret` (required when useCertificate is false)' },
  { name: 'cloud role when autoBootstrap', text: cloudBase('userPassword', up, true), where: 'config:', message: 'missing required field `role` (required when type is cloud_warehouse and autoBootstrap is true)' },
  { name: 'hostname without port', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    host: h.example.com:1433\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n'), where: 'h.example.com:1433', message: 'is not a valid hostname (write the host name only, without scheme, port or path)' },
  { name: 'hostname without scheme', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    host: https://h.example.com/db\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n'), where: 'https://', message: 'is not a valid hostname' },
  { name: 'distributed_sql is spec.type only', text: integration('distributed_sql', '  autoBootstrap: false\n'), where: 'autoBootstrap', message: 'field `autoBootstrap` is not used when type is distributed_sql', severity: 'warning' },
  { name: 'unknown type', text: integration('lakehose', '  autoBootstrap: false\n  config: {}\n'), where: 'lakehose', message: /did you mean `lakehouse`/ },
  { name: 'config required', text: integration('lakehouse', '  autoBootstrap: false\n'), where: 'spec:', message: 'missing required field `config` (required when type is lakehouse)' },
  { name: 'deleteCredentials not for lakehouse', text: integration('lakehouse', '  autoBootstrap: false\n  config: { workspaceUrl: "https://w.example.com", httpPath: /p, token: { fromEnv: T } }\n  deleteCredentials: { username: u }\n'), where: 'deleteCredentials', message: 'field `deleteCredentials` is not used when type is one of object_store, lakehouse, dataset_warehouse, distributed_sql', severity: 'warning' },
  { name: 'deleteCredentials checked against 2.9', text: cloudBase('userPassword', `${up}    role: R\n  deleteCredentials:\n    authenticationType: keyPair\n    role: R\n`, true), where: 'deleteCredentials', message: 'missing required field `privateKey` (required when authenticationType is keyPair)' },
  { name: 'deleteCredentials only with autoBootstrap', text: cloudBase('userPassword', `${up}  deleteCredentials:\n    authenticationType: userPassword\n    username: u\n    password: { fromEnv: P }\n    role: R\n`), where: 'deleteCredentials', message: 'field `deleteCredentials` is not used when autoBootstrap is false', severity: 'warning' },
  { name: 'webhook actionType', text: webhook(hookSpec.replace('triggered', 'sent')), where: 'sent', message: 'must be one of triggered, receive' },
  { name: 'webhook notificationType item', text: webhook(hookSpec.replace('modelCreated', 'modelCreatd')), where: 'modelCreatd', message: 'unknown event `modelCreatd` (did you mean `modelCreated`?)' },
  { name: 'webhook url', text: webhook(hookSpec.replace('https://h.example.com/x', 'mailto:me@example.com')), where: 'mailto', message: 'is not an http(s) URL', severity: 'warning' },
  { name: 'webhook global required', text: webhook(hookSpec.replace('  global: false\n', '')), where: 'spec:', message: 'missing required field `global`' },
  { name: 'webhook spec.name (its name in the service) must not be empty', text: webhook(`${hookSpec}  name: ""\n`), where: '""', message: 'must not be empty' },
  { name: 'webhook spec.name is a string', text: webhook(`${hookSpec}  name: 12\n`), where: '12', message: 'must be a string, not an integer `12` (put it in quotes: "12")' },
  { name: 'unknown apiVersion', text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n', where: 'apps/v1', message: /unknown apiVersion `apps\/v1`/ },
  { name: 'unknown kind', text: 'apiVersion: govops/v1\nkind: Webhok\nmetadata:\n  name: x\nspec: {}\n', where: 'Webhok', message: 'unknown kind `Webhok`: must be Integration, Webhook or DataSource (did you mean `Webhook`?)' },
  { name: 'missing metadata.name', text: `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  labels: {}\nspec:\n${hookSpec}`, where: 'metadata:', message: 'missing required field `name`' },
  { name: 'metadata.name format', text: `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: Pager_Alerts\nspec:\n${hookSpec}`, where: 'Pager_Alerts', message: /lower-case letters, digits and '-'/ },
  { name: 'unknown envelope field', text: `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: a\nspec:\n${hookSpec}specs: {}\n`, where: 'specs:', message: 'unknown field `specs` (did you mean `spec`?)' },
  { name: 'quoted number: says how to write it', text: cloudBase('userPassword', `${up}    port: "443"\n`), where: '"443"', message: 'must be a number, not a string `443` (write it without quotes: 443)' },
  { name: 'fraction where an integer is wanted', text: cloudBase('userPassword', `${up}    port: 443.5\n`), where: '443.5', message: '443.5 is not a whole number', severity: 'warning' },
  { name: 'yes/no is text in YAML 1.2', text: cloudBase('userPassword', `${up}    audit: { enabled: yes }\n`), where: 'yes', message: 'must be a boolean (true or false), not a string `yes` (write true or false: YAML 1.2 reads yes as text)' },
  { name: 'quoted boolean', text: webhook(hookSpec.replace('global: false', 'global: "false"')), where: '"false"', message: 'must be a boolean (true or false), not a string `false` (write it without quotes: false)' },
  { name: 'number where a string is wanted', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    host: h.example.com\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n    metadataDelimiters: { hashDelimiter: 1 }\n'), where: '1 }', message: 'must be a string, not an integer `1` (put it in quotes: "1")' },
  { name: 'a number where a string is wanted: quoted as written (an account id keeps its leading zero)', text: integration('object_store', '  autoBootstrap: false\n  config:\n    name: n\n    cloudAccountId: 012345678901\n    cloudRegion: r\n    cloudLocationRole: x\n    cloudLocationPath: p\n    authenticationType: auto\n'), where: '012345678901', message: 'must be a string, not an integer `12345678901` (put it in quotes as written: "012345678901"; YAML reads 012345678901 as 12345678901)' },
  { name: 'a version-like number quoted as written', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    host: h.example.com\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n    connectArgs: 1.10\n'), where: '1.10', message: '(put it in quotes as written: "1.10"; YAML reads 1.10 as 1.1)' },
  { name: '.inf where a string is wanted', text: integration('sql_analytics', '  autoBootstrap: false\n  config:\n    host: h.example.com\n    database: .inf\n    schema: s\n    username: u\n    password: { fromEnv: P }\n'), where: '.inf', message: 'must be a string, not `.inf` (put it in quotes: ".inf")' },
  { name: 'unknown field without a near miss lists the fields', text: cloudBase('userPassword', `${up}    audit: { enabled: true, months: 3 }\n`), where: 'months', message: 'unknown field `months` (fields here: enabled, historicalIngestionMonths)', severity: 'warning' },
  { name: 'unknown event without a near miss says what is allowed', text: webhook(hookSpec.replace('modelCreated', 'everything')), where: 'everything', message: 'unknown event `everything`: use an event name of the service (listed by `govops schema`) or ALL_NOTIFICATIONS' },
  { name: 'a field not allowed at all: no noise about its content', text: cloudBase('userPassword', `${up}  deleteCredentials: {}\n`), where: 'deleteCredentials', message: 'field `deleteCredentials` is not used when autoBootstrap is false', severity: 'warning' },
  { name: 'metadata.name at most 63 characters', text: `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${'a'.repeat(64)}\nspec:\n${hookSpec}`, where: 'aaaa', message: 'must be at most 63 characters' },
  { name: 'missing apiVersion', text: `kind: Webhook\nmetadata:\n  name: a\nspec:\n${hookSpec}`, where: 'kind', message: 'missing required field `apiVersion`' },
  { name: 'missing kind', text: `apiVersion: govops/v1\nmetadata:\n  name: a\nspec:\n${hookSpec}`, where: 'apiVersion', message: 'missing required field `kind`' },
  { name: 'a document must be a mapping', text: '- a\n- b\n', where: '- a', message: 'a manifest must be a mapping' },
];

describe('schema rules: failing fixtures with line and column', () => {
  it.each(cases)('$name', ({ text, where, message, nth, severity }) => {
    if (severity === 'warning') expect(errors(text)).toEqual([]);
    const errs = severity === 'warning' ? warnings(text) : errors(text);
    const pos = at(text, where, nth);
    const match = errs.find((e) => (typeof message === 'string' ? e.message.includes(message) : message.test(e.message)));
    expect(match, `errors: ${JSON.stringify(errs.map((e) => `${e.line}:${e.column} ${e.message}`))}`).toBeDefined();
    expect({ line: match!.line, column: match!.column }).toEqual(pos);
    expect(match!.file).toBe('m.yaml');
  });
});

describe('messages', () => {
  it('a field not used at all is the only thing said about it (a warning)', () => {
    const text = cloudBase('userPassword', `${up}  deleteCredentials: {}\n`);
    expect(errors(text)).toEqual([]);
    expect(warnings(text).map((e) => e.message)).toEqual([
      'field `deleteCredentials` is not used when autoBootstrap is false: a manually configured integration (autoBootstrap false) is deleted without a body (interface 4.1): govops does not send it',
    ]);
  });

  it('.nan and .inf in a number field are named as written, with one error and no warning', () => {
    const text = cloudBase('userPassword', `${up}    port: .nan\n    audit: { enabled: true, historicalIngestionMonths: -.inf }\n`);
    expect(warnings(text)).toEqual([]);
    expect(errors(text).map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      `${at(text, '.nan').line}:${at(text, '.nan').column} \`spec.config.port\` must be a number, not \`.nan\` (not a finite number: write a number)`,
      `${at(text, '-.inf').line}:${at(text, '-.inf').column} \`spec.config.audit.historicalIngestionMonths\` must be a number, not \`-.inf\` (not a finite number: write a number)`,
    ]);
  });

  it('never repeat the value of a credential field', () => {
    const text = cloudBase('userPassword', '    username: u\n    password: 987654321\n');
    const errs = errors(text);
    expect(errs).toEqual([expect.objectContaining({ ...at(text, '987654321'), message: '`spec.config.password` must be a string, not an integer' })]);
    const hook = webhook(`${hookSpec}  secret: 123456\n`);
    expect(errors(hook)).toEqual([expect.objectContaining({ ...at(hook, '123456'), message: '`spec.secret` must be a string, not an integer' })]);
  });
});

describe('valid documents', () => {
  it('accept every authentication variant', () => {
    const texts = [
      cloudBase('userPassword', up),
      cloudBase('keyPair', '    username: u\n    privateKey: { fromFile: key.pem }\n'),
      cloudBase('oAuth', '    oAuthClientConfig: { provider: p, clientId: c, authorityUrl: a, publicCertificateThumbprint: t, oauthPrivateKey: { fromEnv: K } }\n'),
      columnarBase('userPassword', `${up}    initialDatabase: dev\n`, true),
      columnarBase('accessKey', '    databaseUser: d\n    accessKeyId: a\n    secretKey: { fromEnv: S }\n    sessionToken: { fromEnv: T }\n'),
      integration('distributed_sql', ''),
      // a URL's host may hold an underscore (an account name in it): "Valid URL hostname", not DNS's rule
      cloudBase('userPassword', up).replace('wh.example.com', 'myorg-my_account.cloud.example.com'),
      // the workspace host alone, as the service's users commonly write it, and a URL of it
      integration('lakehouse', '  autoBootstrap: true\n  config:\n    workspaceUrl: my-workspace.cloud.example.com\n    httpPath: /p\n    token: { fromEnv: T }\n'),
      integration('lakehouse', '  autoBootstrap: true\n  config:\n    workspaceUrl: https://my-workspace.cloud.example.com/\n    httpPath: /p\n    token: { fromEnv: T }\n'),
    ];
    for (const t of texts) {
      const res = parse(t);
      expect(res.diagnostics, t).toEqual([]);
      expect(res.manifests).toHaveLength(1);
    }
  });
});
