/**
 * The shipped examples (all seven kinds and webhooks) against every server behaviour: apply, then a plan
 * with nothing to do. A plan without the state file reports no change in the service (the credentials it
 * cannot compare are listed, not counted).
 *
 * Every behaviour set runs the real reconcile engine in-process over HTTP (test/apply/inproc.ts), with
 * the CLI's defaults (manual steps required); the CLI itself (`govops apply`, `govops plan
 * --detailed-exitcode`, their exit codes and text) runs as a real process under no behaviour, the two
 * maximal combinations (which hold every behaviour but `list-lag`, `no-data-sources` and the exclusive
 * ones) and `no-data-sources` (its own exit code). The CLI's process boundary adds nothing that depends on
 * the behaviour: spawning it 60 times was a fifth of the suite's process starts for the same path.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { EXAMPLES, exampleEnv } from '../apply/harness.js';
import { rig, type Rig } from '../apply/inproc.js';
import { runGovops } from '../helpers/cli.js';
import { BEHAVIOUR_SETS, label } from './helpers.js';

let sandbox: SandboxHandle | undefined;
let dir: string | undefined;
let r: Rig | undefined;
afterEach(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  await r?.close();
  sandbox = undefined;
  dir = undefined;
  r = undefined;
});

const withoutKubernetes = (src: string) => !src.includes('kubernetes');
const COMBINED = BEHAVIOUR_SETS.filter((set) => set.length > 1);
const CLI_SETS = [[], ...COMBINED, ['no-data-sources']];

describe.each(BEHAVIOUR_SETS.map((set) => ({ set, name: label(set) })))('the examples under behaviour $name', ({ set }) => {
  it('apply, then a plan with nothing to do; without the state, only adopts', async () => {
    r = await rig({ transitionMs: 10, behaviours: set });
    await cp(EXAMPLES, path.join(r.dir, 'm'), { recursive: true, filter: withoutKubernetes });
    Object.assign(r.env, exampleEnv());
    const apply = await r.run();
    if (set.includes('no-data-sources')) {
      // A service without data sources: everything else is applied; the data sources are refused (not ok),
      // and the next plan has nothing but those blocked creates.
      expect(apply.ok).toBe(false);
      expect(apply.error).toMatch(/^\d+ of \d+ resources not applied: DataSource\/[^:]+: blocked: the service has no data-source endpoints/);
      const plan = await r.run({ apply: false });
      const acting = plan.plan!.changes.filter((c) => c.action !== 'noop');
      expect(acting.length).toBeGreaterThan(0);
      expect(acting.every((c) => c.resourceKind === 'DataSource' && c.action === 'create' && c.blocked !== undefined)).toBe(true);
      return;
    }
    expect(apply.ok, apply.error).toBe(true);
    const plan = await r.run({ apply: false });
    expect(plan.plan!.changes.filter((c) => c.action !== 'noop')).toEqual([]);
    expect(plan.changed).toBe(false);
    const stateless = await r.run({ apply: false, statePath: path.join(r.dir, 'elsewhere', 'state.json') });
    const s = stateless.plan!.summary;
    expect({ create: s.create, update: s.update, replace: s.replace, delete: s.delete }).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
    expect(stateless.plan!.changes.every((c) => c.action === 'adopt' && c.changes.length === 0)).toBe(true);
    expect(stateless.plan!.changes.some((c) => c.notComparable?.paths.includes('config.password'))).toBe(true);
  });
});

describe.each(CLI_SETS.map((set) => ({ set, name: label(set) })))('govops CLI under behaviour $name', ({ set }) => {
  it('apply, then plan --detailed-exitcode exits 0', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10, behaviours: set });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-cli-behaviour-'));
    await cp(EXAMPLES, path.join(dir, 'manifests'), { recursive: true, filter: withoutKubernetes });
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
    const stateless = await runGovops(['plan', 'manifests', '--state', 'elsewhere/state.json'], { cwd: dir, env });
    expect(stateless.code, stateless.stderr).toBe(0);
    expect(stateless.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, \d+ to adopt\./);
    expect(stateless.stdout).toMatch(/\? [^\n]*config\.password[^\n]*: cannot be compared/);
    expect(stateless.stdout).toMatch(/\d+ resources? (?:has|have) credentials that cannot be compared \(marked \?\): not counted as changes\./);
  });
});
