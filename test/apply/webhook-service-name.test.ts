/**
 * A webhook's name in the service given by `spec.name` (any string the service allows, such as `Slack Alerts`),
 * with metadata.name the manifest's name: validated, created under that name, matched and adopted by it, replaced
 * when it or the url changes, and exported so (a live name that is not a manifest name is no longer skipped).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops, type CliResult } from '../helpers/cli.js';

let sandbox: SandboxHandle;
let dir: string;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  dir = await mkdtemp(path.join(tmpdir(), 'govops-webhook-name-'));
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const hook = (metadataName: string, serviceName: string | undefined, url: string): string =>
  `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${metadataName}
spec:
${serviceName === undefined ? '' : `  name: ${JSON.stringify(serviceName)}\n`}  url: ${url}
  global: false
  notificationType: [modelCreated]
  actionType: triggered
`;

const govops = (args: string[]): Promise<CliResult> =>
  runGovops(args, { cwd: dir, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });

interface PlanJson {
  changes: Array<{ action: string; resourceKind: string; name: string; liveId?: string; changes?: Array<{ path: string }> }>;
}
async function plan(folder: string): Promise<PlanJson> {
  const r = await govops(['plan', folder, '--state', 'state.json', '-o', 'json']);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return JSON.parse(r.stdout) as PlanJson;
}
async function liveWebhooks(): Promise<Array<{ id: string; name: string; url: string; manifest: { name: string } | null }>> {
  const state = existsSync(path.join(dir, 'state.json')) ? ['--state', 'state.json'] : [];
  const r = await govops(['webhooks', 'list', 'm', ...state, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Array<{ id: string; name: string; url: string; manifest: { name: string } | null }>;
}

describe('Webhook spec.name: the name in the service', () => {
  it('validates, applies under that name, plans as a no-op afterwards; a url change replaces it', async () => {
    await mkdir(path.join(dir, 'm'));
    await writeFile(path.join(dir, 'm', 'hook.yaml'), hook('slack-alerts', 'Slack Alerts', 'https://hooks.example.com/a'));
    const validated = await govops(['validate', 'm', '--strict']);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);

    const applied = await govops(['apply', 'm', '--state', 'state.json']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    const live = await liveWebhooks();
    expect(live.map((w) => [w.name, w.url, w.manifest?.name])).toEqual([['Slack Alerts', 'https://hooks.example.com/a', 'slack-alerts']]);
    const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as { resources: Array<{ kind: string; name: string; id: string }> };
    expect(state.resources.filter((r) => r.kind === 'Webhook').map((r) => [r.name, r.id])).toEqual([['slack-alerts', live[0]!.id]]);

    expect((await plan('m')).changes.filter((c) => c.action !== 'noop')).toEqual([]);

    await writeFile(path.join(dir, 'm', 'hook.yaml'), hook('slack-alerts', 'Slack Alerts', 'https://hooks.example.com/b'));
    const replace = (await plan('m')).changes;
    expect(replace.map((c) => [c.name, c.action, (c.changes ?? []).map((f) => f.path)])).toEqual([['slack-alerts', 'replace', ['url']]]);
    const reapplied = await govops(['apply', 'm', '--state', 'state.json']);
    expect(reapplied.code, reapplied.stderr + reapplied.stdout).toBe(0);
    const after = await liveWebhooks();
    expect(after.map((w) => [w.name, w.url])).toEqual([['Slack Alerts', 'https://hooks.example.com/b']]);
    expect(after[0]!.id).not.toBe(live[0]!.id);
    expect((await plan('m')).changes.filter((c) => c.action !== 'noop')).toEqual([]);

    // a change of spec.name is a replace too (webhooks have no update)
    await writeFile(path.join(dir, 'm', 'hook.yaml'), hook('slack-alerts', 'team_a.alerts', 'https://hooks.example.com/b'));
    const renamed = (await plan('m')).changes;
    expect(renamed.map((c) => [c.name, c.action, (c.changes ?? []).map((f) => f.path)])).toEqual([['slack-alerts', 'replace', ['name']]]);
  });

  it('a live `Slack Alerts` is adopted by such a manifest; export writes it with spec.name and the next plan shows adopt only', async () => {
    const res = await fetch(`${sandbox.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        webhooks: [
          { name: 'Slack Alerts', url: 'https://hooks.example.com/a', global: false, notificationType: ['modelCreated'], actionType: 'triggered' },
          { name: 'slack-alerts', url: 'https://hooks.example.com/other', global: false, notificationType: ['modelCreated'], actionType: 'triggered' },
        ],
      }),
    });
    expect(res.status, await res.text()).toBeLessThan(300);

    // export: the valid name keeps itself, the other gets a sanitised metadata.name and its name in spec.name
    const exported = await govops(['export', '--out', 'exported']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).not.toMatch(/not exported/);
    const text = (await Promise.all((await readdir(path.join(dir, 'exported'))).filter((f) => f.endsWith('.yaml')).map((f) => readFile(path.join(dir, 'exported', f), 'utf8')))).join('\n---\n');
    expect(text).toMatch(/name: slack-alerts\n/);
    expect(text).toMatch(/name: slack-alerts-[0-9a-f]{6}\nspec:\n {2}name: Slack Alerts\n/);
    const validated = await govops(['validate', 'exported', '--strict']);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    const exportPlan = (await plan('exported')).changes;
    expect(exportPlan.map((c) => c.action)).toEqual(['adopt', 'adopt']);
    for (const c of exportPlan) expect(c.changes ?? []).toEqual([]);

    // a hand-written manifest with spec.name adopts the live one of that name, not the one named like metadata.name
    await mkdir(path.join(dir, 'm'));
    await writeFile(path.join(dir, 'm', 'hook.yaml'), hook('slack-alerts', 'Slack Alerts', 'https://hooks.example.com/a'));
    const adoptPlan = (await plan('m')).changes;
    const slack = (await liveWebhooks()).find((w) => w.name === 'Slack Alerts')!;
    expect(adoptPlan.map((c) => [c.name, c.action, c.liveId, c.changes ?? []])).toEqual([['slack-alerts', 'adopt', slack.id, []]]);
    expect(slack.manifest?.name).toBe('slack-alerts');
    const applied = await govops(['apply', 'm', '--state', 'state.json']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    expect((await plan('m')).changes.map((c) => c.action)).toEqual(['noop']);
    expect((await liveWebhooks()).map((w) => w.name).sort()).toEqual(['Slack Alerts', 'slack-alerts']);

    // retry --failed NAME: the manifest name or the name in the service, both the managed webhook only
    for (const name of ['slack-alerts', 'Slack Alerts']) {
      const retried = await govops(['webhooks', 'retry', '--failed', name, '--state', 'state.json', '-o', 'json']);
      expect(retried.code, `${name}: ${retried.stderr}`).toBe(0);
    }
  });

  it('two manifests with the same name in the service are refused by validate', async () => {
    await mkdir(path.join(dir, 'm'));
    await writeFile(
      path.join(dir, 'm', 'hooks.yaml'),
      [hook('alerts-a', 'Slack Alerts', 'https://hooks.example.com/a'), hook('alerts-b', 'Slack Alerts', 'https://hooks.example.com/b'), hook('plain', undefined, 'https://hooks.example.com/c'), hook('plain-too', 'plain', 'https://hooks.example.com/d')].join('---\n'),
    );
    const r = await govops(['validate', 'm']);
    expect(r.code).not.toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/Webhook\/alerts-b.*duplicate webhook name: "Slack Alerts" is also the name in the service of Webhook\/alerts-a/);
    expect(out).toMatch(/Webhook\/plain-too.*duplicate webhook name: "plain" is also the name in the service of Webhook\/plain/);
  });
});
