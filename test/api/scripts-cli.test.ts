/** `govops scripts` as a user runs it: the real built CLI against the sandbox. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { ServiceClient } from '../../src/api/client.js';
import { integrationIdentity } from '../../src/kinds/registry.js';
import { silentLogger } from '../../src/log.js';
import { newState, saveState } from '../../src/state/store.js';
import type { ManagedResource } from '../../src/state/types.js';
import { manualSqlManifest } from '../helpers/manifests.js';

const SECRET = 'pw-cli-secret-value';
let sb: SandboxHandle;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, transitionMs: 50, dev: true });
  dir = mkdtempSync(path.join(os.tmpdir(), 'govops-scripts-cli-'));
  writeFileSync(
    path.join(dir, 'analytics.yaml'),
    `apiVersion: govops/v1
kind: Integration
metadata:
  name: analytics
spec:
  type: cloud_warehouse
  autoBootstrap: false
  config:
    host: cw.example.com
    warehouse: compute
    database: gov
    authenticationType: userPassword
    username: svc
    password: { fromEnv: GOVOPS_SECRET_CW_PASSWORD }
`,
  );
  env = { GOVOPS_URL: sb.url, GOVOPS_TOKEN: sb.adminToken, GOVOPS_SECRET_CW_PASSWORD: SECRET, GOVOPS_LOG_LEVEL: 'debug' };
});
afterAll(async () => {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('govops scripts', () => {
  it('prints the create script on stdout and the next step on stderr, no secret anywhere', async () => {
    const res = await runGovops(['scripts', 'analytics', '--phase', 'create', '.'], { cwd: dir, env });
    expect(res.stderr).toContain('next: run it in the platform, then create the integration');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('cw.example.com');
    expect(res.stdout + res.stderr).not.toContain(SECRET);
    expect(res.stdout + res.stderr).not.toContain(sb.adminToken);
  });

  it('cleanup of a sql_analytics: the acknowledgment waits for post-cleanup too (a kind whose cleanup is one script: at once)', async () => {
    writeFileSync(
      path.join(dir, 'sql.yaml'),
      manualSqlManifest('GOVOPS_SECRET_CW_PASSWORD'),
    );
    try {
      const sql = await runGovops(['scripts', 'sql', '--phase', 'cleanup', 'sql.yaml'], { cwd: dir, env });
      expect(sql.code, sql.stderr).toBe(0);
      expect(sql.stderr).toContain('once this script and the --phase post-cleanup one ran, acknowledge both under metadata.annotations');
      const cw = await runGovops(['scripts', 'analytics', '--phase', 'cleanup', 'analytics.yaml'], { cwd: dir, env });
      expect(cw.code, cw.stderr).toBe(0);
      expect(cw.stderr).toContain('once it ran, acknowledge it under metadata.annotations (next to "govops/delete": "true")');
      // --ack after the first of two scripts: the line, and when to add it
      const first = await runGovops(['scripts', 'sql', '--phase', 'initial-create', 'sql.yaml', '--ack'], { cwd: dir, env: {} });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^govops\/manual-step: "create:[0-9a-f]{8}"\n$/);
      expect(first.stderr).toContain('add it once the create script ran too (govops scripts sql --phase create sql.yaml): it lets the create through');
      const cleanup = await runGovops(['scripts', 'sql', '--phase', 'cleanup', 'sql.yaml', '--ack'], { cwd: dir, env: {} });
      expect(cleanup.stderr).toContain('add it once the post-cleanup script ran too (govops scripts sql --phase post-cleanup sql.yaml): it lets the delete through');
      const last = await runGovops(['scripts', 'sql', '--phase', 'create', 'sql.yaml', '--ack'], { cwd: dir, env: {} });
      expect(last.stdout).toBe(first.stdout);
      expect(last.stderr).toBe('');
    } finally {
      rmSync(path.join(dir, 'sql.yaml'));
    }
  });

  it('--out writes a private file', async () => {
    const out = path.join(dir, 'setup.sql');
    const res = await runGovops(['scripts', 'analytics', '--phase', 'create', '--out', out], { cwd: dir, env });
    expect(res.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('cw.example.com');
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(res.stdout).toBe('');
  });

  it('--out - is refused before any request (it wrote the script to a file named - and nothing to stdout)', async () => {
    sb.clearRequests();
    const res = await runGovops(['scripts', 'analytics', '--phase', 'create', '--out', '-'], { cwd: dir, env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--out -:');
    expect(res.stderr).toMatch(/hint: leave --out out: the script is printed on standard output/);
    expect(readdirSync(dir)).not.toContain('-');
    expect(sb.requests()).toEqual([]);
  });

  it('--out that cannot be written: a clear error, exit 1, and no copy of the script left beside it', async () => {
    const out = path.join(dir, 'scripts-folder');
    mkdirSync(out);
    const res = await runGovops(['scripts', 'analytics', '--phase', 'create', '--out', out], { cwd: dir, env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot write the script to ${out}`);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a phase that does not apply to the kind is a clear error, exit 1, no request', async () => {
    sb.clearRequests();
    const res = await runGovops(['scripts', 'analytics', '--phase', 'initial-create'], { cwd: dir, env });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no initial-create script for a cloud_warehouse integration \(analytics\.yaml:1:1\)/);
    expect(res.stderr).toMatch(/hint: cloud_warehouse has scripts for: create, edit, delete, cleanup/);
    expect(sb.requests()).toEqual([]);
  });

  it('a name that is not an integration is named by its own kind', async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'govops-scripts-kind-'));
    try {
      writeFileSync(
        path.join(other, 'ds.yaml'),
        `apiVersion: govops/v1
kind: DataSource
metadata:
  name: sales
spec:
  integration: lake
  dataSourceName: sales
  prefix: s3://lake/sales
`,
      );
      const res = await runGovops(['scripts', 'sales', '--phase', 'create', '--ack', '.'], { cwd: other, env });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('sales is a DataSource; scripts exist only for integrations');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('edit: the recorded id must still name the recorded integration (an id given to another one after a delete fetches nothing)', async () => {
    const api = new ServiceClient({ baseUrl: sb.url, token: sb.adminToken, logger: silentLogger() });
    try {
      const config = { host: 'cw.example.com', warehouse: 'compute', database: 'gov', authenticationType: 'userPassword', username: 'svc', password: SECRET };
      const created = await api.createIntegration({ type: 'cloud_warehouse', autoBootstrap: false, config });
      const stateWith = async (file: string, identity: string): Promise<string> => {
        const entry: ManagedResource = { kind: 'Integration', name: 'analytics', id: created.id, origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: new Date(0).toISOString(), type: 'cloud_warehouse', autoBootstrap: false, identity };
        await saveState(path.join(dir, file), { ...newState(), resources: [entry] });
        return path.join(dir, file);
      };
      const mine = await stateWith('mine.json', integrationIdentity('cloud_warehouse', config));
      const ok = await runGovops(['scripts', 'analytics', '--phase', 'edit', '--state', mine, '.'], { cwd: dir, env });
      expect(ok.code, ok.stderr).toBe(0);
      const reused = await stateWith('reused.json', integrationIdentity('cloud_warehouse', { ...config, host: 'another-team.example.com' }));
      const refused = await runGovops(['scripts', 'analytics', '--phase', 'edit', '--state', reused, '.'], { cwd: dir, env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`its recorded id ${created.id} now names another integration`);
      expect(refused.stdout).toBe('');
    } finally {
      await api.close();
    }
  });

  it('without a token: a clear error naming GOVOPS_TOKEN and --token-file', async () => {
    const res = await runGovops(['scripts', 'analytics', '--phase', 'create'], { cwd: dir, env: { ...env, GOVOPS_TOKEN: undefined } });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no API token given\n\s+hint: set GOVOPS_TOKEN or pass --token-file/);
  });

  it('--phase is required and checked', async () => {
    const res = await runGovops(['scripts', 'analytics', '--phase', 'teardown'], { cwd: dir, env });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/teardown.*Allowed choices are create, initial-create, edit, delete, cleanup, post-cleanup/s);
  });
});
