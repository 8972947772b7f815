import { describe, expect, it } from 'vitest';
import {
  errorsOf,
  validateDeletePayload,
  validateIntegrationBody,
  validateWebhookItem,
  validatorFor,
} from '../../src/manifests/schemas.js';
import { configShapes } from '../../src/manifests/shapes.js';
import { withShapeDefaults } from '../../src/plan/shape.js';
import type { IntegrationType } from '../../src/kinds/registry.js';
import { WEBHOOK_ACTIONS } from '../../src/service/events.js';
import { SCHEMA_FILES, schemaDocuments } from '../../src/manifests/schema-files.js';

const withDefaults = (type: IntegrationType, config: Record<string, unknown> | undefined) => withShapeDefaults(configShapes(), type, config);
import { didYouMean } from '../../src/manifests/suggest.js';

const cloud = {
  host: 'wh.example.com',
  warehouse: 'WH',
  database: 'DB',
  authenticationType: 'userPassword',
  username: 'u',
  password: 'p',
};

const messages = (issues: { path: (string | number)[]; message: string; severity?: string }[]) =>
  issues.map((i) => `${i.severity === 'warning' ? 'warning: ' : ''}${i.path.join('.')}: ${i.message}`);

describe('validateIntegrationBody', () => {
  it('accepts a valid body of every kind', () => {
    const bodies = [
      { type: 'object_store', autoBootstrap: false, config: { name: 'n', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'x', cloudLocationPath: 'p', authenticationType: 'auto' } },
      { type: 'sql_analytics', autoBootstrap: true, config: { host: 'h.example.com', database: 'd', schema: 's', username: 'u', password: 'p' } },
      { type: 'lakehouse', autoBootstrap: false, config: { workspaceUrl: 'https://w.example.com', httpPath: '/p', token: 't' } },
      { type: 'dataset_warehouse', autoBootstrap: false, config: { role: 'r', datasetSuffix: '_s', location: 'US', credential: '{}' } },
      { type: 'columnar_warehouse', autoBootstrap: true, config: { host: 'c.example.com', database: 'd', initialDatabase: 'dev', authenticationType: 'userPassword', username: 'u', password: 'p' } },
      { type: 'cloud_warehouse', autoBootstrap: true, config: { ...cloud, role: 'R' } },
      { type: 'distributed_sql' },
    ];
    for (const b of bodies) expect(messages(validateIntegrationBody(b)), b.type).toEqual([]);
  });

  it('reports every problem at once; unknown fields are warnings with a suggestion (the interface does not forbid them)', () => {
    const issues = validateIntegrationBody({ type: 'cloud_warehouse', autoBootstrap: false, config: { ...cloud, hots: 'x', port: 70000 } });
    expect(messages(issues)).toEqual([
      'config.port: must be between 0 and 65535, not 70000',
      'warning: config.hots: unknown field `hots` (did you mean `host`?): not part of the cloud_warehouse config (interface 2.8); govops sends it but does not compare it',
    ]);
    expect(issues.find((i) => i.path.join('.') === 'config.hots')?.target).toBe('key');
  });

  it('rejects an unknown type with a suggestion and a missing type', () => {
    expect(messages(validateIntegrationBody({ type: 'lakehous', autoBootstrap: false, config: {} }))[0]).toContain('did you mean `lakehouse`');
    expect(messages(validateIntegrationBody({}))).toEqual([': missing required field `type`']);
  });

  it('requires autoBootstrap false for object_store and dataset_warehouse, and for oAuth', () => {
    const os = validateIntegrationBody({ type: 'dataset_warehouse', autoBootstrap: true, config: { role: 'r', datasetSuffix: '_s', location: 'US', credential: '{}' } });
    expect(messages(os)).toEqual(['autoBootstrap: must be false when type is dataset_warehouse']);
    const oauth = validateIntegrationBody({
      type: 'cloud_warehouse',
      autoBootstrap: true,
      config: { ...cloud, role: 'R', authenticationType: 'oAuth', password: undefined, username: 'u', oAuthClientConfig: { provider: 'p', clientId: 'c', authorityUrl: 'a', clientSecret: 's', useCertificate: false } },
    });
    expect(messages(oauth)).toContain('autoBootstrap: must be false when type is cloud_warehouse and config.authenticationType is oAuth');
  });

  it('distributed_sql takes only type; other kinds need autoBootstrap and config', () => {
    expect(messages(validateIntegrationBody({ type: 'distributed_sql', config: {} }))).toEqual([
      'warning: config: field `config` is not used when type is distributed_sql: a distributed_sql integration is created with only `type` (interface 4.1): govops does not send it',
    ]);
    expect(messages(validateIntegrationBody({ type: 'lakehouse' }))).toEqual([
      ': missing required field `autoBootstrap` (required when type is lakehouse)',
      ': missing required field `config` (required when type is lakehouse)',
    ]);
  });

  it('needs role (cloud_warehouse) and initialDatabase (columnar_warehouse) when autoBootstrap is true', () => {
    expect(messages(validateIntegrationBody({ type: 'cloud_warehouse', autoBootstrap: true, config: cloud }))).toEqual([
      'config: missing required field `role` (required when type is cloud_warehouse and autoBootstrap is true)',
    ]);
    expect(messages(validateIntegrationBody({ type: 'cloud_warehouse', autoBootstrap: false, config: cloud }))).toEqual([]);
    const col = { host: 'c.example.com', database: 'd', authenticationType: 'userPassword', username: 'u', password: 'p' };
    expect(messages(validateIntegrationBody({ type: 'columnar_warehouse', autoBootstrap: true, config: col }))).toEqual([
      'config: missing required field `initialDatabase` (required when type is columnar_warehouse and autoBootstrap is true)',
    ]);
  });

  it('checks wrong types', () => {
    expect(messages(validateIntegrationBody({ type: 'lakehouse', autoBootstrap: 'no', config: [] })).sort()).toEqual([
      'autoBootstrap: must be a boolean (true or false), not a string `no` (write true or false: YAML 1.2 reads no as text)',
      'config: must be a mapping, not a list',
    ]);
  });
});

