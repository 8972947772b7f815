/**
 * docs/environments.md: "To start from an instance that was configured by hand, `govops export --out
 * environments/overlays/staging-export --state staging.json` writes what it has; move what it shares with the base
 * into patches." The base names the integration its own way, so the exported manifest is renamed before anything
 * is applied: that is still the adoption `export --state` recorded (nothing sent, credentials not compared), not an
 * update that sends the manifest's credentials to the service.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

let sandbox: SandboxHandle;
let dir: string;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-renamed-'));
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const base = `apiVersion: govops/v1
kind: Integration
metadata: { name: analytics-warehouse }
spec:
  type: cloud_warehouse
  autoBootstrap: true
  config:
    host: staging.warehouse.example.com
    warehouse: STAGING_WH
    database: GOVERNANCE
    role: ACCOUNTADMIN
    authenticationType: userPassword
    username: GOVOPS_SYSTEM
    password: { fromEnv: GOVOPS_SECRET_WAREHOUSE_PASSWORD }
    audit: { enabled: true }
`;

describe('export --state, then the manifest renamed to the base name', () => {
  it('plans an adoption under the new name (nothing sent); apply records it there', async () => {
    const created = await fetch(`${sandbox.url}/integrations`, {
      method: 'POST',
      headers: { authorization: sandbox.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'cloud_warehouse',
        autoBootstrap: true,
        config: { host: 'staging.warehouse.example.com', warehouse: 'STAGING_WH', database: 'GOVERNANCE', role: 'ACCOUNTADMIN', authenticationType: 'userPassword', username: 'GOVOPS_SYSTEM', password: 'hand-set-pw', audit: { enabled: true } },
      }),
    });
    expect(created.status, await created.text()).toBe(200);
    sandbox.finishTransitions();
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_WAREHOUSE_PASSWORD: 'staging-pw-from-ci' };

    const exp = await runGovops(['export', '--out', 'staging-export', '--state', 'staging.json'], { cwd: dir, env });
    expect(exp.code, exp.stderr).toBe(0);
    expect(exp.stdout).toContain('Integration/staging-warehouse-example-com');
    await writeFile(path.join(dir, 'rendered.yaml'), base);

    const plan = await runGovops(['plan', 'rendered.yaml', '--state', 'staging.json', '-o', 'json'], { cwd: dir, env });
    expect(plan.code, plan.stderr).toBe(0);
    const changes = (JSON.parse(plan.stdout) as { changes: Array<{ name: string; action: string; renamedFrom?: string; changes: unknown[] }> }).changes;
    expect(changes.map((c) => ({ name: c.name, action: c.action, renamedFrom: c.renamedFrom, changes: c.changes }))).toEqual([
      { name: 'analytics-warehouse', action: 'adopt', renamedFrom: 'staging-warehouse-example-com', changes: [] },
    ]);

    const writes = (): number => sandbox.requests().filter((r) => r.method !== 'GET').length;
    const before = writes();
    const apply = await runGovops(['apply', 'rendered.yaml', '--state', 'staging.json'], { cwd: dir, env });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    expect(writes()).toBe(before);
    const state = JSON.parse(await readFile(path.join(dir, 'staging.json'), 'utf8')) as { resources: Array<{ kind: string; name: string; origin: string }> };
    expect(state.resources.map((r) => `${r.kind}/${r.name} ${r.origin}`)).toEqual(['Integration/analytics-warehouse adopted']);
    const again = await runGovops(['plan', 'rendered.yaml', '--state', 'staging.json', '--detailed-exitcode'], { cwd: dir, env });
    expect(again.code, again.stdout).toBe(0);
  });
});
