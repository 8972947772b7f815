/**
 * `govops export` cases: an empty service, names that collide after sanitising, one resource imported by
 * `--select` + `--state` (Terraform's import of one resource), filters by kind, `--layout kind`, and an export
 * never replacing a file.
 */
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { runGovops } from '../helpers/cli.js';

let sandbox: SandboxHandle;
let dir: string;
let conn: Record<string, string>;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-cases-'));
  conn = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const bucket = (name: string, configName: string, path: string): string => `apiVersion: govops/v1
kind: Integration
metadata: { name: ${name} }
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: "${configName}"
    cloudAccountId: "123456789012"
    cloudRegion: us-east-1
    cloudLocationRole: arn:example:role/${name}
    cloudLocationPath: s3://${path}/
    authenticationType: accessKey
    cloudAccessKeyId: AKIAEXAMPLE
    cloudSecretAccessKey: { fromEnv: GOVOPS_SECRET_KEY }
`;

const hook = (name: string): string => `apiVersion: govops/v1
kind: Webhook
metadata: { name: ${name} }
spec: { url: "https://hooks.example.com/${name}", global: false, notificationType: [userCreated], actionType: triggered }
`;

async function seed(docs: string[]): Promise<void> {
  await mkdir(path.join(dir, 'seed'), { recursive: true });
  await writeFile(path.join(dir, 'seed', 'all.yaml'), docs.join('---\n'));
  // The service's content is set up by the engine in-process (what `govops apply seed --manual-steps trust`
  // does, without a process start): the export, plan and apply under test run as the CLI.
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries: 0 });
  try {
    const res = await reconcile(api, {
      source: { root: dir, paths: ['seed'] },
      plan: { prune: false, allowReplace: false, manualSteps: 'trust' },
      tuning: { timeoutMs: 20_000, pollIntervalMs: 20, pollMaxIntervalMs: 200 },
      apply: true,
      logger: silentLogger(),
      statePath: path.join(dir, 'seed-state', 'state.json'),
      env: { GOVOPS_SECRET_KEY: 'canary-secret-value' },
    });
    expect(res.ok, res.error).toBe(true);
  } finally {
    await api.close();
  }
}

