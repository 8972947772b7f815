/** Integration endpoints over real HTTP: shapes, id quirk, masking, defaults, status machine, dryRun, YAML. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { MASK } from '../../src/service/kinds.js';
import { KINDS, bodyFor, call, settle, sleep, start, DELETE_PAYLOAD, CLOUD_DELETE_PAYLOAD } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 80 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.reset());

describe('create / get / list shapes', () => {
  it.each(KINDS)('creates %s: create body has only id, status, validationResults; id is a string', async (kind) => {
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor(kind) });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['id', 'status', 'validationResults']);
    expect(typeof r.body.id).toBe('string');
    expect(r.body.status).toBe('creating');
    expect(r.body.validationResults.status).toBe('passed');
    expect(r.body.validationResults.validationTests.length).toBeGreaterThan(0);
    for (const t of r.body.validationResults.validationTests) {
      expect(['passed', 'skipped']).toContain(t.status);
      expect(typeof t.name).toBe('string');
    }
  });

  it('get and list add type, autoBootstrap and config; ids are strings; status body id is a number', async () => {
    sb.setStuckTransitions(true);
    const created = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    const id = created.body.id as string;
    const got = await call(sb, 'GET', `/integrations/${id}`);
    expect(got.status).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(['autoBootstrap', 'config', 'id', 'status', 'type', 'validationResults']);
    expect(got.body.id).toBe(id);
    expect(got.body.type).toBe('sql_analytics');
    expect(got.body.autoBootstrap).toBe(true);
    const list = await call(sb, 'GET', '/integrations');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toEqual(got.body);
    const status = await call(sb, 'GET', `/integrations/${id}/status`);
    expect(status.body).toEqual({ id: Number(id), status: 'creating' });
  });

  it('masks credentials at any depth and fills in defaults', async () => {
    const body = bodyFor('columnar_warehouse', 1, {
      config: {
        host: 'okta.example.com',
        database: 'gov',
        initialDatabase: 'dev',
        authenticationType: 'okta',
        okta: { username: 'o-user', password: 'okta-secret', appId: 'app', idpHost: 'https://idp.example.com', role: 'r' },
      },
    });
    const created = await call(sb, 'POST', '/integrations', { body });
    expect(created.status).toBe(200);
    const got = await call(sb, 'GET', `/integrations/${created.body.id}`);
    expect(got.body.config.okta.password).toBe(MASK);
    expect(got.body.config.okta.username).toBe(MASK);
    expect(got.body.config.okta.appId).toBe('app');
    expect(got.body.config.port).toBe(5439);
    expect(got.body.config.impersonation).toEqual({ enabled: false, role: 'service_impersonation' });
    expect(got.text).not.toContain('okta-secret');
    const list = await call(sb, 'GET', '/integrations');
    expect(list.text).not.toContain('okta-secret');
  });

  it('distributed_sql is created with only type', async () => {
    const r = await call(sb, 'POST', '/integrations', { body: { type: 'distributed_sql' } });
    expect(r.status).toBe(200);
    const got = await call(sb, 'GET', `/integrations/${r.body.id}`);
    expect(got.body).toMatchObject({ type: 'distributed_sql', autoBootstrap: false, config: {} });
  });

  it('accepts YAML bodies for integration requests', async () => {
    const yaml = 'type: sql_analytics\nautoBootstrap: false\nconfig:\n  host: yaml.example.com\n  database: d\n  schema: s\n  username: u\n  password: yaml-secret\n';
    const r = await call(sb, 'POST', '/integrations', { raw: yaml, contentType: 'application/yaml' });
    expect(r.status).toBe(200);
    const got = await call(sb, 'GET', `/integrations/${r.body.id}`);
    expect(got.body.config.host).toBe('yaml.example.com');
  });

  it('accepts a YAML payload sent with the JSON content type, on POST and PUT (webhooks stay JSON-only)', async () => {
    const yaml = (schema: string) =>
      `type: sql_analytics\nautoBootstrap: false\nconfig:\n  host: yaml2.example.com\n  database: d\n  schema: ${schema}\n  username: u\n  password: yaml-secret\n`;
    const r = await call(sb, 'POST', '/integrations', { raw: yaml('s1'), contentType: 'application/json' });
    expect(r.status).toBe(200);
    await settle(sb, r.body.id);
    const u = await call(sb, 'PUT', `/integrations/${r.body.id}`, { raw: yaml('s2'), contentType: 'application/json' });
    expect(u.status).toBe(200);
    await settle(sb, r.body.id);
    expect((await call(sb, 'GET', `/integrations/${r.body.id}`)).body.config.schema).toBe('s2');
    const notAnything = await call(sb, 'POST', '/integrations', { raw: 'just words', contentType: 'application/json' });
    expect(notAnything.status).toBe(400);
    const hook = await call(sb, 'POST', '/webhooks', { token: `Bearer ${sb.adminToken}`, raw: 'webhooks: []\n', contentType: 'application/json' });
    expect(hook.status).toBe(400);
  });

  it('ids are a numeric sequence', async () => {
    const a = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics', 1) });
    const b = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics', 2) });
    expect(Number(b.body.id)).toBe(Number(a.body.id) + 1);
  });
});

describe('status machine', () => {
  it('creating -> enabled, editing -> enabled, deleting -> removed (then 404)', async () => {
    sb.setStuckTransitions(true);
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    const id = c.body.id as string;
    expect((await call(sb, 'GET', `/integrations/${id}/status`)).body.status).toBe('creating');
    sb.setStuckTransitions(false);
    expect(await settle(sb, id)).toBe('enabled');
    const body = bodyFor('sql_analytics', 1);
    (body.config as Record<string, unknown>).schema = 'other';
    const u = await call(sb, 'PUT', `/integrations/${id}`, { body });
    expect(u.status).toBe(200);
    expect(Object.keys(u.body).sort()).toEqual(['id', 'status', 'validationResults']);
    expect(u.body).toMatchObject({ id, status: 'editing' });
    expect(await settle(sb, id)).toBe('enabled');
    expect((await call(sb, 'GET', `/integrations/${id}`)).body.config.schema).toBe('other');
    const d = await call(sb, 'DELETE', `/integrations/${id}`, { body: DELETE_PAYLOAD });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id, status: 'deleting' });
    expect(Object.keys(d.body).sort()).toEqual(['id', 'status', 'validationResults']);
    expect(await settle(sb, id)).toBe('removed');
    expect((await call(sb, 'GET', `/integrations/${id}`)).status).toBe(404);
  });

  it('transitions take about transitionMs', async () => {
    const slow = await start({ transitionMs: 1500 });
    try {
      const t0 = Date.now();
      const c = await call(slow, 'POST', '/integrations', { body: bodyFor('lakehouse') });
      expect((await call(slow, 'GET', `/integrations/${c.body.id}/status`)).body.status).toBe('creating');
      expect(await settle(slow, c.body.id)).toBe('enabled');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    } finally {
      await slow.close();
    }
  });

  it('PUT during editing and DELETE during deleting are 409', async () => {
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('cloud_warehouse') });
    const id = c.body.id as string;
    await settle(sb, id);
    sb.setStuckTransitions(true);
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('cloud_warehouse') })).status).toBe(200);
    const again = await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('cloud_warehouse') });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    const delWhileEditing = await call(sb, 'DELETE', `/integrations/${id}`, { body: CLOUD_DELETE_PAYLOAD });
    expect(delWhileEditing.status).toBe(409);
    expect(sb.finishTransitions()).toBe(1);
    expect((await call(sb, 'DELETE', `/integrations/${id}`, { body: CLOUD_DELETE_PAYLOAD })).status).toBe(200);
    const del2 = await call(sb, 'DELETE', `/integrations/${id}`, { body: CLOUD_DELETE_PAYLOAD });
    expect(del2.status).toBe(409);
    expect(del2.body.message).toMatch(/being modified or deleted/);
    const putWhileDeleting = await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('cloud_warehouse') });
    expect(putWhileDeleting.status).toBe(409);
    sb.setStuckTransitions(false);
    expect(await settle(sb, id)).toBe('removed');
  });

  it('PUT and DELETE while creating are accepted (interface 3: 409 only in editing or deleting)', async () => {
    sb.setStuckTransitions(['creating', 'deleting']);
    const body = bodyFor('sql_analytics', 1, { autoBootstrap: false });
    const c = await call(sb, 'POST', '/integrations', { body });
    const id = c.body.id as string;
    (body.config as Record<string, unknown>).schema = 'changed-while-creating';
    const u = await call(sb, 'PUT', `/integrations/${id}`, { body });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ id, status: 'editing' });
    expect(await settle(sb, id)).toBe('enabled');
    expect((await call(sb, 'GET', `/integrations/${id}`)).body.config.schema).toBe('changed-while-creating');
    const c2 = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse', 2) });
    expect((await call(sb, 'GET', `/integrations/${c2.body.id}/status`)).body.status).toBe('creating');
    const d = await call(sb, 'DELETE', `/integrations/${c2.body.id}`);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id: c2.body.id, status: 'deleting' });
  });
});

describe('dryRun', () => {
  it('create with dryRun=true changes nothing and returns validation results', async () => {
    const r = await call(sb, 'POST', '/integrations?dryRun=true', { body: bodyFor('sql_analytics') });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: '', status: 'dryRun', validationResults: { status: 'passed' } });
    expect((await call(sb, 'GET', '/integrations')).body).toEqual([]);
  });

  it('update and delete with dryRun=true change nothing', async () => {
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    const id = c.body.id as string;
    await settle(sb, id);
    const body = bodyFor('sql_analytics');
    (body.config as Record<string, unknown>).schema = 'changed';
    const u = await call(sb, 'PUT', `/integrations/${id}?dryRun=true`, { body });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ id, status: 'enabled' });
    expect(u.body.validationResults.validationTests.length).toBeGreaterThan(0);
    const got = await call(sb, 'GET', `/integrations/${id}`);
    expect(got.body.config.schema).toBe('secure');
    expect(got.body.status).toBe('enabled');
    const d = await call(sb, 'DELETE', `/integrations/${id}?dryRun=true`, { body: DELETE_PAYLOAD });
    expect(d.status).toBe(200);
    expect(d.body.status).toBe('enabled');
    await sleep(200);
    expect((await call(sb, 'GET', `/integrations/${id}/status`)).body.status).toBe('enabled');
  });

  it('a dry run still reports a failing validation test with 422', async () => {
    const body = bodyFor('sql_analytics', 1, {});
    (body.config as Record<string, unknown>).host = 'down.invalid';
    const r = await call(sb, 'POST', '/integrations?dryRun=true', { body });
    expect(r.status).toBe(422);
    expect(r.body.validationResults.status).toBe('failed');
  });
});

describe('validation tests per kind', () => {
  it('skips the automatic tests of a manual integration', async () => {
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics', 1, { autoBootstrap: false }) });
    const tests = r.body.validationResults.validationTests as Array<{ name: string; status: string }>;
    expect(tests.find((t) => t.name === 'Validate Automatic Bootstrap User Grants')?.status).toBe('skipped');
    expect(tests.find((t) => t.name === 'Initial Validation: Basic Connection Test')?.status).toBe('passed');
  });

  it('lakehouse runs the metastore validation', async () => {
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    const names = (r.body.validationResults.validationTests as Array<{ name: string }>).map((t) => t.name);
    expect(names).toEqual(['Basic Connection Test', 'Metastore validation']);
  });
});