describe('withDefaults', () => {
  it('fills scalar and nested object defaults, without mutating the input', () => {
    const input = { ...cloud, lineage: { enabled: true, lineageConfig: { ingestBatchSize: 5 } }, oAuthClientConfig: {} };
    const snapshot = structuredClone(input);
    const out = withDefaults('cloud_warehouse', input);
    expect(input).toEqual(snapshot);
    expect(out).toMatchObject({
      port: 443,
      audit: { enabled: false, historicalIngestionMonths: 3 },
      impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION' },
      workspaces: { enabled: false, warehouses: [] },
      lineage: { enabled: true, lineageConfig: { tableFilter: '^.*$', tagFilterRegex: '^.*$', ingestBatchSize: 5 } },
      oAuthClientConfig: { useCertificate: true },
    });
    expect(out).not.toHaveProperty('userRolePattern');
    (out.workspaces as { warehouses: string[] }).warehouses.push('x');
    expect(withDefaults('cloud_warehouse', cloud).workspaces).toEqual({ enabled: false, warehouses: [] });
  });

  it('fills per-kind defaults', () => {
    expect(withDefaults('sql_analytics', {})).toEqual({
      port: 1433,
      metadataDelimiters: { hashDelimiter: '|', hashKeyDelimiter: ':', arrayDelimiter: ',' },
      impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION' },
    });
    expect(withDefaults('sql_analytics', { metadataDelimiters: { arrayDelimiter: ';' } }).metadataDelimiters).toEqual({
      arrayDelimiter: ';',
      hashDelimiter: '|',
      hashKeyDelimiter: ':',
    });
    expect(withDefaults('columnar_warehouse', {})).toEqual({ port: 5439, impersonation: { enabled: false, role: 'service_impersonation' } });
    expect(withDefaults('lakehouse', { groupPattern: {} })).toEqual({ port: 443, audit: { enabled: false }, catalog: 'service', groupPattern: { deny: 'service_exemption_group' } });
    expect(withDefaults('dataset_warehouse', {})).toEqual({ dataset: 'service', port: 443 });
    expect(withDefaults('object_store', {})).toEqual({ port: 443 });
    expect(withDefaults('distributed_sql', undefined)).toEqual({});
    expect(withDefaults('cloud_warehouse', { lineage: {} }).lineage).toEqual({ enabled: false });
    expect(withDefaults('cloud_warehouse', { userRolePattern: {} }).userRolePattern).toEqual({ exclude: [] });
  });

  it('a config with defaults filled in is still valid', () => {
    const config = withDefaults('cloud_warehouse', cloud);
    expect(validateIntegrationBody({ type: 'cloud_warehouse', autoBootstrap: false, config })).toEqual([]);
  });
});

