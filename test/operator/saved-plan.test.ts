/**
 * Saved plans through the real CLI against the sandbox: `govops plan --out FILE`, then `govops apply FILE`
 * carries out exactly that plan, or refuses (no write at all) naming what changed since: a manifest, a
 * secret's value, the live resource, the govops state, a resource that now exists, the state file itself.
 */
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from '../apply/harness.js';
import { lakeManifest, webhookManifest } from '../apply/inproc.js';
import { runGovops } from '../helpers/cli.js';
import { startSandbox } from '../../src/sandbox/index.js';

const secrets = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-ZZZZ-9999', GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-YYYY-8888' };
const writes = (h: Harness): string[] => requestLines(h.sandbox).filter((l) => !l.startsWith('GET '));

describe('saved plans: plan --out FILE, apply FILE', () => {
  let h: Harness;
  const outputs: string[] = [];
  const run = async (args: string[], env: Record<string, string> = {}) => {
    const r = await h.govops(args, { ...secrets, ...env });
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  const file = (name: string): string => path.join(h.dir, name);
  /** Plan --out NAME, then change something, then apply NAME: refused, nothing written. */
  const refused = async (name: string, env: Record<string, string> = {}) => {
    h.sandbox.clearRequests();
    const r = await run(['apply', name], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/the saved plan .* is stale; nothing was applied/);
    expect(writes(h)).toEqual([]);
    return r.stderr;
  };

  beforeAll(async () => {
    h = await harness();
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(h.dir, 'manifests')));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/1'));
    await h.writeManifest('hook.yaml', webhookManifest('hook'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('plan --out writes a versioned plan with its facts, fingerprints only; apply FILE carries it out exactly', async () => {
    h.sandbox.clearRequests();
    const p = await run(['plan', 'manifests', '--out', 'first.plan']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/Saved the plan to first\.plan\. .*govops apply first\.plan/);
    expect(writes(h)).toEqual([]); // planning never writes to the service
    const text = await readFile(file('first.plan'), 'utf8');
    const saved = JSON.parse(text);
    expect(saved).toMatchObject({ kind: 'GovopsSavedPlan', formatVersion: 2, paths: ['manifests'], options: { prune: false } });
    expect(saved.plan.summary).toMatchObject({ create: 2 });
    expect(Object.keys(saved.facts.manifests).sort()).toEqual(['Integration/lake', 'Webhook/hook']);
    expect(Object.keys(saved.facts.secrets['Integration/lake'])).toEqual(['config.token']);
    expect(saved.facts.live).toEqual({ 'Integration/lake': {}, 'Webhook/hook': {} });
    for (const v of Object.values(secrets)) expect(text).not.toContain(v);
    expect(text).not.toContain('fingerprintKey');

    const a = await run(['apply', 'first.plan']);
    expect(a.code, a.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun')).sort()).toEqual(['POST /integrations', 'POST /webhooks']);
    expect((await run(['plan', 'manifests', '--detailed-exitcode'])).code).toBe(0);
  });

  it('refused when a manifest changed since the plan (named)', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    expect((await run(['plan', 'manifests', '--out', 'update.plan'])).code).toBe(0);
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/3'));
    expect(await refused('update.plan')).toMatch(/- manifest Integration\/lake changed/);
  });

  it("refused when a secret's value changed behind the same reference (its fingerprint)", async () => {
    expect((await run(['plan', 'manifests', '--out', 'update.plan'])).code).toBe(0);
    const err = await refused('update.plan', { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-ROTATED-1234' });
    expect(err).toMatch(/- secret config\.token of Integration\/lake changed \(its fingerprint differs\)/);
    expect(err).not.toContain('lake-tok-ROTATED-1234');
  });

  it('refused when the live resource it touches changed in the service (the field is named)', async () => {
    const lake = (await h.client().listIntegrations()).find((i) => i.type === 'lakehouse')!;
    const patched = await fetch(`${h.sandbox.url}/_sandbox/integrations/${lake.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: h.sandbox.adminToken },
      body: JSON.stringify({ config: { httpPath: '/out-of-band' } }),
    });
    expect(patched.status).toBe(200);
    expect(await refused('update.plan')).toMatch(new RegExp(`- Integration/lake \\(id ${lake.id}\\) changed in the service since the plan: config\\.httpPath`));
  });

  it('refused when another apply changed the govops state of a resource it touches', async () => {
    expect((await run(['plan', 'manifests', '--out', 'update.plan'])).code).toBe(0);
    expect((await run(['apply', 'manifests'])).code).toBe(0);
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/3'));
    expect(await refused('update.plan')).toMatch(/- govops state of Integration\/lake changed since the plan \(another apply\?\)/);
  });

  it('a live change to a resource the plan does not touch does not make it stale', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/4'));
    expect((await run(['plan', 'manifests', '--out', 'touch.plan'])).code).toBe(0);
    // The plan touches Integration/lake only: an unrelated webhook appearing in the service changes nothing.
    await h.client().createWebhooks([{ url: 'https://other.example.com/x', name: 'someone-elses', global: false, notificationType: ['modelCreated'], actionType: 'triggered' }]);
    h.sandbox.clearRequests();
    const a = await run(['apply', 'touch.plan']);
    expect(a.code, a.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun'))).toEqual([`PUT /integrations/${(await h.client().listIntegrations())[0]!.id}`]);
  });

  it('refused when a planned create now exists in the service', async () => {
    await h.writeManifest('lake2.yaml', lakeManifest('lake-two', 'lake2.example.com'));
    expect((await run(['plan', 'manifests', '--out', 'create.plan'])).code).toBe(0);
    const created = await h.client().createIntegration({ type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'https://lake2.example.com', httpPath: '/sql/1', token: 'someone-else-token' } });
    expect(await refused('create.plan')).toMatch(new RegExp(`- Integration/lake-two now exists in the service \\(id ${created.id}\\)`));
  });

  it('a targeted saved plan keeps its --only: apply FILE acts on the targets only', async () => {
    await rm(file('manifests/lake2.yaml'));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/5'));
    await h.writeManifest('hook.yaml', webhookManifest('hook', ['modelCreated', 'modelDeleted']));
    const p = await run(['plan', 'manifests', '--only', 'Webhook/hook', '--out', 'target.plan', '-o', 'json']);
    expect(p.code, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout).targets).toEqual({ only: ['Webhook/hook'], untargeted: 1 });
    expect(p.stderr).toMatch(/Saved the plan to target\.plan/);
    expect(JSON.parse(await readFile(file('target.plan'), 'utf8')).options.only).toEqual(['Webhook/hook']);
    h.sandbox.clearRequests();
    const a = await run(['apply', 'target.plan']);
    expect(a.code, a.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun')).sort()).toEqual([expect.stringMatching(/^DELETE \/webhooks\/\d+$/), 'POST /webhooks']);
    expect((await h.client().listIntegrations()).find((i) => i.type === 'lakehouse' && i.config.httpPath === '/sql/4')).toBeDefined();
  });

  it('plan flags cannot be given with a saved plan; a file that is not one is refused', async () => {
    const r = await run(['apply', 'create.plan', '--prune', '--only', 'Integration/lake']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--prune, --only cannot be given with a saved plan/);
    await h.writeManifest('notes.txt', 'hello');
    const n = await run(['apply', 'manifests/notes.txt']);
    expect(n.code).toBe(1);
    expect(n.stderr).toMatch(/is not a govops saved plan/);
    await rm(file('manifests/notes.txt'));
  });

  it('a saved plan of format 1 (notes as text) is refused with a clear message; nothing is written', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/old-format'));
    expect((await run(['plan', 'manifests', '--out', 'v2.plan'])).code).toBe(0);
    const saved = JSON.parse(await readFile(file('v2.plan'), 'utf8'));
    expect(saved.formatVersion).toBe(2);
    // what format 1 held: the same plan, its notes as text
    const text = (n: { message: string }): string => n.message;
    const v1 = {
      ...saved,
      formatVersion: 1,
      plan: {
        ...saved.plan,
        formatVersion: 1,
        warnings: saved.plan.warnings.map(text),
        changes: saved.plan.changes.map((c: { reasons: Array<{ message: string }>; blocked?: { message: string } }) => ({
          ...c,
          reasons: c.reasons.map(text),
          ...(c.blocked ? { blocked: c.blocked.message } : {}),
        })),
      },
    };
    await writeFile(file('v1.plan'), JSON.stringify(v1), { mode: 0o600 });
    h.sandbox.clearRequests();
    const r = await run(['apply', 'v1.plan']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/v1\.plan is a saved plan of format 1, made by an older govops; this govops applies format 2 only .*nothing was applied/);
    expect(r.stderr).toMatch(/plan again with this govops \(govops plan --out FILE\)/);
    expect(writes(h)).toEqual([]);
    // the same plan in format 2 is applied
    const ok = await run(['apply', 'v2.plan']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun'))).toEqual([expect.stringMatching(/^PUT \/integrations\//)]);
  });

  it('a plan made by another govops version (or one that did not record it) is refused, nothing written; this version applies its own', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/versioned'));
    expect((await run(['plan', 'manifests', '--out', 'mine.plan'])).code).toBe(0);
    const saved = JSON.parse(await readFile(file('mine.plan'), 'utf8'));
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(saved.govopsVersion).toBe(version);
    // the values a version fills in (defaults, normalisation) are not facts: the file is edited as an older govops would have made it
    await writeFile(file('older.plan'), JSON.stringify({ ...saved, govopsVersion: '0.0.1' }), { mode: 0o600 });
    const { govopsVersion: _, ...unversioned } = saved;
    await writeFile(file('unversioned.plan'), JSON.stringify(unversioned), { mode: 0o600 });
    h.sandbox.clearRequests();
    const older = await run(['apply', 'older.plan']);
    expect(older.code).toBe(1);
    expect(older.stderr).toContain(`older.plan was planned by govops 0.0.1; this is govops ${version}, which applies only the plans it made: nothing was applied`);
    expect(older.stderr).toMatch(/plan again with this govops/);
    const unknown = await run(['apply', 'unversioned.plan']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unversioned.plan was planned by an earlier govops');
    expect(writes(h)).toEqual([]);
    const ok = await run(['apply', 'mine.plan']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun'))).toEqual([expect.stringMatching(/^PUT \/integrations\//)]);
  });

  it('refused when the state file is not the one the plan was made with', async () => {
    expect((await run(['plan', 'manifests', '--out', 'key.plan'])).code).toBe(0);
    const moved = await run(['apply', 'key.plan', '--state', 'other-state.json']);
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/the state file is not the one the plan was made with/);
  });

  it('drift on a managed resource the plan does not touch makes it stale (the plan now differs), refused once', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/8'));
    expect((await run(['apply', 'manifests'])).code).toBe(0);
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/9'));
    expect((await run(['plan', 'manifests', '--out', 'drift.plan'])).code).toBe(0);
    // the managed webhook, which the plan leaves alone, is deleted behind govops' back
    const hook = (await h.client().listWebhooks()).find((w) => w.name === 'hook')!;
    await h.client().deleteWebhook(hook.id);
    const err = await refused('drift.plan', { GOVOPS_LOG_LEVEL: '' });
    expect(err.split('Webhook/hook').length - 1, err).toBe(1);
    expect(err.split('\n')[0]).toMatch(/^error: the saved plan drift\.plan is stale/);
    const items = err.split('\n').filter((l) => l.startsWith('  - '));
    expect(new Set(items).size).toBe(items.length);
    expect(err).toMatch(/Webhook\/hook/);
  });

  it('- is standard input, never a file named "-": plan --out - is refused, and apply - reads the stream even beside such a file', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/dash'));
    const out = await run(['plan', 'manifests', '--out', '-']);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/--out -: a saved plan is written to a file/);
    await expect(readFile(file('-'), 'utf8')).rejects.toThrow(/ENOENT/);
    // a file named "-" (left by an older govops' plan --out -) is not what `apply -` reads
    expect((await run(['plan', 'manifests', '--out', 'dash.plan'])).code).toBe(0);
    await writeFile(file('-'), await readFile(file('dash.plan'), 'utf8'), { mode: 0o600 });
    h.sandbox.clearRequests();
    const piped = await runGovops(['apply', '-'], { cwd: h.dir, env: { ...h.env, ...secrets }, input: webhookManifest('hook', ['modelCreated', 'modelDeleted']) });
    expect(piped.code, piped.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun'))).toEqual(['POST /webhooks']);
    await rm(file('-'));
  });

  it('plan --out onto the state file (or its lock, or a link to it) is refused: the record of what govops owns is kept', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/onto-state'));
    expect((await run(['apply', 'manifests'])).code).toBe(0);
    const before = await readFile(h.statePath, 'utf8');
    await symlink(h.statePath, file('state-link.json'));
    for (const out of ['.govops/state.json', './.govops/../.govops/state.json', 'state-link.json', '.govops/state.json.lock']) {
      const r = await run(['plan', 'manifests', '--out', out]);
      expect(r.code, out).toBe(1);
      expect(r.stderr, out).toMatch(/is the state file('s lock)?: the saved plan would replace the record of what govops owns/);
    }
    expect(await readFile(h.statePath, 'utf8')).toBe(before);
    await expect(readFile(`${h.statePath}.lock`, 'utf8')).rejects.toThrow(/ENOENT/);
    await rm(file('state-link.json'));
  });

  it('plan --out NAME.yaml is refused: apply NAME.yaml would read it as manifests, never as the plan it says to apply', async () => {
    for (const name of ['reviewed.yaml', 'reviewed.YML']) {
      const out = await run(['plan', 'manifests', '--out', name]);
      expect(out.code, out.stderr).toBe(1);
      expect(out.stderr).toMatch(/--out reviewed\.(yaml|YML): .*govops apply/);
      expect(out.stdout).toBe('');
      await expect(readFile(file(name), 'utf8')).rejects.toThrow(/ENOENT/);
    }
  });

  it('GOVOPS_MANUAL_STEPS=require refuses a plan saved with --manual-steps trust, as GOVOPS_NO_ADOPT refuses one saved without it', async () => {
    expect((await run(['plan', 'manifests', '--manual-steps', 'trust', '--out', 'trusted.plan'])).code).toBe(0);
    h.sandbox.clearRequests();
    const r = await run(['apply', 'trusted.plan'], { GOVOPS_MANUAL_STEPS: 'require' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/GOVOPS_MANUAL_STEPS is require, but trusted\.plan was planned with --manual-steps trust: nothing was applied/);
    expect(writes(h)).toEqual([]);
    // where the variable is not set (or says trust), the reviewed plan is applied as it is
    expect((await run(['apply', 'trusted.plan'], { GOVOPS_MANUAL_STEPS: 'trust' })).stderr).not.toMatch(/GOVOPS_MANUAL_STEPS is require/);
  });

  it('a plan is applied only to the service it was planned against (a staging plan of creates is not carried out in prod)', async () => {
    const prod = await startSandbox({ port: 0, transitionMs: 50 });
    try {
      await mkdir(file('fresh'), { recursive: true });
      await writeFile(file('fresh/hook.yaml'), webhookManifest('fresh-hook'));
      const planned = await run(['plan', 'fresh', '--state', 'fresh-state.json', '--out', 'staging.plan']);
      expect(planned.code).toBe(0);
      // the command it prints is the one that applies it: with the state it was planned with (its fingerprint key)
      expect(planned.stdout).toContain('govops apply staging.plan --state fresh-state.json\n');
      const saved = JSON.parse(await readFile(file('staging.plan'), 'utf8'));
      expect(saved.service).toBe(h.sandbox.url.replace(/\/+$/, ''));
      // the same job, its GOVOPS_URL (and token) now those of another service: nothing there tells the two apart
      const r = await run(['apply', 'staging.plan', '--state', 'fresh-state.json'], { GOVOPS_URL: prod.url, GOVOPS_TOKEN: prod.adminToken });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`staging.plan was planned against ${saved.service}; this apply would send to ${prod.url.replace(/\/+$/, '')}: nothing was applied`);
      expect(prod.requests().filter((e) => e.method !== 'GET')).toEqual([]);
      // a plan without the record (hand-edited) is refused too; the service it names applies it
      const { service: _, ...unrecorded } = saved;
      await writeFile(file('unrecorded.plan'), JSON.stringify(unrecorded), { mode: 0o600 });
      expect((await run(['apply', 'unrecorded.plan', '--state', 'fresh-state.json'])).stderr).toMatch(/does not say which service it was planned against/);
      h.sandbox.clearRequests();
      const ok = await run(['apply', 'staging.plan', '--state', 'fresh-state.json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(writes(h).filter((l) => !l.includes('dryRun'))).toEqual(['POST /webhooks']);
    } finally {
      await prod.close();
    }
  });

  it('no secret value in any output', () => {
    for (const o of outputs) for (const v of [...Object.values(secrets), 'lake-tok-ROTATED-1234']) expect(o).not.toContain(v);
  });
});
