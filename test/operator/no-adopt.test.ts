/**
 * `--no-adopt` through the real CLI against the sandbox: manifests that match, by natural key, an integration and a
 * webhook govops does not own are not adopted (plan says why and what the operator can do; apply writes nothing to
 * them, records nothing and exits 1), also from GOVOPS_NO_ADOPT and through a saved plan; an adoption the operator
 * recorded with `state adopt` goes ahead; without the flag they are adopted as before.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from '../apply/harness.js';
import { lakeManifest, webhookManifest } from '../apply/inproc.js';

const secrets = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-NOADOPT-1111' };
const writes = (h: Harness): string[] => requestLines(h.sandbox).filter((l) => !l.startsWith('GET '));

describe('govops --no-adopt', () => {
  let h: Harness;
  let lakeId: string;
  let hookId: string;
  const run = (args: string[], env: Record<string, string> = {}) => h.govops(args, { ...secrets, ...env });
  const managed = async (): Promise<string[]> => {
    try {
      return (await h.state()).resources.map((r) => `${r.kind}/${r.name}`).sort();
    } catch {
      return []; // no state file yet
    }
  };
  /** Nothing was sent to the service (dry runs included) and nothing recorded. */
  const untouched = async () => {
    expect(writes(h)).toEqual([]);
    expect(await managed()).toEqual([]);
  };

  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'manifests'));
    // Made by hand by another team: govops does not own them.
    const client = h.client();
    lakeId = (await client.createIntegration({ type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 'their-token' } })).id;
    const hook = { url: 'https://hooks.example.com/team-hook', name: 'team-hook', global: false, notificationType: ['modelCreated'], actionType: 'triggered' as const };
    hookId = (await client.createWebhooks([hook])).createdWebhooks[0]!.id;
    // A commit's manifests match both by natural key (host; name) and would change the integration.
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    await h.writeManifest('hook.yaml', webhookManifest('team-hook', ['modelCreated'], false));
  });
  afterAll(async () => {
    await h.close();
  });

  it('plan shows the adoptions blocked, with what the operator can do', async () => {
    const p = await run(['plan', 'manifests', '--no-adopt']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain(`not adopted (--no-adopt): live integration ${lakeId} matches this manifest and govops does not own it`);
    expect(p.stdout).toContain(`govops state adopt Integration/lake --id ${lakeId} and applies, or applies once without --no-adopt`);
    // the header says what would happen, and that it will not
    expect(p.stdout).toContain(`# Integration/lake (lakehouse) would be adopted and updated in place (blocked) (id ${lakeId})`);
    expect(p.stdout).toContain(`# Webhook/team-hook would be adopted (recorded in govops state; no change in the service) (blocked) (id ${hookId})`);
    expect(p.stdout).not.toMatch(/will be adopted/);
    expect(p.stdout).toContain(`govops state adopt Webhook/team-hook --id ${hookId}`);
    const json = JSON.parse((await run(['plan', 'manifests', '--no-adopt', '-o', 'json'])).stdout);
    expect(json.changes.map((c: { name: string; blocked?: { code: string } }) => `${c.name} ${c.blocked?.code}`)).toEqual(['lake adopt-not-allowed', 'team-hook adopt-not-allowed']);
  });

  it('apply --no-adopt (or GOVOPS_NO_ADOPT) exits 1 and writes nothing to them', async () => {
    for (const [args, env] of [[['--no-adopt'], {}], [[], { GOVOPS_NO_ADOPT: 'true' }]] as const) {
      h.sandbox.clearRequests();
      const a = await run(['apply', 'manifests', ...args], env);
      expect(a.code, a.stderr).toBe(1);
      expect(a.stdout + a.stderr).toMatch(/not adopted \(--no-adopt\)/);
      await untouched();
    }
    expect((await h.client().listIntegrations()).find((i) => i.id === lakeId)!.config.httpPath).toBe('/sql/1');
  });

  it('GOVOPS_NO_ADOPT=false (or 0, off, empty) leaves adoption on; a value that is neither is a usage error', async () => {
    for (const value of ['false', 'FALSE', '0', 'off', 'no', '']) {
      const p = await run(['plan', 'manifests', '-o', 'json'], { GOVOPS_NO_ADOPT: value });
      expect(p.code, `${value}: ${p.stderr}`).toBe(0);
      const json = JSON.parse(p.stdout);
      expect(json.changes.map((c: { name: string; blocked?: unknown }) => `${c.name} ${c.blocked === undefined}`)).toEqual(['lake true', 'team-hook true']);
    }
    for (const value of ['1', 'yes', ' On ']) {
      const p = await run(['plan', 'manifests'], { GOVOPS_NO_ADOPT: value });
      expect(p.stdout, value).toContain('not adopted (--no-adopt)');
    }
    const typo = await run(['plan', 'manifests'], { GOVOPS_NO_ADOPT: 'ture' });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/GOVOPS_NO_ADOPT must be true or false \(also 1\/0, yes\/no, on\/off\), got "ture"/);
    expect(typo.stdout).toBe('');
  });

  it('a saved plan keeps --no-adopt; apply FILE takes no --no-adopt of its own, and GOVOPS_NO_ADOPT refuses a plan saved without it', async () => {
    const p = await run(['plan', 'manifests', '--no-adopt', '--out', 'guarded.plan']);
    expect(p.code, p.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(h.dir, 'guarded.plan'), 'utf8')).options).toMatchObject({ noAdopt: true });
    h.sandbox.clearRequests();
    const a = await run(['apply', 'guarded.plan']);
    expect(a.code, a.stderr).toBe(1);
    expect(a.stderr).not.toMatch(/stale/); // planned again with the saved --no-adopt: the same plan, its adoptions blocked
    expect(a.stdout + a.stderr).toMatch(/not adopted \(--no-adopt\)/);
    await untouched();

    const flag = await run(['apply', 'guarded.plan', '--no-adopt']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toMatch(/--no-adopt cannot be given with a saved plan/);

    expect((await run(['plan', 'manifests', '--out', 'open.plan'])).code).toBe(0);
    h.sandbox.clearRequests();
    const refused = await run(['apply', 'open.plan'], { GOVOPS_NO_ADOPT: 'true' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/GOVOPS_NO_ADOPT is set, but open\.plan was planned without --no-adopt: nothing was applied/);
    await untouched();
    // the guarded plan is still applied as it is where GOVOPS_NO_ADOPT is set
    expect((await run(['apply', 'guarded.plan'], { GOVOPS_NO_ADOPT: 'true' })).stderr).not.toMatch(/GOVOPS_NO_ADOPT is set/);
  });

  it('an adoption the operator recorded (state adopt) goes ahead under --no-adopt; the other stays blocked', async () => {
    const adopt = await run(['state', 'adopt', 'Webhook/team-hook', 'manifests', '--id', hookId]);
    expect(adopt.code, adopt.stderr).toBe(0);
    h.sandbox.clearRequests();
    const a = await run(['apply', 'manifests', '--no-adopt']);
    expect(a.code).toBe(1); // Integration/lake is still blocked
    expect(writes(h)).toEqual([]); // the webhook is recorded (it differs in nothing), the integration untouched
    const state = await h.state();
    expect(state.resources.map((r) => `${r.kind}/${r.name} ${r.id} ${r.origin}`)).toEqual([`Webhook/team-hook ${hookId} adopted`]);
  });

  it('without the flag, the default is unchanged: adopted (and updated)', async () => {
    h.sandbox.clearRequests();
    const a = await run(['apply', 'manifests']);
    expect(a.code, a.stderr).toBe(0);
    expect(writes(h).filter((l) => !l.includes('dryRun'))).toEqual([`PUT /integrations/${lakeId}`]);
    expect(await managed()).toEqual(['Integration/lake', 'Webhook/team-hook']);
    // owned now: --no-adopt changes nothing about it
    expect((await run(['plan', 'manifests', '--no-adopt', '--detailed-exitcode'])).code).toBe(0);
  });
});
