/**
 * POST /webhooks item types (interface 4.3): `global` boolean, `notificationType` array, `actionType` string of
 * triggered or receive. A value of another type is an error for that item (400) from the sandbox, not a failed
 * request, and an error from govops validate. (`notificationType` as one string, not a list of one, is the mistake a
 * manifest author makes.)
 */
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../../src/manifests/parse.js';
import { ADMIN, hook, harnessPerFile } from './webhooks-helpers.js';

const h = harnessPerFile();

const CASES: Array<[string, unknown]> = [
  ['notificationType', 'modelCreated'],
  ['notificationType', { modelCreated: true }],
  ['notificationType', 7],
  ['actionType', ['triggered']],
  ['actionType', true],
  ['global', 'true'],
  ['global', 0],
];

describe('a webhook item field of the wrong type', () => {
  it.each(CASES)('%s = %j: a 400 error for the item, and a govops error', async (field, value) => {
    const item = { ...hook('http://127.0.0.1:1/t', { name: 't' }), [field]: value };
    const { name: _name, ...spec } = item;
    void _name;
    const manifest = { apiVersion: 'govops/v1', kind: 'Webhook', metadata: { name: 't' }, spec };
    const errors = parseManifestText(JSON.stringify(manifest), 'h.yaml', '/tmp').diagnostics.filter((d) => d.severity === 'error');
    expect(errors.length, JSON.stringify(errors.map((d) => d.message))).toBeGreaterThan(0);
    const res = await h.call('POST', '/webhooks', ADMIN, { webhooks: [item] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.createdWebhooks).toEqual([]);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ index: 0, statusCode: 400 });
    expect(res.body.errors[0].message).toContain(field);
  });
});
