/**
 * The enumerations of the interface tables, each against every value another table allows and a case variant of its
 * own: `authenticationType` of object_store (2.3), columnar_warehouse (2.7), cloud_warehouse (2.8) and of the three
 * delete payloads (2.9). A value outside the list is refused by the sandbox (400 naming the field) and by govops
 * validate (the manifest, or the delete payload). Written from the interface document.
 */
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../../src/manifests/parse.js';
import { errorsOf, validateDeletePayload } from '../../src/manifests/schemas.js';
import type { IntegrationType } from '../../src/kinds/registry.js';
import { bodyFor, call, settle, sandboxPerFile } from './harness.js';

const box = sandboxPerFile();

const EVERY_AUTH = ['auto', 'accessKey', 'userPassword', 'okta', 'keyPair', 'oAuth'];

const CONFIG_ENUMS: Array<[string, readonly string[]]> = [
  ['object_store', ['auto', 'accessKey']],
  ['columnar_warehouse', ['userPassword', 'accessKey', 'okta']],
  ['cloud_warehouse', ['userPassword', 'keyPair', 'oAuth']],
];
const DELETE_ENUMS: Array<[IntegrationType, readonly string[]]> = [
  ['sql_analytics', ['userPassword']],
  ['columnar_warehouse', ['userPassword', 'accessKey', 'okta']],
  ['cloud_warehouse', ['userPassword', 'keyPair', 'oAuth']],
];

/** Values outside `allowed`: every other table's, and the first allowed one in lower case. */
const outside = (allowed: readonly string[]): string[] => [...EVERY_AUTH.filter((v) => !allowed.includes(v)), allowed[0]!.toLowerCase()].filter((v) => !allowed.includes(v));

const CONFIG_CASES = CONFIG_ENUMS.flatMap(([kind, allowed]) => outside(allowed).map((value): [string, string] => [kind, value]));
const DELETE_CASES = DELETE_ENUMS.flatMap(([kind, allowed]) => outside(allowed).map((value): [IntegrationType, string] => [kind, value]));

describe('config authenticationType: a value outside the kind\'s list', () => {
  it.each(CONFIG_CASES)('%s: %s is refused by the service and by govops', async (kind, value) => {
    const body = structuredClone(bodyFor(kind)) as { config: Record<string, unknown> };
    body.config.authenticationType = value;
    const manifest = { apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'case' }, spec: body };
    const errors = parseManifestText(JSON.stringify(manifest), 'case.yaml', '/tmp').diagnostics.filter((d) => d.severity === 'error');
    expect(errors.some((d) => d.message.includes('must be one of')), JSON.stringify(errors.map((d) => d.message))).toBe(true);
    const r = await call(box.sb, 'POST', '/integrations?dryRun=true', { body });
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toContain('config.authenticationType must be one of');
  });
});

describe('delete payload authenticationType (2.9): a value outside the kind\'s list', () => {
  it.each(DELETE_CASES)('%s: %s is refused by the service and by govops', async (kind, value) => {
    const payload = { authenticationType: value, username: 'a', password: 'p', role: 'R' };
    const errors = errorsOf(validateDeletePayload(kind, payload));
    expect(errors.some((e) => e.path.join('.').includes('authenticationType') || e.message.includes('authenticationType')), JSON.stringify(errors)).toBe(true);
    const c = await call(box.sb, 'POST', '/integrations', { body: bodyFor(kind) });
    expect(await settle(box.sb, c.body.id)).toBe('enabled');
    const r = await call(box.sb, 'DELETE', `/integrations/${c.body.id}?dryRun=true`, { body: payload });
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toContain('body.authenticationType must be one of');
  });
});
