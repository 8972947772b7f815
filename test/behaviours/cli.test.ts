/**
 * The CLI against every server behaviour, with the shipped examples (all seven kinds and webhooks):
 * `govops apply`, then `govops plan --detailed-exitcode` exits 0. A plan without the state file reports no
 * change in the service (the credentials it cannot compare are listed, not counted).
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { EXAMPLES, exampleEnv } from '../apply/harness.js';
import { runGovops } from '../helpers/cli.js';
import { BEHAVIOUR_SETS, label } from './helpers.js';

let sandbox: SandboxHandle | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

describe.each(BEHAVIOUR_SETS.map((set) => ({ set, name: label(set) })))('govops CLI under behaviour $name', ({ set }) => {
  it('apply, then plan --detailed-exitcode exits 0', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10, behaviours: set });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-cli-behaviour-'));
    await cp(EXAMPLES, path.join(dir, 'manifests'), { recursive: true, filter: (src) => !src.includes('kubernetes') });
    const env = { ...exampleEnv(), GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const apply = await runGovops(['apply', 'manifests'], { cwd: dir, env });
    if (set.includes('no-data-sources')) {
      // A service without data sources: everything else is applied; the data sources are refused (exit 1),
      // reported once; the next plan has nothing but those blocked creates.
      expect(apply.code, apply.stderr + apply.stdout).toBe(1);
      expect((apply.stdout + apply.stderr).split('data sources not supported by this service').length - 1).toBe(1);
      const plan = await runGovops(['plan', 'manifests', '-o', 'json'], { cwd: dir, env });
      const acting = (JSON.parse(plan.stdout) as { changes: Array<{ action: string; resourceKind: string; blocked?: string }> }).changes.filter((c) => c.action !== 'noop');
      expect(acting.length).toBeGreaterThan(0);
      expect(acting.every((c) => c.resourceKind === 'DataSource' && c.action === 'create' && c.blocked !== undefined)).toBe(true);
      return;
    }
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    const plan = await runGovops(['plan', 'manifests', '--detailed-exitcode'], { cwd: dir, env });
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain('No changes: the service matches the manifests.');
    if (set.length === 0 || set.length > 1) {
      const stateless = await runGovops(['plan', 'manifests', '--state', 'elsewhere/state.json'], { cwd: dir, env });
      expect(stateless.code, stateless.stderr).toBe(0);
      expect(stateless.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, \d+ to adopt\./);
      expect(stateless.stdout).toMatch(/\? [^\n]*config\.password[^\n]*: cannot be compared/);
      expect(stateless.stdout).toMatch(/resource\(s\) have credentials that cannot be compared \(marked \?\): not counted as changes\./);
    }
  });
});
