/** Every row of the error table (interface part 7), uniqueness (8), delete payload rules (2.9), failure triggers. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bodyFor, call, settle, DELETE_PAYLOAD, CLOUD_DELETE_PAYLOAD, start, type Reply } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 30 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.reset());

function expectError(r: Reply, status: number, error: string, message?: RegExp): void {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ statusCode: status, error });
  expect(typeof r.body.message).toBe('string');
  if (message) expect(r.body.message).toMatch(message);
}

async function created(kind: string, n = 1, overrides: Record<string, unknown> = {}): Promise<string> {
  const r = await call(sb, 'POST', '/integrations', { body: bodyFor(kind, n, overrides) });
  expect(r.status).toBe(200);
  await settle(sb, r.body.id);
  return r.body.id as string;
}

describe('404 for unknown ids everywhere', () => {
  it.each([
    ['GET', '/integrations/999'],
    ['PUT', '/integrations/999'],
    ['DELETE', '/integrations/999'],
    ['GET', '/integrations/999/status'],
    ['POST', '/integrations/999/scripts/edit'],
    ['POST', '/integrations/999/scripts/delete'],
    ['GET', '/integrations/abc'],
  ])('%s %s', async (method, path) => {
    const body = method === 'PUT' || path.endsWith('edit') ? bodyFor('sql_analytics', 1, { autoBootstrap: false }) : undefined;
    expectError(await call(sb, method, path, { body }), 404, 'Not Found', /not found/i);
  });
});

describe('POST /integrations errors', () => {
  it('400 for an invalid body (schema issues listed)', async () => {
    const r = await call(sb, 'POST', '/integrations', { body: { type: 'sql_analytics', autoBootstrap: true, config: { host: 'x.example.com' } } });
    expectError(r, 400, 'Bad Request', /database/);
  });

  it('400 for autoBootstrap true on object_store / dataset_warehouse', async () => {
    for (const kind of ['object_store', 'dataset_warehouse']) {
      const r = await call(sb, 'POST', '/integrations', { body: bodyFor(kind, 1, { autoBootstrap: true }) });
      expectError(r, 400, 'Bad Request');
    }
  });

  it('400 for malformed JSON', async () => {
    expectError(await call(sb, 'POST', '/integrations', { raw: '{"type":' }), 400, 'Bad Request', /Malformed JSON/);
  });

  it('409 when an integration already exists on the host, naming its id and host', async () => {
    const id = await created('sql_analytics');
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
    expectError(r, 409, 'Conflict', new RegExp(`id ${id}\\b`));
    expect(r.body.message).toContain('sql1.example.com');
  });

  it('409 uniqueness is per kind: the same host in another kind is fine', async () => {
    await created('sql_analytics');
    const body = bodyFor('columnar_warehouse');
    (body.config as Record<string, unknown>).host = 'sql1.example.com';
    expect((await call(sb, 'POST', '/integrations', { body })).status).toBe(200);
  });

  it('409 on host case/port variants of the same host (natural key)', async () => {
    await created('cloud_warehouse');
    const body = bodyFor('cloud_warehouse');
    (body.config as Record<string, unknown>).host = 'CW1.example.com';
    expect((await call(sb, 'POST', '/integrations', { body })).status).toBe(409);
  });

  it('object_store: name and cloudLocationPath are unique', async () => {
    const id = await created('object_store', 1);
    const sameName = bodyFor('object_store', 2);
    (sameName.config as Record<string, unknown>).name = 'store-1';
    expectError(await call(sb, 'POST', '/integrations', { body: sameName }), 409, 'Conflict', new RegExp(`id ${id}`));
    const samePath = bodyFor('object_store', 3);
    (samePath.config as Record<string, unknown>).cloudLocationPath = 's3://bucket-1/';
    expectError(await call(sb, 'POST', '/integrations', { body: samePath }), 409, 'Conflict', /cloudLocationPath/);
    expect((await call(sb, 'POST', '/integrations', { body: bodyFor('object_store', 4) })).status).toBe(200);
  });

  it('422 when a validation test fails (host ending in .invalid), with validationResults', async () => {
    const body = bodyFor('sql_analytics');
    (body.config as Record<string, unknown>).host = 'db.invalid';
    const r = await call(sb, 'POST', '/integrations', { body });
    expectError(r, 422, 'Unprocessable Entity', /Basic Connection Test/);
    const failed = r.body.validationResults.validationTests.find((t: { status: string }) => t.status === 'failed');
    expect(failed.name).toBe('Initial Validation: Basic Connection Test');
    expect((await call(sb, 'GET', '/integrations')).body).toEqual([]);
  });

  it('422 when lakehouse metastore information cannot be found', async () => {
    const body = bodyFor('lakehouse');
    (body.config as Record<string, unknown>).httpPath = '/sql/nometastore';
    const r = await call(sb, 'POST', '/integrations', { body });
    expectError(r, 422, 'Unprocessable Entity', /[Mm]etastore information could not be found/);
  });

  it('createError after acceptance, then 400 "previously failed" naming id and host and saying PUT, then PUT fixes it', async () => {
    const body = bodyFor('sql_analytics');
    (body.config as Record<string, unknown>).host = 'db.late-fail.example';
    const c = await call(sb, 'POST', '/integrations', { body });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe('creating');
    expect(await settle(sb, c.body.id)).toBe('createError');
    const again = await call(sb, 'POST', '/integrations', { body });
    expectError(again, 400, 'Bad Request', /previously failed/);
    expect(again.body.message).toContain(`id ${c.body.id}`);
    expect(again.body.message).toContain('db.late-fail.example');
    expect(again.body.message).toMatch(/PUT/);
    const put = await call(sb, 'PUT', `/integrations/${c.body.id}`, { body });
    expect(put.status).toBe(200);
    expect(put.body.status).toBe('editing');
    expect(await settle(sb, c.body.id)).toBe('enabled');
  });
});

describe('PUT /integrations/{id} errors', () => {
  it('400 listing the non-editable attributes that changed', async () => {
    const id = await created('sql_analytics');
    const body = bodyFor('sql_analytics', 1, { autoBootstrap: false });
    Object.assign(body.config as Record<string, unknown>, { host: 'moved.example.com', database: 'other' });
    const r = await call(sb, 'PUT', `/integrations/${id}`, { body });
    expectError(r, 400, 'Bad Request');
    expect(r.body.message).toContain('config.host');
    expect(r.body.message).toContain('config.database');
    expect(r.body.message).toContain('autoBootstrap');
    expect(r.body.message).not.toContain('config.schema');
  });

  it('400 when the type changes', async () => {
    const id = await created('columnar_warehouse');
    const body = bodyFor('cloud_warehouse');
    (body.config as Record<string, unknown>).host = 'col1.example.com';
    (body.config as Record<string, unknown>).database = 'gov';
    const r = await call(sb, 'PUT', `/integrations/${id}`, { body });
    expectError(r, 400, 'Bad Request', /type/);
  });

  it('a default-valued attribute written out is not a change (lakehouse catalog)', async () => {
    const id = await created('lakehouse');
    const body = bodyFor('lakehouse');
    (body.config as Record<string, unknown>).catalog = 'service';
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body })).status).toBe(200);
  });

  it('400 when credentials are sent as the mask', async () => {
    const id = await created('sql_analytics');
    const body = bodyFor('sql_analytics');
    (body.config as Record<string, unknown>).password = '********';
    expectError(await call(sb, 'PUT', `/integrations/${id}`, { body }), 400, 'Bad Request', /config\.password/);
  });

  it('409 while being modified (message says to POST if it was deleted)', async () => {
    const id = await created('sql_analytics');
    sb.setStuckTransitions(true);
    await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') });
    expectError(await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') }), 409, 'Conflict', /POST/);
  });

  it('422 when a validation test fails (control rule for this id)', async () => {
    const id = await created('cloud_warehouse');
    const rule = await call(sb, 'POST', '/_sandbox/fail-tests', {
      body: { name: 'Initial Validation: Default Warehouse Access Test', id: Number(id), count: 1 },
    });
    expect(rule.status).toBe(200);
    const r = await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('cloud_warehouse') });
    expectError(r, 422, 'Unprocessable Entity', /Default Warehouse Access Test/);
    // count: 1 — the next attempt passes.
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('cloud_warehouse') })).status).toBe(200);
  });

  it('fail-tests refuses a test name no validation has (it would never fire), naming the real ones', async () => {
    const short = await call(sb, 'POST', '/_sandbox/fail-tests', { body: { name: 'Database Does Not Exist' } });
    expectError(short, 400, 'Bad Request', /unknown validation test "Database Does Not Exist".*Validate Automatic: Database Does Not Exist/);
    expect((await call(sb, 'GET', '/_sandbox/failures')).body.tests).toEqual([]);
    for (const name of ['*', 'Validate Automatic: Database Does Not Exist', 'Basic Connection Test', 'Metastore validation']) {
      expect((await call(sb, 'POST', '/_sandbox/fail-tests', { body: { name } })).status, name).toBe(200);
    }
  });

  it("fail-tests count is a number of validations: name '*' with count 2 fails every test of the next two", async () => {
    const id = await created('sql_analytics');
    expect((await call(sb, 'POST', '/_sandbox/fail-tests', { body: { name: '*', id: Number(id), count: 2 } })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const r = await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') });
      expectError(r, 422, 'Unprocessable Entity', /failed/);
      const ran = r.body.validationResults.validationTests.filter((t: { status: string }) => t.status !== 'skipped');
      expect(ran.length).toBeGreaterThan(1);
      expect(ran.map((t: { status: string }) => t.status)).toEqual(ran.map(() => 'failed'));
    }
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') })).status).toBe(200);
  });

  it('editError after acceptance (fail-next), fixed by another PUT', async () => {
    const id = await created('sql_analytics');
    await call(sb, 'POST', '/_sandbox/fail-next', { body: { operation: 'edit', id: Number(id) } });
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') })).status).toBe(200);
    expect(await settle(sb, id)).toBe('editError');
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: bodyFor('sql_analytics') })).status).toBe(200);
    expect(await settle(sb, id)).toBe('enabled');
  });
});

describe('DELETE /integrations/{id} payload rules and errors', () => {
  it('400 when credentials are sent for a manually configured integration', async () => {
    const id = await created('sql_analytics', 1, { autoBootstrap: false });
    expectError(await call(sb, 'DELETE', `/integrations/${id}`, { body: DELETE_PAYLOAD }), 400, 'Bad Request', /manually/);
    expect((await call(sb, 'DELETE', `/integrations/${id}`)).status).toBe(200);
  });

  it.each(['sql_analytics', 'columnar_warehouse', 'cloud_warehouse'])(
    '400 when %s was created with autoBootstrap true and the privileged credentials are missing',
    async (kind) => {
      const id = await created(kind);
      expectError(await call(sb, 'DELETE', `/integrations/${id}`), 400, 'Bad Request', /credentials/);
      expectError(await call(sb, 'DELETE', `/integrations/${id}`, { body: {} }), 400, 'Bad Request');
    },
  );

  it('400 when the delete payload is invalid (cloud_warehouse needs role)', async () => {
    const id = await created('cloud_warehouse');
    expectError(await call(sb, 'DELETE', `/integrations/${id}`, { body: DELETE_PAYLOAD }), 400, 'Bad Request', /role/);
    expect((await call(sb, 'DELETE', `/integrations/${id}`, { body: CLOUD_DELETE_PAYLOAD })).status).toBe(200);
  });

  it('400 when a sql_analytics delete payload has an authenticationType other than userPassword (2.9)', async () => {
    const id = await created('sql_analytics');
    for (const authenticationType of ['keyPair', 'accessKey', 'okta', 'oAuth']) {
      const r = await call(sb, 'DELETE', `/integrations/${id}`, { body: { ...DELETE_PAYLOAD, authenticationType } });
      expectError(r, 400, 'Bad Request', /authenticationType/);
    }
    expect((await call(sb, 'GET', `/integrations/${id}/status`)).body.status).toBe('enabled');
    expect((await call(sb, 'DELETE', `/integrations/${id}`, { body: DELETE_PAYLOAD })).status).toBe(200);
  });

  it('400 when credentials are sent for a lakehouse integration', async () => {
    const id = await created('lakehouse');
    expectError(await call(sb, 'DELETE', `/integrations/${id}`, { body: { token: 'x' } }), 400, 'Bad Request', /lakehouse/);
    expect((await call(sb, 'DELETE', `/integrations/${id}`)).status).toBe(200);
  });

  it.each(['object_store', 'dataset_warehouse', 'distributed_sql'])('400 when a body is sent to delete %s', async (kind) => {
    const id = await created(kind);
    expectError(await call(sb, 'DELETE', `/integrations/${id}`, { body: DELETE_PAYLOAD }), 400, 'Bad Request');
    expect((await call(sb, 'DELETE', `/integrations/${id}`)).status).toBe(200);
    expect(await settle(sb, id)).toBe('removed');
  });

  it('422 when a validation test fails', async () => {
    const id = await created('lakehouse');
    await call(sb, 'POST', '/_sandbox/fail-tests', { body: { name: 'Basic Connection Test', operation: 'delete' } });
    const r = await call(sb, 'DELETE', `/integrations/${id}`);
    expectError(r, 422, 'Unprocessable Entity');
    expect(r.body.validationResults.status).toBe('failed');
    expect((await call(sb, 'GET', `/integrations/${id}/status`)).body.status).toBe('enabled');
  });

  it('deleteError after acceptance (fail-next); the integration stays', async () => {
    const id = await created('object_store');
    await call(sb, 'POST', '/_sandbox/fail-next', { body: { operation: 'delete' } });
    expect((await call(sb, 'DELETE', `/integrations/${id}`)).status).toBe(200);
    expect(await settle(sb, id)).toBe('deleteError');
    expect((await call(sb, 'DELETE', `/integrations/${id}`)).status).toBe(200);
    expect(await settle(sb, id)).toBe('removed');
  });
});

describe('warnings', () => {
  it('a warning test does not fail the request; overall status is warning', async () => {
    await call(sb, 'POST', '/_sandbox/fail-tests', {
      body: { name: 'Initial Validation: Table Grants Role Prefix is Unique', status: 'warning' },
    });
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor('cloud_warehouse') });
    expect(r.status).toBe(200);
    expect(r.body.validationResults.status).toBe('warning');
  });
});