describe('validateDeletePayload', () => {
  it('checks the 2.9 payloads per kind', () => {
    expect(validateDeletePayload('sql_analytics', { authenticationType: 'userPassword', username: 'u', password: 'p' })).toEqual([]);
    expect(messages(validateDeletePayload('sql_analytics', { authenticationType: 'keyPair', username: 'u', password: 'p' }))[0]).toContain('must be one of userPassword');
    expect(messages(validateDeletePayload('columnar_warehouse', { authenticationType: 'accessKey', databaseUser: 'd', accessKeyId: 'a' }))).toEqual([
      ': missing required field `secretKey` (required when authenticationType is accessKey)',
    ]);
    expect(messages(validateDeletePayload('cloud_warehouse', { authenticationType: 'keyPair' }))).toEqual([
      ': missing required field `privateKey` (required when authenticationType is keyPair)',
      ': missing required field `role`',
    ]);
    expect(validateDeletePayload('cloud_warehouse', { authenticationType: 'keyPair', privateKey: 'k', role: 'R' })).toEqual([]);
  });

  it('kinds without a payload take none; payload kinds need one', () => {
    expect(validateDeletePayload('lakehouse', undefined)).toEqual([]);
    expect(validateDeletePayload('lakehouse', { username: 'u' })).toHaveLength(1);
    expect(validateDeletePayload('sql_analytics', undefined)).toHaveLength(1);
  });
});

describe('validateWebhookItem', () => {
  const ok = { url: 'https://h.example.com/x', name: 'n', global: false, notificationType: ['modelCreated'], actionType: 'triggered' };
  it('accepts a valid item, with or without secret', () => {
    expect(validateWebhookItem(ok)).toEqual([]);
    expect(validateWebhookItem({ ...ok, secret: 's', notificationType: ['ALL_NOTIFICATIONS'] })).toEqual([]);
    expect(validateWebhookItem({ ...ok, url: 'http://127.0.0.1:8080/hook' })).toEqual([]);
  });
  it('rejects bad actionType and events; warns on a non-http url, an empty or repeating list and unknown fields', () => {
    expect(messages(validateWebhookItem({ ...ok, url: 'ftp://h.example.com' }))).toEqual([
      'warning: url: `ftp://h.example.com` is not an http(s) URL: the service sends each notification to it',
    ]);
    expect(messages(validateWebhookItem({ ...ok, actionType: 'trigger' }))[0]).toContain('did you mean `triggered`');
    expect(messages(validateWebhookItem({ ...ok, notificationType: ['modelCreate'] }))).toEqual([
      'notificationType.0: unknown event `modelCreate` (did you mean `modelCreated`?)',
    ]);
    expect(messages(validateWebhookItem({ ...ok, notificationType: ['nothingLikeIt'] }))).toEqual([
      'notificationType.0: unknown event `nothingLikeIt`: use an event name of the service (listed by `govops schema`) or ALL_NOTIFICATIONS',
    ]);
    expect(messages(validateWebhookItem({ ...ok, notificationType: [] }))).toEqual(['warning: notificationType: is empty: nothing is selected']);
    expect(messages(validateWebhookItem({ ...ok, notificationType: ['modelCreated', 'modelCreated'] }))).toEqual([
      'warning: notificationType: lists modelCreated more than once (the list is a set)',
    ]);
    expect(messages(validateWebhookItem({ ...ok, secrte: 'x' }))[0]).toMatch(/^warning: secrte: unknown field `secrte` \(did you mean `secret`\?\)/);
    expect(errorsOf(validateWebhookItem({ url: ok.url }))).toHaveLength(4);
  });
});

