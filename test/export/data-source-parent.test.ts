/**
 * docs/operator.md "Importing one resource": "A data source needs its object_store integration's manifest in the same
 * set: select both ... unless the integration is already in the repository." An integration already in the
 * repository has the name its manifest gives it, which need not be the one export derives from its natural key; with
 * `--state`, the state names it (by its live id), and the exported data source is registered under that name. Before,
 * it named export's own name, and the next plan refused the set ("no Integration manifest named ...").
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { mapJsonBody, rewritingProxy } from '../helpers/rewriting-proxy.js';

let sandbox: SandboxHandle;
let dir: string;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-ds-parent-'));
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const lake = `apiVersion: govops/v1
kind: Integration
metadata: { name: lake-raw }
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: raw-bucket
    cloudAccountId: "123456789012"
    cloudRegion: us-east-1
    cloudLocationRole: arn:cloud:iam::123456789012:role/govops-access-grants
    cloudLocationPath: s3://raw-bucket.example.com/
    authenticationType: auto
`;

describe('export --select of a data source whose integration the repository already has, under its own name', () => {
  it('registers it under the name the state gives that integration: the set plans an adoption', async () => {
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    await mkdir(path.join(dir, 'manifests'));
    await writeFile(path.join(dir, 'manifests', 'lake.yaml'), lake);
    const apply = await runGovops(['apply', 'manifests', '--state', 's.json', '--manual-steps', 'trust'], { cwd: dir, env });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    const id = Number((await (await fetch(`${sandbox.url}/integrations`, { headers: { authorization: sandbox.adminToken } })).json() as Array<{ id: string }>)[0]!.id);
    const res = await fetch(`${sandbox.url}/native-s3/handler`, {
      method: 'POST',
      headers: { authorization: sandbox.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'object_store', integrationId: id, dataSources: [{ dataSourceName: 'Raw events', prefix: 's3://raw-bucket.example.com/events/' }] }),
    });
    expect(res.status, await res.text()).toBe(200);

    const exp = await runGovops(['export', '--out', 'manifests', '--select', 'raw-events', '--state', 's.json'], { cwd: dir, env });
    expect(exp.code, exp.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'manifests', 'data-source-raw-events.yaml'), 'utf8')).toContain('integration: lake-raw');
    expect(exp.stderr).not.toContain('which was not exported');

    const plan = await runGovops(['plan', 'manifests', '--state', 's.json', '-o', 'json'], { cwd: dir, env });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const changes = (JSON.parse(plan.stdout) as { changes: Array<{ resourceKind: string; name: string; action: string }> }).changes;
    expect(changes.map((c) => `${c.resourceKind}/${c.name} ${c.action}`).sort()).toEqual(['DataSource/raw-events adopt', 'Integration/lake-raw noop']);
  });
});

describe('export from a service whose data-source records do not name their integration', () => {
  // docs/decisions.md "Reading bodies": a record without integrationId belongs to the object_store integration whose
  // cloudLocationPath holds its prefix. The planner read it so, export did not: every data source was left out
  // ("its integration is not among the live integrations") and the export lost them.
  it('registers each under the integration whose location holds its prefix; plan on the export adopts everything', async () => {
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    await mkdir(path.join(dir, 'manifests'));
    await writeFile(path.join(dir, 'manifests', 'lake.yaml'), lake);
    await writeFile(
      path.join(dir, 'manifests', 'ds.yaml'),
      'apiVersion: govops/v1\nkind: DataSource\nmetadata: { name: events }\nspec:\n  integration: lake-raw\n  dataSourceName: Raw events\n  prefix: s3://raw-bucket.example.com/events/\n',
    );
    const apply = await runGovops(['apply', 'manifests', '--state', 's.json'], { cwd: dir, env });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    const strip = (v: unknown): unknown => (Array.isArray(v) ? v.map(strip) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'integrationId')) : v);
    const proxy = await rewritingProxy(sandbox.url, (req, res) => (req.method === 'GET' && req.path === '/native-s3/handler' ? mapJsonBody(res, strip) : res));
    try {
      const via = { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: sandbox.adminToken };
      const exp = await runGovops(['export', '--out', 'exported'], { cwd: dir, env: via });
      expect(exp.code, exp.stderr).toBe(0);
      expect(exp.stderr).not.toContain('not exported');
      const text = await readFile(path.join(dir, 'exported', 'data-source-raw-events.yaml'), 'utf8');
      expect(text).toContain('integration: raw-bucket');
      expect(text).toContain('prefix: s3://raw-bucket.example.com/events/');
      const plan = await runGovops(['plan', 'exported', '--state', 'fresh.json', '-o', 'json'], { cwd: dir, env: via });
      expect(plan.code, plan.stderr + plan.stdout).toBe(0);
      const changes = (JSON.parse(plan.stdout) as { changes: Array<{ resourceKind: string; name: string; action: string }> }).changes;
      expect(changes.map((c) => `${c.resourceKind}/${c.name} ${c.action}`).sort()).toEqual(['DataSource/raw-events adopt', 'Integration/raw-bucket adopt']);
    } finally {
      await proxy.close();
    }
  });
});
