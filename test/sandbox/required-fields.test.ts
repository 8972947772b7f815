/**
 * Every "Required" cell of the config tables (interface 2.3-2.8, 2.10, 2.11) and of the delete payload table (2.9),
 * one case per field: the field left out of a body that is otherwise valid is refused by the sandbox (400 naming
 * it) and by govops (an error on the manifest, or on the delete payload), and the body with it is accepted by both.
 * The lists are written from the interface document, not read from the sandbox's tables or govops' schemas, so a
 * required mark lost in either shows up here.
 */
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../../src/manifests/parse.js';
import { errorsOf, validateDeletePayload } from '../../src/manifests/schemas.js';
import type { IntegrationType } from '../../src/kinds/registry.js';
import { bodyFor, call, settle, sandboxPerFile } from './harness.js';

const box = sandboxPerFile();

type Config = Record<string, unknown>;
type Body = { type: string; autoBootstrap?: boolean; config: Config };

/** bodyFor(kind) with `config` fields replaced (undefined deletes) and autoBootstrap set when given. */
function base(kind: string, config: Config = {}, autoBootstrap?: boolean): Body {
  const b = structuredClone(bodyFor(kind)) as Body;
  for (const [k, v] of Object.entries(config)) {
    if (v === undefined) delete b.config[k];
    else b.config[k] = v;
  }
  if (autoBootstrap !== undefined) b.autoBootstrap = autoBootstrap;
  return b;
}

/** A copy of `value` without the field at `path` (dot-separated). */
function without<T>(value: T, path: string): T {
  const copy = structuredClone(value);
  const keys = path.split('.');
  let obj = copy as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) obj = obj[k] as Record<string, unknown>;
  delete obj[keys[keys.length - 1]!];
  return copy;
}

const okta = { username: 'o', password: 'op', appId: 'a', idpHost: 'https://idp.example.com', role: 'r' };
const cert = { provider: 'p', clientId: 'id', authorityUrl: 'https://login.example.com', publicCertificateThumbprint: 't', oauthPrivateKey: 'k' };
const secret = { provider: 'p', clientId: 'id', authorityUrl: 'https://login.example.com', useCertificate: false, clientSecret: 's' };

/** [the body, the config fields it must have] (config paths). */
const TABLE: Array<[string, Body, string[]]> = [
  // 2.3: authenticationType accessKey also requires both access key fields
  ['object_store (accessKey)', base('object_store'), ['name', 'cloudAccountId', 'cloudRegion', 'cloudLocationRole', 'cloudLocationPath', 'authenticationType', 'cloudAccessKeyId', 'cloudSecretAccessKey']],
  ['sql_analytics', base('sql_analytics'), ['host', 'database', 'schema', 'username', 'password']],
  ['lakehouse', base('lakehouse'), ['workspaceUrl', 'httpPath', 'token']],
  ['dataset_warehouse', base('dataset_warehouse'), ['role', 'datasetSuffix', 'location', 'credential']],
  // 2.7: initialDatabase if autoBootstrap is true; username, password if userPassword
  ['columnar_warehouse (autoBootstrap, userPassword)', base('columnar_warehouse'), ['host', 'database', 'initialDatabase', 'authenticationType', 'username', 'password']],
  ['columnar_warehouse (accessKey)', base('columnar_warehouse', { authenticationType: 'accessKey', username: undefined, password: undefined, databaseUser: 'du', accessKeyId: 'AK', secretKey: 'sk' }), ['databaseUser', 'accessKeyId', 'secretKey']],
  // 2.11: every field of the okta object is required
  ['columnar_warehouse (okta)', base('columnar_warehouse', { authenticationType: 'okta', username: undefined, password: undefined, okta }), ['okta', 'okta.username', 'okta.password', 'okta.appId', 'okta.idpHost', 'okta.role']],
  // 2.8: role when autoBootstrap is true; username, password if userPassword
  ['cloud_warehouse (autoBootstrap, userPassword)', base('cloud_warehouse'), ['host', 'warehouse', 'database', 'authenticationType', 'role', 'username', 'password']],
  ['cloud_warehouse (keyPair)', base('cloud_warehouse', { authenticationType: 'keyPair', username: undefined, password: undefined, privateKey: 'k\\nk' }), ['privateKey']],
  // oAuthClientConfig: provider, clientId, authorityUrl required; thumbprint and key if useCertificate (default true)
  ['cloud_warehouse (oAuth, certificate)', base('cloud_warehouse', { authenticationType: 'oAuth', username: undefined, password: undefined, role: undefined, oAuthClientConfig: cert }, false), ['oAuthClientConfig', 'oAuthClientConfig.provider', 'oAuthClientConfig.clientId', 'oAuthClientConfig.authorityUrl', 'oAuthClientConfig.publicCertificateThumbprint', 'oAuthClientConfig.oauthPrivateKey']],
  ['cloud_warehouse (oAuth, client secret)', base('cloud_warehouse', { authenticationType: 'oAuth', username: undefined, password: undefined, role: undefined, oAuthClientConfig: secret }, false), ['oAuthClientConfig.clientSecret']],
];

