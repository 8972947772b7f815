/**
 * Interface 8 "Uniqueness" and 7 (POST /integrations 409): one integration per host and kind, whatever else the
 * second one's config says. The second body here shares only the host (the workspace for lakehouse) with the first:
 * every other field differs, so a natural key that holds more than the host lets it through.
 */
import { describe, expect, it } from 'vitest';
import { bodyFor, call, sandboxPerFile } from './harness.js';

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
