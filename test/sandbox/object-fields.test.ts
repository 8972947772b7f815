/**
 * The fields whose Type cell is "object" (interface 2.4-2.8, 2.10, 2.11): a value of another type (a string, a list,
 * a number) is refused by the sandbox (400 naming the field) and by govops validate. Written from the interface
 * document, one case per field and wrong type.
 */
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../../src/manifests/parse.js';
import { bodyFor, call, sandboxPerFile } from './harness.js';

const box = sandboxPerFile({ reset: false });

type Body = { type: string; autoBootstrap?: boolean; config: Record<string, unknown> };

/** [kind, object field, the base body's changes that make the field apply]. */
const FIELDS: Array<[string, string, Record<string, unknown>, boolean?]> = [
  ['sql_analytics', 'metadataDelimiters', {}],
  ['sql_analytics', 'impersonation', {}],
  ['lakehouse', 'audit', {}],
  ['lakehouse', 'groupPattern', {}],
  ['columnar_warehouse', 'impersonation', {}],
  ['columnar_warehouse', 'okta', { authenticationType: 'okta', username: undefined, password: undefined }],
  ['cloud_warehouse', 'oAuthClientConfig', { authenticationType: 'oAuth', username: undefined, password: undefined, role: undefined }, false],
  ['cloud_warehouse', 'audit', {}],
  ['cloud_warehouse', 'impersonation', {}],
  ['cloud_warehouse', 'userRolePattern', {}],
  ['cloud_warehouse', 'workspaces', {}],
  ['cloud_warehouse', 'lineage', {}],
];

const WRONG: Array<[string, unknown]> = [
  ['a string', 'enabled'],
  ['a list', [{ enabled: true }]],
  ['a number', 1],
];

const CASES = FIELDS.flatMap(([kind, field, changes, auto]) => WRONG.map(([what, value]): [string, string, string, Record<string, unknown>, boolean | undefined, unknown] => [kind, field, what, changes, auto, value]));

function bodyWith(kind: string, changes: Record<string, unknown>, auto: boolean | undefined, field: string, value: unknown): Body {
  const b = structuredClone(bodyFor(kind)) as Body;
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete b.config[k];
    else b.config[k] = v;
  }
  if (auto !== undefined) b.autoBootstrap = auto;
  b.config[field] = value;
  return b;
}

describe('an object field given another type is refused by the service and by govops', () => {
  it.each(CASES)('%s config.%s as %s', async (kind, field, _what, changes, auto, value) => {
    const body = bodyWith(kind, changes, auto, field, value);
    const manifest = { apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'case' }, spec: body };
    const errors = parseManifestText(JSON.stringify(manifest), 'case.yaml', '/tmp').diagnostics.filter((d) => d.severity === 'error');
    expect(errors.length, JSON.stringify(errors.map((d) => d.message))).toBeGreaterThan(0);
    const r = await call(box.sb, 'POST', '/integrations?dryRun=true', { body });
    expect(r.status, r.text).toBe(400);
    expect(r.body.message).toContain(`config.${field} must be an object`);
  });
});
