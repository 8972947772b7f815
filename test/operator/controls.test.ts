/**
 * Operator controls through the real CLI against the sandbox, the request log counting writes:
 * targeting (`--only`, on plan, apply and preview), `govops state list|show|forget|adopt`, suspension
 * (`govops/suspend`) and ignored fields (`govops/ignore-fields`).
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from '../apply/harness.js';
import { lakeManifest, sqlManifest, webhookManifest } from '../apply/inproc.js';

const secrets = {
  GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-QQQQ-4242',
  GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-WWWW-5353',
  GOVOPS_SECRET_SQL_PASSWORD: 'sql-pw-EEEE-6464',
  GOVOPS_SECRET_ADMIN_PASSWORD: 'admin-pw-RRRR-7575',
};
/** Writes (dry runs left out): what changed the service. */
const writes = (h: Harness): string[] => requestLines(h.sandbox).filter((l) => !l.startsWith('GET ') && !l.includes('dryRun'));

async function patchIntegration(h: Harness, id: string, body: unknown): Promise<void> {
  const r = await fetch(`${h.sandbox.url}/_sandbox/integrations/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: h.sandbox.adminToken },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
}

function withAnnotations(manifest: string, annotations: Record<string, string>): string {
  const lines = Object.entries(annotations).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`);
  return manifest.replace(/^( {2}name: .*)$/m, `$1\n  annotations:\n${lines.join('\n')}`);
}