describe('govops export', () => {
  it('on an empty service writes nothing but says so, and exits 0', async () => {
    const res = await runGovops(['export', '--out', 'out'], { cwd: dir, env: conn });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Exported 0 integrations, 0 webhooks and 0 data sources');
    expect(await readdir(path.join(dir, 'out'))).toEqual([]);
  });

  it('names that collide after sanitising get distinct, stable names; the plan adopts both', async () => {
    await seed([bucket('a', 'Raw Bucket', 'one'), bucket('b', 'raw_bucket', 'two')]);
    const first = await runGovops(['export', '--out', 'out1'], { cwd: dir, env: conn });
    expect(first.code, first.stderr).toBe(0);
    const files = (await readdir(path.join(dir, 'out1'))).filter((f) => f.endsWith('.yaml')).sort();
    expect(files).toHaveLength(2);
    expect(files.some((f) => f === 'integration-raw-bucket.yaml')).toBe(true);
    expect(files.some((f) => /^integration-raw-bucket-[0-9a-f]{6}\.yaml$/.test(f))).toBe(true);
    const again = await runGovops(['export', '--out', 'out2'], { cwd: dir, env: conn });
    expect(again.code).toBe(0);
    expect((await readdir(path.join(dir, 'out2'))).filter((f) => f.endsWith('.yaml')).sort()).toEqual(files);
    const text = (await Promise.all(files.map((f) => readFile(path.join(dir, 'out1', f), 'utf8')))).join('');
    expect(text).not.toContain('canary-secret-value');
    expect(text).not.toContain('govops/manual-step'); // object_store has no create script: nothing to acknowledge
    const vars = Object.fromEntries([...first.stdout.matchAll(/^ {2}([A-Z0-9_]+) {2}\(/gm)].map((m) => [m[1]!, 'v']));
    expect(Object.keys(vars)).toHaveLength(2);
    const plan = await runGovops(['plan', 'out1', '--state', 'fresh.json'], { cwd: dir, env: { ...conn, ...vars } });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 2 to adopt\./);
  });

  it('a chat webhook whose url is its credential: written as it is, said on stderr and in the file; validate and plan adopt it', async () => {
    const url = 'https://hooks.slack.com/services/T00000000/B00000000/canaryTOKEN1234abcd5678';
    await seed([hook('alerts').replace('"https://hooks.example.com/alerts"', `"${url}"`)]);
    const res = await runGovops(['export', '--out', 'out', '--state', 'st/state.json'], { cwd: dir, env: conn });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/warning: Webhook\/alerts \(id \d+\) url: written as it is: its path holds a token/);
    expect(res.stdout + res.stderr).not.toContain('canaryTOKEN');
    const file = await readFile(path.join(dir, 'out', 'webhook-alerts.yaml'), 'utf8');
    expect(file).toContain('# Its url is its credential');
    expect(file).toContain(url);
    const validate = await runGovops(['validate', 'out', '--strict'], { cwd: dir });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    const plan = await runGovops(['plan', 'out', '--state', 'st/state.json', '--detailed-exitcode'], { cwd: dir, env: conn });
    expect(plan.stdout, plan.stderr).toMatch(/0 to create, 0 to update, 0 to replace, 0 to delete, 1 to adopt\./);
  });

  it('--select NAME --state imports one resource: plan shows the adoption, apply records it, nothing is sent', async () => {
    await seed([hook('pager'), hook('audit')]);
    const res = await runGovops(['export', '--out', 'repo', '--select', 'pager', '--state', 'repo-state/state.json'], { cwd: dir, env: conn });
    expect(res.code, res.stderr).toBe(0);
    expect(await readdir(path.join(dir, 'repo'))).toEqual(['webhook-pager.yaml']);
    expect(res.stdout).toContain('Recorded 1 of them');
    const plan = await runGovops(['plan', 'repo', '--state', 'repo-state/state.json'], { cwd: dir, env: conn });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/0 to create, 0 to update, 0 to replace, 0 to delete, 1 to adopt\./);
    const writesBefore = sandbox.requests().filter((r) => r.method !== 'GET').length;
    const apply = await runGovops(['apply', 'repo', '--state', 'repo-state/state.json'], { cwd: dir, env: conn });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    expect(sandbox.requests().filter((r) => r.method !== 'GET').length).toBe(writesBefore);
    const after = await runGovops(['plan', 'repo', '--state', 'repo-state/state.json', '--detailed-exitcode'], { cwd: dir, env: conn });
    expect(after.code, after.stdout).toBe(0);
    const list = await runGovops(['state', 'list', '--state', 'repo-state/state.json'], { cwd: dir });
    expect(list.stdout).toContain('Webhook/pager');
    expect(list.stdout).not.toContain('Webhook/audit');
  });

  it('--kind filters, --layout kind writes one file per kind, and an existing file is never replaced', async () => {
    await seed([hook('pager'), hook('audit'), bucket('a', 'bucket-a', 'a')]);
    const res = await runGovops(['export', '--out', 'out', '--kind', 'Webhook', '--layout', 'kind'], { cwd: dir, env: conn });
    expect(res.code, res.stderr).toBe(0);
    expect(await readdir(path.join(dir, 'out'))).toEqual(['webhooks.yaml']);
    expect((await readFile(path.join(dir, 'out', 'webhooks.yaml'), 'utf8')).match(/^kind: Webhook$/gm)).toHaveLength(2);
    const again = await runGovops(['export', '--out', 'out', '--layout', 'kind'], { cwd: dir, env: conn });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists');
    expect(await readdir(path.join(dir, 'out'))).toEqual(['webhooks.yaml']);
    const forced = await runGovops(['export', '--out', 'out', '--layout', 'kind', '--force'], { cwd: dir, env: conn });
    expect(forced.code, forced.stderr).toBe(0);
    expect((await readdir(path.join(dir, 'out'))).sort()).toEqual(['integrations.yaml', 'secrets.env.template', 'webhooks.yaml']);
  });

  it('--force --layout kind --select: a kind file holding live resources the selection leaves out is not replaced', async () => {
    await seed([hook('pager'), hook('audit')]);
    const all = await runGovops(['export', '--out', 'out', '--layout', 'kind'], { cwd: dir, env: conn });
    expect(all.code, all.stderr).toBe(0);
    const before = await readFile(path.join(dir, 'out', 'webhooks.yaml'), 'utf8');
    // replacing webhooks.yaml with pager alone would lose audit, and a later `apply --prune` would delete it live
    const one = await runGovops(['export', '--out', 'out', '--layout', 'kind', '--select', 'Webhook/pager', '--force'], { cwd: dir, env: conn });
    expect(one.code).toBe(1);
    expect(one.stderr).toContain('Webhook/audit');
    expect(one.stderr).not.toContain('Webhook/pager');
    expect(one.stderr).toContain('--prune');
    expect(await readFile(path.join(dir, 'out', 'webhooks.yaml'), 'utf8')).toBe(before);
    // one file per resource: --force replaces pager's file only
    const perResource = await runGovops(['export', '--out', 'res', '--select', 'Webhook/pager', '--force'], { cwd: dir, env: conn });
    expect(perResource.code, perResource.stderr).toBe(0);
    // a resource gone from the service may leave the file: audit deleted live, then the whole kind re-exported
    await writeFile(path.join(dir, 'out', 'webhooks.yaml'), `${before}---\n${hook('gone')}`);
    const refreshed = await runGovops(['export', '--out', 'out', '--layout', 'kind', '--force'], { cwd: dir, env: conn });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect((await readFile(path.join(dir, 'out', 'webhooks.yaml'), 'utf8')).match(/^kind: Webhook$/gm)).toHaveLength(2);
  });

  it('--state that already manages a resource under another name: refused before anything is written', async () => {
    await seed([hook('pager'), hook('audit')]);
    // one resource adopted under another name first (as the walkthrough's state manages the examples)
    const seeded = JSON.parse(await readFile(path.join(dir, 'seed-state', 'state.json'), 'utf8')) as { resources: { kind: string; name: string; id: string }[] };
    const id = seeded.resources.find((r) => r.kind === 'Webhook' && r.name === 'pager')!.id;
    await mkdir(path.join(dir, 'st'));
    await writeFile(path.join(dir, 'pager.yaml'), hook('paging'));
    const adopt = await runGovops(['state', 'adopt', 'Webhook/paging', '--id', id, '--state', 'st/state.json', 'pager.yaml'], { cwd: dir, env: conn });
    expect(adopt.code, adopt.stderr + adopt.stdout).toBe(0);
    const stateBefore = await readFile(path.join(dir, 'st', 'state.json'), 'utf8');
    const refused = await runGovops(['export', '--out', 'manifests', '--state', 'st/state.json'], { cwd: dir, env: conn });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is already managed as Webhook/paging');
    expect(refused.stderr).toContain('export without --state');
    expect((await readdir(dir)).sort()).toEqual(['pager.yaml', 'seed', 'seed-state', 'st']); // no folder, no staging
    expect(await readdir(path.join(dir, 'st'))).toEqual(['state.json']);
    expect(await readFile(path.join(dir, 'st', 'state.json'), 'utf8')).toBe(stateBefore);
    // the command the hint gives then works
    const hinted = await runGovops(['export', '--out', 'manifests'], { cwd: dir, env: conn });
    expect(hinted.code, hinted.stderr).toBe(0);
    expect((await readdir(path.join(dir, 'manifests'))).sort()).toEqual(['webhook-audit.yaml', 'webhook-pager.yaml']);
    // and an existing file refuses an export with --state before the state is touched
    const again = await runGovops(['export', '--out', 'manifests', '--state', 'fresh/state.json'], { cwd: dir, env: conn });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('does not replace files');
    expect((await readdir(dir)).includes('fresh')).toBe(false);
  });

  it('importing one resource after another into one folder: each adds its file, the env template gains its variables', async () => {
    await seed([bucket('a', 'bucket-a', 'a'), bucket('b', 'bucket-b', 'b')]);
    const first = await runGovops(['export', '--out', 'repo', '--select', 'bucket-a'], { cwd: dir, env: conn });
    expect(first.code, first.stderr).toBe(0);
    const second = await runGovops(['export', '--out', 'repo', '--select', 'Integration/bucket-b'], { cwd: dir, env: conn });
    expect(second.code, second.stderr).toBe(0);
    expect((await readdir(path.join(dir, 'repo'))).sort()).toEqual(['integration-bucket-a.yaml', 'integration-bucket-b.yaml', 'secrets.env.template']);
    const template = await readFile(path.join(dir, 'repo', 'secrets.env.template'), 'utf8');
    expect(template.match(/^GOVOPS_SECRET_BUCKET_[AB]_CLOUD_SECRET_ACCESS_KEY=$/gm)).toHaveLength(2);
    const bad = await runGovops(['export', '--out', 'repo', '--select', 'Nothing/x'], { cwd: dir, env: conn });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--select');
  });

  it('a --select that matches no resource to export is an error naming it, and nothing is written', async () => {
    await seed([bucket('a', 'bucket-a', 'a'), hook('pager')]);
    for (const args of [['--select', 'bucket-aa'], ['--select', 'bucket-a', '--select', 'Webhook/pagr'], ['--select', 'pager', '--kind', 'Integration']]) {
      const res = await runGovops(['export', '--out', 'repo', ...args, '--state', 'st/state.json'], { cwd: dir, env: conn });
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toMatch(/--select \S+ matches no resource to export: nothing written/);
      expect(res.stdout).not.toContain('Exported');
      expect((await readdir(dir)).sort()).toEqual(['seed', 'seed-state']); // no folder, no state
    }
  });

  it('--secret-env-prefix names the variables under the operator prefix, and plan with that prefix reads them', async () => {
    await seed([bucket('a', 'bucket-a', 'a')]);
    const res = await runGovops(['export', '--out', 'out', '--secret-env-prefix', 'ACME_SECRET_'], { cwd: dir, env: conn });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('ACME_SECRET_BUCKET_A_CLOUD_SECRET_ACCESS_KEY');
    const plan = await runGovops(['plan', 'out', '--secret-env-prefix', 'ACME_SECRET_', '--state', 'fresh.json'], {
      cwd: dir,
      env: { ...conn, ACME_SECRET_BUCKET_A_CLOUD_SECRET_ACCESS_KEY: 'k' },
    });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/0 to create, 0 to update, 0 to replace, 0 to delete, 1 to adopt\./);
  });
});