describe('schemas/', () => {
  it('every file compiles under ajv strict: true (no strict option relaxed)', () => {
    for (const file of SCHEMA_FILES) expect(() => validatorFor(file), file).not.toThrow();
  });
  it('every file has a $id and the draft 2020-12 $schema', () => {
    for (const [id, s] of schemaDocuments()) {
      expect(s.$id).toBe(id);
      expect(s.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
  });
  it('the webhook event list equals the service actions', () => {
    const item = schemaDocuments().get('https://govops.dev/schemas/v1/webhook-item.json') as { $defs: { notification: { enum: string[] } } };
    expect(item.$defs.notification.enum).toEqual([...WEBHOOK_ACTIONS]);
  });
  it('did-you-mean only suggests near misses', () => {
    expect(didYouMean('hots', ['host', 'port'])).toBe('host');
    expect(didYouMean('databse', ['database', 'schema'])).toBe('database');
    expect(didYouMean('zzzzzz', ['host', 'port'])).toBeUndefined();
  });
});

describe('SchemaIssue.keyword', () => {
  it("keeps ajv's keyword (and x-advice for warnings): parse decides on it, never on the message", () => {
    const issues = validateWebhookItem({ name: '', url: 'not a url', global: 'no', notificationType: ['modelCreated', 'modelCreated'], actionType: 'triggered', extra: 1 });
    const byPath = Object.fromEntries(issues.map((i) => [i.path.join('.'), i.keyword]));
    expect(byPath).toMatchObject({ url: 'x-advice', global: 'type' });
    const host = validateIntegrationBody({ type: 'sql_analytics', autoBootstrap: true, config: { host: 'https://db.example.com/x', database: 'd', schema: 's', username: 'u', password: 'p' } });
    expect(host.find((i) => i.path.join('.') === 'config.host')?.keyword).toMatch(/^(pattern|format)$/);
    expect(issues.every((i) => typeof i.keyword === 'string' && i.keyword.length > 0)).toBe(true);
    expect(issues.filter((i) => i.severity === 'warning').every((i) => i.keyword === 'x-advice')).toBe(true);
    expect(validateDeletePayload('sql_analytics', undefined)[0]!.keyword).toBe('required');
  });
});

describe('x-advice without a module-level sink', () => {
  it('reports to the context the validator is called with; nested validations keep their own advice', async () => {
    const { collectAdvice } = await import('../../src/manifests/advice.js');
    const item = validatorFor('webhook-item.json');
    const bad = { name: 'n', url: 'https://h.example.com/x', global: false, notificationType: ['modelCreated'], actionType: 'triggered', extra: 1 };
    const outer = collectAdvice(function (this: unknown, v: unknown) {
      const inner = collectAdvice(item, { ...bad, more: 2 });
      expect(inner.advice.map((a) => a.path.join('.')).sort()).toEqual(['extra', 'more']);
      return item.call(this, v);
    }, bad);
    expect(outer.advice.map((a) => a.path.join('.'))).toEqual(['extra']);
    expect(item(bad)).toBe(true); // called without a context: valid, nothing collected anywhere
  });
});
