/**
 * `govops export` round trips of the authentication shapes and nested defaults the examples do not reach
 * (test/behaviours/auth-shapes.test.ts), with data sources and webhooks, under the behaviour sets the example round
 * trip (round-trip.test.ts) leaves out: the export validates and its plan is adopt-only with no field changed.
 */
import { cp, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXAMPLES, exampleEnv } from '../apply/harness.js';
import { rig, type Rig } from '../apply/inproc.js';
import { runGovops } from '../helpers/cli.js';
import { label } from '../behaviours/helpers.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const doc = (name: string, type: string, autoBootstrap: boolean, config: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'govops/v1', kind: 'Integration', metadata: { name }, spec: { type, autoBootstrap, config } }, null, 1);
const secret = (name: string) => ({ fromEnv: name });
const MANIFESTS: Record<string, string> = {
  'oauth-cert.yaml': doc('oauth-cert', 'cloud_warehouse', false, {
    host: 'oa1.example.com', warehouse: 'WH', database: 'GOV', authenticationType: 'oAuth',
    oAuthClientConfig: { provider: 'okta', clientId: 'cid-1234567', authorityUrl: 'https://idp.example.com', publicCertificateThumbprint: 'AB12', oauthPrivateKey: secret('GOVOPS_SECRET_A') },
  }),
  'oauth-secret.yaml': doc('oauth-secret', 'cloud_warehouse', false, {
    host: 'oa2.example.com', warehouse: 'WH', database: 'GOV', authenticationType: 'oAuth',
    oAuthClientConfig: { provider: 'okta', clientId: 'cid-7654321', authorityUrl: 'https://idp.example.com', useCertificate: false, clientSecret: secret('GOVOPS_SECRET_B') },
  }),
  'okta.yaml': doc('okta', 'columnar_warehouse', false, {
    host: 'okta.example.com', database: 'gov', authenticationType: 'okta',
    okta: { username: 'u', password: secret('GOVOPS_SECRET_D'), appId: 'app-12345', idpHost: 'https://idp.example.com', role: 'r' },
  }),
  'store-auto.yaml': doc('store-auto', 'object_store', false, {
    name: 'auto-store', cloudAccountId: '123456789012', cloudRegion: 'eu-west-1', cloudLocationRole: 'arn:role/grants',
    cloudLocationPath: 's3://auto-store/', authenticationType: 'auto',
  }),
  'sql-delims.yaml': doc('sql-delims', 'sql_analytics', false, {
    host: 'delims.example.com', database: 'd', schema: 's', username: 'svc', password: secret('GOVOPS_SECRET_F'),
    metadataDelimiters: { hashDelimiter: ';' },
  }),
};
const ENV = Object.fromEntries('ABDF'.split('').map((l) => [`GOVOPS_SECRET_${l}`, `canary-value-${l}`]));

const SETS: string[][] = [[], ['mask-more'], ['other-mask'], ['lower-hosts'],
  ['omit-defaults', 'null-unset', 'extra-fields', 'numeric-ids', 'omit-masked', 'shuffle', 'data-source-metadata', 'lower-hosts'],
  ['echo-sent', 'null-unset', 'extra-fields', 'string-ids', 'shuffle', 'other-mask', 'mask-more', 'lower-hosts']];

describe.each(SETS.map((set) => ({ set, name: label(set) })))('export round trip of the other auth shapes under $name', ({ set }) => {
  it('export, validate, plan: adopt only, nothing changed, no secret written', async () => {
    r = await rig({ transitionMs: 10, behaviours: set });
    const { sandbox, dir } = r;
    await cp(EXAMPLES, path.join(dir, 'm'), { recursive: true, filter: (src) => !src.includes('kubernetes') && !src.includes('environments') });
    for (const [file, text] of Object.entries(MANIFESTS)) await r.write(file, text);
    const secrets = { ...exampleEnv('canary'), ...ENV };
    Object.assign(r.env, secrets);
    const apply = await r.run({ statePath: path.join(dir, 'applied', 'state.json'), manualSteps: 'trust' });
    expect(apply.ok, apply.error).toBe(true);
    const conn = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const exp = await runGovops(['export', '--out', 'exported'], { cwd: dir, env: { ...secrets, ...conn } });
    expect(exp.code, exp.stderr).toBe(0);
    const files = await readdir(path.join(dir, 'exported'));
    const text = (await Promise.all(files.map((f) => readFile(path.join(dir, 'exported', f), 'utf8')))).join('\n');
    for (const value of Object.values(secrets)) expect(text + exp.stdout + exp.stderr).not.toContain(value);
    const vars: Record<string, string> = {};
    for (const m of exp.stdout.matchAll(/^ {2}([A-Z0-9_]+) {2}\(/gm)) vars[m[1]!] = `set-${m[1]!.toLowerCase()}`;
    const validate = await runGovops(['validate', 'exported', '--strict'], { cwd: dir });
    expect(validate.code, validate.stdout + validate.stderr + text).toBe(0);
    const plan = await runGovops(['plan', 'exported', '--state', 'fresh/state.json', '-o', 'json'], { cwd: dir, env: { ...vars, ...conn } });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const changes = (JSON.parse(plan.stdout) as { changes: Array<{ action: string; resourceKind: string; name: string; changes?: unknown[] }> }).changes;
    const odd = changes.filter((c) => c.action !== 'adopt' || (c.changes ?? []).length > 0);
    expect(odd, JSON.stringify(odd, null, 1) + text).toEqual([]);
    expect(changes.length).toBe([...text.matchAll(/^kind: /gm)].length);
  });
});
