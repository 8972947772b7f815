/**
 * examples/environments/: a kustomize base and dev/prod overlays of govops manifests, rendered with the kustomize
 * on the machine (`kubectl kustomize`), piped into `govops validate -` and planned and applied against a sandbox.
 * kubectl missing is a failure that says so, never a skipped test.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

const ENVIRONMENTS = fileURLToPath(new URL('../../examples/environments/', import.meta.url));
const run = promisify(execFile);

async function kustomize(overlay: string): Promise<string> {
  try {
    const { stdout } = await run('kubectl', ['kustomize', path.join(ENVIRONMENTS, 'overlays', overlay)], { timeout: 60_000 });
    return stdout;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('kubectl is not on PATH: this test renders examples/environments with `kubectl kustomize`; install kubectl (or put it on PATH)', { cause: err });
    }
    throw err;
  }
}

const SECRETS = { GOVOPS_SECRET_WAREHOUSE_PASSWORD: 'pw-env-test', GOVOPS_SECRET_WAREHOUSE_ADMIN_PASSWORD: 'admin-pw-env-test' };

let sandbox: SandboxHandle | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

describe('examples/environments (kubectl kustomize | govops)', () => {
  it.each([
    { overlay: 'dev', host: 'dev.warehouse.example.com', webhooks: ['access-requests', 'health-alerts'], alerts: 'https://hooks.example.com/health-dev' },
    { overlay: 'prod', host: 'prod.warehouse.example.com', webhooks: ['access-requests', 'health-alerts', 'pager'], alerts: 'https://hooks.example.com/health' },
  ])('$overlay renders, validates (strict), plans and applies against its own instance', async ({ overlay, host, webhooks, alerts }) => {
    const rendered = await kustomize(overlay);
    const validate = await runGovops(['validate', '--strict', '-'], { input: rendered });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stderr).toContain(`${1 + webhooks.length} valid manifests: 0 errors, 0 warnings`);

    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    dir = await mkdtemp(path.join(tmpdir(), `govops-env-${overlay}-`));
    const env = { ...SECRETS, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const plan = await runGovops(['plan', '-'], { cwd: dir, env, input: rendered });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`Plan: ${1 + webhooks.length} to create, 0 to update, 0 to replace, 0 to delete`);
    const apply = await runGovops(['apply', '-'], { cwd: dir, env, input: rendered });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    const again = await runGovops(['plan', '-', '--detailed-exitcode'], { cwd: dir, env, input: rendered });
    expect(again.code, again.stdout).toBe(0);

    const integrations = (await (await fetch(`${sandbox.url}/integrations`, { headers: { authorization: sandbox.adminToken } })).json()) as Array<{ config: { host: string } }>;
    expect(integrations.map((i) => i.config.host)).toEqual([host]);
    const live = (await (await fetch(`${sandbox.url}/webhooks`, { headers: { authorization: `Bearer ${sandbox.adminToken}` } })).json()) as Array<{ name: string; url: string }>;
    expect(live.map((w) => w.name).sort()).toEqual(webhooks);
    expect(live.find((w) => w.name === 'health-alerts')!.url).toBe(alerts);
  });

  it('two environments against one instance (a shared test sandbox): dev --prune never deletes what prod created; with --no-adopt it changes none of it', async () => {
    // docs/environments.md: each instance has its own state; ownership is that state. An instance two environments
    // share is outside that rule (a same-named resource is adopted by the other), and --no-adopt keeps them apart.
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-env-shared-'));
    const env = { ...SECRETS, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const prod = await runGovops(['apply', '-', '--state', 'prod.json'], { cwd: dir, env, input: await kustomize('prod') });
    expect(prod.code, prod.stderr + prod.stdout).toBe(0);
    const hooks = async () =>
      ((await (await fetch(`${sandbox!.url}/webhooks`, { headers: { authorization: `Bearer ${sandbox!.adminToken}` } })).json()) as Array<{ id: number; name: string; url: string }>)
        .map((w) => `${w.id} ${w.name} ${w.url}`)
        .sort();
    const before = await hooks();
    const dev = await runGovops(['apply', '-', '--state', 'dev.json', '--prune', '--no-adopt'], { cwd: dir, env, input: await kustomize('dev') });
    expect(dev.stdout).toMatch(/not adopted \(--no-adopt\)/);
    expect(await hooks()).toEqual(before);
    // dev with no manifests at all, pruning: its state holds only what dev created (its own integration, whose
    // delete waits for its manifest's deleteCredentials), none of prod's, so nothing of prod's goes
    const empty = await runGovops(['apply', '-', '--state', 'dev.json', '--prune', '--allow-empty'], { cwd: dir, env, input: '' });
    expect(empty.stdout).not.toMatch(/Webhook\/\S+\s+delete/);
    expect(await hooks()).toEqual(before);
    const hosts = ((await (await fetch(`${sandbox.url}/integrations`, { headers: { authorization: sandbox.adminToken } })).json()) as Array<{ config: { host: string } }>).map((i) => i.config.host);
    expect(hosts).toContain('prod.warehouse.example.com');
    const again = await runGovops(['plan', '-', '--state', 'prod.json', '--prune', '--detailed-exitcode'], { cwd: dir, env, input: await kustomize('prod') });
    expect(again.code, again.stdout).toBe(0);
  });

  it('the base is a valid manifest folder on its own; the kustomize files are ignored (.govopsignore)', async () => {
    const res = await runGovops(['validate', '--strict', ENVIRONMENTS]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stderr).toContain('2 files, 3 valid manifests: 0 errors, 0 warnings');
  });
});
