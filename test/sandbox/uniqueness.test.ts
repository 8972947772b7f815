/**
 * Interface 8 "Uniqueness" and 7 (POST /integrations 409): one integration per host and kind, whatever else the
 * second one's config says. The second body here shares only the host (the workspace for lakehouse) with the first:
 * every other field differs, so a natural key that holds more than the host lets it through.
 */
import { describe, expect, it } from 'vitest';
import { bodyFor, call, sandboxPerFile, settle } from './harness.js';

const box = sandboxPerFile();

type Body = { type: string; autoBootstrap?: boolean; config: Record<string, unknown> };

/** [kind, the host field, the other fields of a second body on the same host]. */
const CASES: Array<[string, string, Record<string, unknown>]> = [
  ['sql_analytics', 'host', { database: 'otherdb', schema: 'other', username: 'u2', password: 'p2', port: 1434 }],
  ['columnar_warehouse', 'host', { database: 'otherdb', initialDatabase: 'other', username: 'u2', password: 'p2', port: 5440 }],
  ['cloud_warehouse', 'host', { database: 'OTHERDB', warehouse: 'OTHER_WH', username: 'u2', password: 'p2', role: 'OTHER', port: 444 }],
  ['lakehouse', 'workspaceUrl', { httpPath: '/sql/1.0/warehouses/other', token: 't2', catalog: 'other_catalog', port: 444 }],
];

describe('one integration per host and kind (409 naming the existing one)', () => {
  it.each(CASES)('%s: a second one on the same %s is a 409, also with every other field different', async (kind, hostField, others) => {
    const first = bodyFor(kind, 1) as Body;
    const made = await call(box.sb, 'POST', '/integrations', { body: first });
    expect(made.status, made.text).toBe(200);
    const second: Body = { ...first, config: { ...first.config, ...others, [hostField]: first.config[hostField] } };
    const dry = await call(box.sb, 'POST', '/integrations?dryRun=true', { body: second });
    expect(dry.status, dry.text).toBe(409);
    expect(dry.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    expect(dry.body.message).toContain(String(made.body.id));
    const real = await call(box.sb, 'POST', '/integrations', { body: second });
    expect(real.status, real.text).toBe(409);
    // another host of the same kind is another integration
    const elsewhere = await call(box.sb, 'POST', '/integrations', { body: bodyFor(kind, 2) });
    expect(elsewhere.status, elsewhere.text).toBe(200);
  });
});

describe('uniqueness is checked on create only (interface 8: "Applies to: create"; a PUT 409 is only "being modified or deleted")', () => {
  it('a dataset_warehouse PUT giving it the role another one on its dataset has is not a 409 (busy) answer', async () => {
    const first = bodyFor('dataset_warehouse', 1) as Body;
    const second = bodyFor('dataset_warehouse', 2) as Body;
    const a = await call(box.sb, 'POST', '/integrations', { body: first });
    expect(a.status, a.text).toBe(200);
    const b = await call(box.sb, 'POST', '/integrations', { body: second });
    expect(b.status, b.text).toBe(200);
    await settle(box.sb, a.body.id);
    await settle(box.sb, b.body.id);
    const put = await call(box.sb, 'PUT', `/integrations/${a.body.id}`, { body: { ...first, config: { ...first.config, role: second.config.role } } });
    // a 409 here tells the client the integration is busy: it waits and retries a write that can never succeed
    expect(put.status, put.text).toBe(200);
    expect(await settle(box.sb, a.body.id)).toBe('enabled');
    // a create on that key is still refused while either holds it
    const third = await call(box.sb, 'POST', '/integrations', { body: second });
    expect(third.status, third.text).toBe(409);
    await call(box.sb, 'DELETE', `/integrations/${b.body.id}`);
    expect(await settle(box.sb, b.body.id)).toBe('removed');
    const fourth = await call(box.sb, 'POST', '/integrations', { body: second });
    expect(fourth.status, fourth.text).toBe(409);
  });
});