/** govops' errors on the body written as an Integration manifest (plain-literal credential warnings aside). */
function govopsErrors(body: Body): string[] {
  const manifest = { apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'case' }, spec: body };
  return parseManifestText(JSON.stringify(manifest), 'case.yaml', '/tmp').diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
}

const CASES = TABLE.flatMap(([name, body, fields]) => fields.map((field): [string, string, Body] => [name, field, body]));

describe('the complete bodies are valid for both', () => {
  it.each(TABLE)('%s', async (_name, body) => {
    expect(govopsErrors(body)).toEqual([]);
    const r = await call(box.sb, 'POST', '/integrations?dryRun=true', { body });
    expect(r.status, r.text).toBe(200);
  });
});

describe('each required config field, left out, is refused by the service and by govops validate', () => {
  it.each(CASES)('%s: config.%s', async (_name, field, body) => {
    const bad = without(body, `config.${field}`);
    const last = field.split('.').pop()!;
    const errors = govopsErrors(bad);
    expect(errors.some((m) => m.includes(last)), `govops errors: ${errors.join(' | ')}`).toBe(true);
    const r = await call(box.sb, 'POST', '/integrations?dryRun=true', { body: bad });
    expect(r.status, r.text).toBe(400);
    expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(r.body.message).toContain(`config.${field}`);
  });
});

/** 2.9, per kind: [the payload, the fields it must have]. */
const DELETE_TABLE: Array<[IntegrationType, string, Config, string[]]> = [
  ['sql_analytics', 'userPassword', { authenticationType: 'userPassword', username: 'a', password: 'p' }, ['authenticationType', 'username', 'password']],
  ['columnar_warehouse', 'userPassword', { authenticationType: 'userPassword', username: 'a', password: 'p' }, ['authenticationType', 'username', 'password']],
  ['columnar_warehouse', 'accessKey', { authenticationType: 'accessKey', databaseUser: 'du', accessKeyId: 'AK', secretKey: 'sk' }, ['databaseUser', 'accessKeyId', 'secretKey']],
  ['columnar_warehouse', 'okta', { authenticationType: 'okta', okta }, ['okta', 'okta.username', 'okta.password', 'okta.appId', 'okta.idpHost', 'okta.role']],
  ['cloud_warehouse', 'userPassword', { authenticationType: 'userPassword', username: 'a', password: 'p', role: 'R' }, ['authenticationType', 'username', 'password', 'role']],
  ['cloud_warehouse', 'keyPair', { authenticationType: 'keyPair', privateKey: 'k', role: 'R' }, ['privateKey']],
  ['cloud_warehouse', 'oAuth', { authenticationType: 'oAuth', oAuthClientConfig: secret, role: 'R' }, ['oAuthClientConfig', 'oAuthClientConfig.clientSecret']],
];

const DELETE_CASES = DELETE_TABLE.flatMap(([kind, auth, payload, fields]) => fields.map((field): [string, string, string, Config] => [kind, auth, field, payload]));

/** An enabled integration of the kind created with autoBootstrap true (the delete payload is for those). */
async function autoIntegration(kind: string): Promise<string> {
  const c = await call(box.sb, 'POST', '/integrations', { body: bodyFor(kind, 1, { autoBootstrap: true }) });
  expect(c.status, c.text).toBe(200);
  expect(await settle(box.sb, c.body.id)).toBe('enabled');
  return c.body.id as string;
}

describe('2.9 delete payloads: complete ones are valid for both', () => {
  it.each(DELETE_TABLE)('%s (%s)', async (kind, _auth, payload) => {
    expect(errorsOf(validateDeletePayload(kind, payload))).toEqual([]);
    const id = await autoIntegration(kind);
    const r = await call(box.sb, 'DELETE', `/integrations/${id}?dryRun=true`, { body: payload });
    expect(r.status, r.text).toBe(200);
  });
});

describe('2.9 delete payloads: each required field, left out, is refused by the service and by govops', () => {
  it.each(DELETE_CASES)('%s (%s): %s', async (kind, _auth, field, payload) => {
    const bad = without(payload, field);
    const last = field.split('.').pop()!;
    const errors = errorsOf(validateDeletePayload(kind as IntegrationType, bad));
    expect(errors.some((e) => e.message.includes(last) || e.path.join('.').includes(last)), `govops: ${JSON.stringify(errors)}`).toBe(true);
    const id = await autoIntegration(kind);
    const r = await call(box.sb, 'DELETE', `/integrations/${id}?dryRun=true`, { body: bad });
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toContain(field);
  });
});
