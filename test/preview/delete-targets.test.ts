/**
 * A dry-run DELETE carries the delete payload (spec.deleteCredentials, secrets resolved). For an okta
 * columnar_warehouse the payload names the identity provider (`okta.idpHost`) the service signs in to with the
 * admin password: a pull request that asks for the deletion (or a replace) and points that host elsewhere must not
 * have the operator's password sent there by `govops preview`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { git, initRepo } from '../helpers/git.js';

const SECRETS = {
  GOVOPS_SECRET_OKTA_PASSWORD: 'okta-SECRET-pw-4141',
  GOVOPS_SECRET_OKTA_ADMIN: 'okta-SECRET-admin-4242',
};

const okta = (o: { adminIdp?: string; annotations?: string; database?: string } = {}) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: col
${o.annotations ?? ''}spec:
  type: columnar_warehouse
  autoBootstrap: true
  config:
    host: col.example.com
    database: ${o.database ?? 'governance'}
    initialDatabase: dev
    authenticationType: okta
    okta:
      username: govops-system@example.com
      password: { fromEnv: GOVOPS_SECRET_OKTA_PASSWORD }
      appId: 0oa1example2app3
      idpHost: https://idp.example.com
      role: govops_system
  deleteCredentials:
    authenticationType: okta
    okta:
      username: govops-admin@example.com
      password: { fromEnv: GOVOPS_SECRET_OKTA_ADMIN }
      appId: 0oa1example2app3
      idpHost: ${o.adminIdp ?? 'https://idp.example.com'}
      role: govops_admin
`;

describe('govops preview: the delete payload goes to no identity provider the pull request chose', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  let stateDir: string;
  const live = () => ({ GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, ...SECRETS });
  const write = (text: string) => writeFile(path.join(repo, 'm', 'col.yaml'), text);
  const pr = async (name: string, text: string): Promise<void> => {
    git(repo, 'checkout', '-q', '-B', name, 'main');
    await write(text);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', name);
  };
  const deleteDryRuns = () => sandbox.requests().filter((q) => q.method === 'DELETE' && q.query.dryRun !== undefined);

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-pr-delete-'));
    stateDir = await mkdtemp(path.join(tmpdir(), 'govops-pr-delete-state-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm'));
    await write(okta());
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    const applied = await runGovops(['apply', 'm', '--state', path.join(stateDir, 'state.json')], { cwd: repo, env: live() });
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });

  const cases = [
    { name: 'a requested delete', annotations: '  annotations:\n    govops/delete: "true"\n', database: 'governance', args: ['--prune'] },
    { name: 'a replace', annotations: '', database: 'governance2', args: ['--allow-replace'] },
  ];
  for (const c of cases) {
    it(`${c.name}: the same idpHost is dry-run; another one is skipped, nothing sent`, async () => {
      await pr(`same-${c.database}`, okta({ annotations: c.annotations, database: c.database }));
      sandbox.clearRequests();
      const same = await runGovops(['preview', 'm', '--base', 'main', '-o', 'json', ...c.args], { cwd: repo, env: live() });
      expect(same.stderr).not.toMatch(/error/i);
      expect(deleteDryRuns()).toHaveLength(1);

      await pr(`evil-${c.database}`, okta({ annotations: c.annotations, database: c.database, adminIdp: 'https://idp.evil.example.net' }));
      sandbox.clearRequests();
      const evil = await runGovops(['preview', 'm', '--base', 'main', '-o', 'json', ...c.args], { cwd: repo, env: live() });
      expect(deleteDryRuns()).toEqual([]);
      const doc = JSON.parse(evil.stdout) as { resources: Array<{ name: string; dryRun?: { status: string; reason?: string } }> };
      const col = doc.resources.find((r) => r.name === 'col');
      expect(col?.dryRun).toMatchObject({ status: 'skipped', reason: expect.stringContaining('deleteCredentials.okta.idpHost') });
      expect(evil.stdout + evil.stderr).not.toContain(SECRETS.GOVOPS_SECRET_OKTA_ADMIN);
    });
  }
});
