/** The six script endpoints: text scripts reflecting the config, body rules, post-cleanup after cleanup. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bodyFor, call, settle, start } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 20 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.reset());

const manual = (kind: string, n = 1) => bodyFor(kind, n, { autoBootstrap: false });

describe('scripts with a body', () => {
  it('create: text/plain script naming the database, user and grants; no credentials', async () => {
    const r = await call(sb, 'POST', '/integrations/scripts/create', { body: manual('cloud_warehouse') });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r.text).toContain('CREATE DATABASE IF NOT EXISTS "GOV"');
    expect(r.text).toContain('CREATE USER IF NOT EXISTS "svc"');
    expect(r.text).toMatch(/GRANT USAGE ON WAREHOUSE "COMPUTE_WH"/);
    expect(r.text).not.toContain('cw-secret');
  });

  it('create reflects impersonation roles', async () => {
    const body = manual('sql_analytics');
    (body.config as Record<string, unknown>).impersonation = { enabled: true };
    const r = await call(sb, 'POST', '/integrations/scripts/create', { body });
    expect(r.text).toContain('CREATE ROLE "SERVICE_IMPERSONATION"');
  });

  it.each([
    ['create', 'lakehouse', 200],
    ['create', 'object_store', 400],
    ['initial-create', 'sql_analytics', 200],
    ['initial-create', 'columnar_warehouse', 200],
    ['initial-create', 'cloud_warehouse', 400],
    ['cleanup', 'columnar_warehouse', 200],
    ['cleanup', 'lakehouse', 400],
    ['post-cleanup', 'columnar_warehouse', 400],
  ])('%s accepts only its kinds (%s -> %i)', async (phase, kind, status) => {
    const r = await call(sb, 'POST', `/integrations/scripts/${phase}`, { body: manual(kind) });
    expect(r.status).toBe(status);
    if (status === 400) expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  });

  it('autoBootstrap must be false, type and config are required', async () => {
    const auto = await call(sb, 'POST', '/integrations/scripts/create', { body: bodyFor('sql_analytics') });
    expect(auto.status).toBe(400);
    expect(auto.body.message).toMatch(/autoBootstrap/);
    const missing = { ...manual('sql_analytics') };
    delete missing.autoBootstrap;
    expect((await call(sb, 'POST', '/integrations/scripts/create', { body: missing })).status).toBe(400);
    expect((await call(sb, 'POST', '/integrations/scripts/create', { body: { type: 'sql_analytics', autoBootstrap: false } })).status).toBe(400);
    expect((await call(sb, 'POST', '/integrations/scripts/create', { body: { autoBootstrap: false, config: {} } })).status).toBe(400);
  });

  it('post-cleanup only after cleanup for the same configuration', async () => {
    const before = await call(sb, 'POST', '/integrations/scripts/post-cleanup', { body: manual('sql_analytics') });
    expect(before.status).toBe(400);
    expect(before.body.message).toMatch(/cleanup/);
    const cleanup = await call(sb, 'POST', '/integrations/scripts/cleanup', { body: manual('sql_analytics') });
    expect(cleanup.status).toBe(200);
    expect(cleanup.text).toContain('DROP SCHEMA IF EXISTS "secure"');
    const other = await call(sb, 'POST', '/integrations/scripts/post-cleanup', { body: manual('sql_analytics', 2) });
    expect(other.status).toBe(400);
    const after = await call(sb, 'POST', '/integrations/scripts/post-cleanup', { body: manual('sql_analytics') });
    expect(after.status).toBe(200);
    expect(after.text).toContain('DROP LOGIN "svc"');
  });
});

describe('scripts for an existing integration', () => {
  it('edit: script for a manual integration of an edit kind; type must match', async () => {
    const c = await call(sb, 'POST', '/integrations', { body: manual('columnar_warehouse') });
    await settle(sb, c.body.id);
    const r = await call(sb, 'POST', `/integrations/${c.body.id}/scripts/edit`, { body: manual('columnar_warehouse') });
    expect(r.status).toBe(200);
    expect(r.text).toContain(`(id ${c.body.id})`);
    expect(r.text).toContain('GRANT CREATE ON DATABASE "gov"');
    const wrongType = await call(sb, 'POST', `/integrations/${c.body.id}/scripts/edit`, { body: manual('sql_analytics') });
    expect(wrongType.status).toBe(400);
    // edit scripts exist for sql_analytics, lakehouse, columnar_warehouse, cloud_warehouse only
    const store = await call(sb, 'POST', '/integrations', { body: manual('object_store') });
    const notEditKind = await call(sb, 'POST', `/integrations/${store.body.id}/scripts/edit`, { body: manual('object_store') });
    expect(notEditKind.status).toBe(400);
    expect(notEditKind.body.message).toMatch(/accepts only these types/);
    const lake = await call(sb, 'POST', '/integrations', { body: manual('lakehouse') });
    expect((await call(sb, 'POST', `/integrations/${lake.body.id}/scripts/edit`, { body: manual('lakehouse') })).status).toBe(200);
  });

  it('edit and delete refuse integrations created with autoBootstrap true', async () => {
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    expect((await call(sb, 'POST', `/integrations/${c.body.id}/scripts/edit`, { body: manual('sql_analytics') })).status).toBe(400);
    expect((await call(sb, 'POST', `/integrations/${c.body.id}/scripts/delete`)).status).toBe(400);
  });

  it('delete: no body, only sql_analytics/columnar_warehouse/cloud_warehouse', async () => {
    const c = await call(sb, 'POST', '/integrations', { body: manual('sql_analytics') });
    const r = await call(sb, 'POST', `/integrations/${c.body.id}/scripts/delete`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('DROP USER IF EXISTS "svc"');
    expect((await call(sb, 'POST', `/integrations/${c.body.id}/scripts/delete`, { body: { x: 1 } })).status).toBe(400);
    const lake = await call(sb, 'POST', '/integrations', { body: manual('lakehouse') });
    expect((await call(sb, 'POST', `/integrations/${lake.body.id}/scripts/delete`)).status).toBe(400);
  });
});