describe('operator controls through the CLI', () => {
  let h: Harness;
  const outputs: string[] = [];
  const run = async (args: string[]) => {
    const r = await h.govops(args, secrets);
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  const ids = async (): Promise<Record<string, string>> => {
    const state = await h.state();
    return Object.fromEntries(state.resources.map((r) => [`${r.kind}/${r.name}`, r.id]));
  };

  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('lake-a.yaml', lakeManifest('lake-a', 'a.lake.example.com', '/sql/1'));
    await h.writeManifest('lake-b.yaml', lakeManifest('lake-b', 'b.lake.example.com', '/sql/1'));
    await h.writeManifest('hook.yaml', webhookManifest('hook'));
    const r = await run(['apply', 'manifests']);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await h.close();
  });

  describe('--only (Terraform -target, Argo CD selective sync)', () => {
    it('a targeted apply changes only the targeted resource and prunes nothing it does not name', async () => {
      await h.writeManifest('lake-a.yaml', lakeManifest('lake-a', 'a.lake.example.com', '/sql/2'));
      await h.writeManifest('lake-b.yaml', lakeManifest('lake-b', 'b.lake.example.com', '/sql/2'));
      await rm(path.join(h.dir, 'manifests', 'hook.yaml'));
      const before = await ids();
      h.sandbox.clearRequests();
      const r = await run(['apply', 'manifests', '--prune', '--only', 'Integration/lake-a']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Targeted plan \(--only Integration\/lake-a\): 2 other resources not planned/);
      expect(writes(h)).toEqual([`PUT /integrations/${before['Integration/lake-a']}`]);
      const live = await h.client().listIntegrations();
      expect(live.find((i) => i.id === before['Integration/lake-b'])!.config.httpPath).toBe('/sql/1');
      expect((await h.client().listWebhooks()).map((w) => w.name)).toEqual(['hook']);
    });

    it('plan --only with a glob selects by pattern; a glob never prunes, an exact name does', async () => {
      const p = await run(['plan', 'manifests', '--prune', '--only', 'Integration/lake-*', '--only', 'Webhook/*', '-o', 'json']);
      expect(p.code, p.stderr).toBe(0);
      const plan = JSON.parse(p.stdout);
      expect(plan.targets).toEqual({ only: ['Integration/lake-*', 'Webhook/*'], untargeted: 0 });
      expect(plan.changes.map((c: { name: string; action: string }) => `${c.name}:${c.action}`)).toEqual(['lake-a:noop', 'lake-b:update']);
      expect(plan.warnings.map((w: { message: string }) => w.message).join('\n')).toMatch(/Webhook\/hook: not deleted in this targeted plan: a delete needs --only Webhook\/hook/);

      h.sandbox.clearRequests();
      const glob = await run(['apply', 'manifests', '--prune', '--only', 'Webhook/*']);
      expect(glob.code, glob.stderr).toBe(0);
      expect(writes(h)).toEqual([]);
      const exact = await run(['apply', 'manifests', '--prune', '--only', 'Webhook/hook']);
      expect(exact.code, exact.stderr).toBe(0);
      expect(writes(h)).toEqual([expect.stringMatching(/^DELETE \/webhooks\/\d+$/)]);
    });

    it('preview --only shows the targeted resources only; a malformed pattern is a usage error', async () => {
      const p = await run(['preview', 'manifests', '--only', 'Integration/lake-b']);
      expect(p.code, p.stderr).toBe(2);
      expect(p.stdout).toMatch(/Integration\/lake-b/);
      expect(p.stdout).not.toMatch(/Integration\/lake-a/);
      const bad = await run(['plan', 'manifests', '--only', 'lake-a']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/--only "lake-a": expected Kind\/name/);
      expect((await run(['apply', 'manifests'])).code).toBe(0);
    });
  });

  describe('govops state (Terraform state list / show / rm / import)', () => {
    it('list and show, in text and JSON, never with fingerprint values', async () => {
      const list = await run(['state', 'list']);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/^RESOURCE\s+ID\s+TYPE\s+ORIGIN\s+REVISION\s+LAST APPLIED\s+NOTES$/m);
      expect(list.stdout).toMatch(/^Integration\/lake-a\s+\d+\s+lakehouse\s+created\s+/m);
      const json = JSON.parse((await run(['state', 'list', '-o', 'json'])).stdout);
      expect(json.resources.map((r: { kind: string; name: string }) => `${r.kind}/${r.name}`)).toEqual(['Integration/lake-a', 'Integration/lake-b']);
      expect(json.resources[0].secretPaths).toEqual(['config.token']);
      const fingerprints = (await h.state()).resources.flatMap((r) => Object.values(r.secretFingerprints));
      expect(fingerprints.length).toBeGreaterThan(0);
      for (const fp of fingerprints) expect(JSON.stringify(json)).not.toContain(fp);
      expect(JSON.stringify(json)).not.toContain('secretFingerprints');
      const show = await run(['state', 'show', 'lake-a', '-o', 'json']);
      expect(JSON.parse(show.stdout)).toMatchObject({ kind: 'Integration', name: 'lake-a', origin: 'created', type: 'lakehouse' });
      const missing = await run(['state', 'show', 'Webhook/nope']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/Webhook\/nope is not managed by govops/);
    });

    it('forget stops managing without deleting; the next plan shows it as adoptable, apply adopts it', async () => {
      const id = (await ids())['Integration/lake-a'];
      h.sandbox.clearRequests();
      const f = await run(['state', 'forget', 'Integration/lake-a']);
      expect(f.code, f.stderr).toBe(0);
      expect(f.stdout).toMatch(/Forgot Integration\/lake-a \(id \d+\): govops no longer manages it; nothing changed in the service/);
      expect(requestLines(h.sandbox)).toEqual([]);
      expect((await ids())['Integration/lake-a']).toBeUndefined();
      const p = await run(['plan', 'manifests']);
      expect(p.stdout).toMatch(/<= Integration\/lake-a \(lakehouse\)/);
      expect(p.stdout).toMatch(/will be adopted/);
      expect((await run(['apply', 'manifests'])).code).toBe(0);
      expect(writes(h)).toEqual([]);
      const state = await h.state();
      expect(state.resources.find((r) => r.name === 'lake-a')).toMatchObject({ id, origin: 'adopted' });
    });

    it('adopt --id binds a manifest to one of two live resources its natural key matches', async () => {
      const client = h.client();
      const item = { url: 'https://hooks.example.com/shared', name: 'shared', global: false, notificationType: ['modelCreated'], actionType: 'triggered' as const };
      const created = await client.createWebhooks([item, item]);
      const [first, second] = created.createdWebhooks.map((w) => w.id);
      await h.writeManifest('shared.yaml', webhookManifest('shared', ['modelCreated'], false).replace('hooks.example.com/shared', 'hooks.example.com/shared'));
      const ambiguous = await run(['plan', 'manifests']);
      expect(ambiguous.code).toBe(1);
      expect(ambiguous.stdout + ambiguous.stderr).toMatch(/Webhook\/shared: 2 live resources match its identity/);

      const bad = await run(['state', 'adopt', 'Webhook/shared', 'manifests', '--id', '999999']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/no webhook with id 999999 in the service/);
      h.sandbox.clearRequests();
      const a = await run(['state', 'adopt', 'Webhook/shared', 'manifests', '--id', second!]);
      expect(a.code, a.stderr).toBe(0);
      expect(writes(h)).toEqual([]);
      expect((await run(['state', 'show', 'Webhook/shared'])).stdout).toMatch(/explicitAdopt: true/);
      const p = await run(['plan', 'manifests']);
      expect(p.code, p.stderr).toBe(0);
      expect(p.stdout).toMatch(new RegExp(`<= Webhook/shared\\n[\\s\\S]*adopted explicitly \\(govops state adopt --id ${second}\\)`));
      expect(p.stdout).toMatch(new RegExp(`Webhook/shared: another live webhook has this name \\(id ${first}\\); govops did not create it and never deletes it \\(govops keeps id ${second}`));
      expect((await run(['apply', 'manifests'])).code).toBe(0);
      const state = await h.state();
      expect(state.resources.find((r) => r.name === 'shared')).toMatchObject({ id: second, origin: 'adopted' });
      expect(JSON.stringify(state)).not.toContain('explicitAdopt');
      await rm(path.join(h.dir, 'manifests', 'shared.yaml'));
      expect((await run(['state', 'forget', 'Webhook/shared'])).code).toBe(0);
    });
  });

  describe('govops state adopt: the id as the service reports it', () => {
    it('another spelling of an id another entry owns (--id 0042 for 42) is refused, not recorded twice', async () => {
      const owned = (await ids())['Integration/lake-b']!;
      await mkdir(path.join(h.dir, 'copy'));
      await writeFile(path.join(h.dir, 'copy', 'lake-b2.yaml'), lakeManifest('lake-b2', 'b.lake.example.com', '/sql/1'));
      const a = await run(['state', 'adopt', 'Integration/lake-b2', 'copy', '--id', `00${owned}`]);
      expect(a.stderr).toMatch(new RegExp(`integration ${owned} is already managed as Integration/lake-b`));
      expect(a.code).toBe(1);
      expect((await h.state()).resources.filter((r) => r.id.replace(/^0+/, '') === owned).map((r) => r.name)).toEqual(['lake-b']);
    });

    it('an integration of another identity (another workspace: not editable) is refused, as a data source of another prefix is', async () => {
      await mkdir(path.join(h.dir, 'other'));
      await writeFile(path.join(h.dir, 'other', 'lake-c.yaml'), lakeManifest('lake-c', 'c.lake.example.com', '/sql/1'));
      const theirs = await h.client().createIntegration({ type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'https://d.lake.example.com', httpPath: '/sql/1', token: 'their-token' } });
      const a = await run(['state', 'adopt', 'Integration/lake-c', 'other', '--id', theirs.id]);
      expect(a.stderr).toMatch(/integration \d+ is lakehouse:workspace=d\.lake\.example\.com, the manifest Integration\/lake-c lakehouse:workspace=c\.lake\.example\.com/);
      expect(a.code).toBe(1);
      expect((await h.state()).resources.map((r) => r.name)).not.toContain('lake-c');
      // what it would have led to: a replace, deleting their integration to create the manifest's
      const plan = await run(['plan', 'other', '--allow-replace']);
      expect(plan.stdout).toMatch(/^\s*\+ Integration\/lake-c \(lakehouse\)$/m);
    });
  });

  describe('govops/suspend (Flux suspend)', () => {
    it('a suspended resource is reported as suspended and left alone by drift repair and prune', async () => {
      const id = (await ids())['Integration/lake-b']!;
      await h.writeManifest('lake-b.yaml', withAnnotations(lakeManifest('lake-b', 'b.lake.example.com', '/sql/2'), { 'govops/suspend': 'true' }));
      expect((await run(['apply', 'manifests'])).code).toBe(0);
      expect((await h.state()).resources.find((r) => r.name === 'lake-b')).toMatchObject({ suspended: true });
      await patchIntegration(h, id, { config: { httpPath: '/changed-by-hand' } });
      await h.writeManifest('lake-b.yaml', withAnnotations(lakeManifest('lake-b', 'b.lake.example.com', '/sql/9'), { 'govops/suspend': 'true' }));
      h.sandbox.clearRequests();
      const r = await run(['apply', 'manifests', '--prune']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/# Integration\/lake-b \(lakehouse\) is suspended \(govops\/suspend\): left alone/);
      expect(r.stdout).toMatch(/otherwise it would be updated \(config\.httpPath\)/);
      expect(writes(h)).toEqual([]);
      // Its manifest gone: still never pruned while suspended.
      await rm(path.join(h.dir, 'manifests', 'lake-b.yaml'));
      const pruned = await run(['apply', 'manifests', '--prune', '--max-deletes', '5']);
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(pruned.stdout).toMatch(/suspended when last applied \(govops\/suspend\), and its manifest is gone: never pruned while suspended/);
      expect(writes(h)).toEqual([]);
      expect((await h.client().listIntegrations()).find((i) => i.id === id)!.config.httpPath).toBe('/changed-by-hand');
      // Resumed: the manifest back without the annotation, the drift is repaired.
      await h.writeManifest('lake-b.yaml', lakeManifest('lake-b', 'b.lake.example.com', '/sql/2'));
      expect((await run(['apply', 'manifests'])).code).toBe(0);
      expect(writes(h)).toEqual([`PUT /integrations/${id}`]);
      expect((await h.state()).resources.find((r) => r.name === 'lake-b')).not.toHaveProperty('suspended');
    });
  });

  describe('govops/ignore-fields (Argo CD ignoreDifferences)', () => {
    it('an ignored field is sent on create, its drift is never reported, and an update keeps its live value', async () => {
      const sql = (schema: string) => withAnnotations(sqlManifest('warehouse', 'sql.example.com', { port: 1433 }).replace('schema: views', `schema: ${schema}`), { 'govops/ignore-fields': 'config.port' });
      await h.writeManifest('sql.yaml', sql('views'));
      const created = await run(['apply', 'manifests']);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/# ignored \(govops\/ignore-fields, never compared; sent on create\): config\.port/);
      const id = (await ids())['Integration/warehouse']!;
      expect((await h.client().getIntegration(id)).config.port).toBe(1433);

      await patchIntegration(h, id, { config: { port: 1444 } });
      const p = await run(['plan', 'manifests', '--detailed-exitcode']);
      expect(p.code, p.stdout).toBe(0);
      expect(p.stdout).toMatch(/No changes/);
      expect(p.stdout).toMatch(/Fields ignored \(govops\/ignore-fields, never compared\): Integration\/warehouse: config\.port\./);
      const json = JSON.parse((await run(['plan', 'manifests', '-o', 'json'])).stdout);
      expect(json.changes.find((c: { name: string }) => c.name === 'warehouse')).toMatchObject({ action: 'noop', ignoredFields: ['config.port'] });

      await h.writeManifest('sql.yaml', sql('reporting'));
      h.sandbox.clearRequests();
      const u = await run(['apply', 'manifests']);
      expect(u.code, u.stderr).toBe(0);
      expect(u.stdout).toMatch(/~ config\.schema: "views" -> "reporting"/);
      expect(u.stdout).not.toMatch(/config\.port:/);
      expect(writes(h)).toEqual([`PUT /integrations/${id}`]);
      const live = await h.client().getIntegration(id);
      expect(live.config).toMatchObject({ schema: 'reporting', port: 1444 });
    });

    it('validate refuses ignoring a credential or an unknown path, at file:line:col', async () => {
      await h.writeManifest('bad.yaml', withAnnotations(lakeManifest('bad', 'bad.example.com'), { 'govops/ignore-fields': 'config.token, spec.x', 'govops/suspnd': 'true' }));
      const r = await run(['validate', 'manifests']);
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/manifests\/bad\.yaml:\d+:\d+: Integration\/bad: govops\/ignore-fields: `config\.token` is a credential/);
      expect(r.stdout + r.stderr).toMatch(/manifests\/bad\.yaml:\d+:\d+: Integration\/bad: govops\/ignore-fields: `spec\.x` cannot be ignored/);
      expect(r.stdout + r.stderr).toMatch(/unknown govops annotation `govops\/suspnd` \(did you mean `govops\/suspend`\?\)/);
      await rm(path.join(h.dir, 'manifests', 'bad.yaml'));
    });
  });

  it('no secret value in any output, the state file or the saved files', async () => {
    const state = await readFile(h.statePath, 'utf8');
    for (const v of Object.values(secrets)) {
      expect(state).not.toContain(v);
      for (const o of outputs) expect(o).not.toContain(v);
    }
  });
});
