/**
 * Export of data sources from a service whose records do not name their integration, where one object_store
 * integration's location lies inside another's. A record is attributed as the planner attributes it: by govops'
 * state when it records the data source (its identity names the integration), else by the longest location holding
 * its prefix. Before, export used the location alone: re-exported with the state that created them, a data source of
 * the outer integration under the inner one's location was written under the inner integration, and the plan of
 * the export (with that state) moved it.
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
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-nested-'));
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const store = (name: string, bucket: string, location: string): string => `apiVersion: govops/v1
kind: Integration
metadata: { name: ${name} }
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: ${bucket}
    cloudAccountId: "123456789012"
    cloudRegion: us-east-1
    cloudLocationRole: arn:cloud:iam::123456789012:role/govops-access-grants
    cloudLocationPath: ${location}
    authenticationType: auto
`;

describe('export --state of a data source under a location nested in another integration\'s', () => {
  it('registers it under the integration the state records: the plan of the export changes nothing', async () => {
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    await mkdir(path.join(dir, 'manifests'));
    await writeFile(path.join(dir, 'manifests', 'outer.yaml'), store('raw-bucket', 'raw-bucket', 's3://raw-bucket.example.com/'));
    await writeFile(path.join(dir, 'manifests', 'inner.yaml'), store('inner-bucket', 'inner-bucket', 's3://raw-bucket.example.com/inner/'));
    await writeFile(
      path.join(dir, 'manifests', 'ds.yaml'),
      'apiVersion: govops/v1\nkind: DataSource\nmetadata: { name: raw-events }\nspec:\n  integration: raw-bucket\n  dataSourceName: Raw events\n  prefix: s3://raw-bucket.example.com/inner/events/\n',
    );
    const apply = await runGovops(['apply', 'manifests', '--state', 's.json', '--manual-steps', 'trust'], { cwd: dir, env });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    const strip = (v: unknown): unknown => (Array.isArray(v) ? v.map(strip) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'integrationId')) : v);
    const proxy = await rewritingProxy(sandbox.url, (req, res) => (req.method === 'GET' && req.path === '/native-s3/handler' ? mapJsonBody(res, strip) : res));
    try {
      const via = { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: sandbox.adminToken };
      // the planner already reads the record as the outer integration's (the state says so)
      const before = await runGovops(['plan', 'manifests', '--state', 's.json', '--detailed-exitcode'], { cwd: dir, env: via });
      expect(before.code, before.stderr + before.stdout).toBe(0);
      const exp = await runGovops(['export', '--out', 'exported', '--state', 's.json'], { cwd: dir, env: via });
      expect(exp.code, exp.stderr).toBe(0);
      expect(await readFile(path.join(dir, 'exported', 'data-source-raw-events.yaml'), 'utf8')).toContain('integration: raw-bucket');
      const plan = await runGovops(['plan', 'exported', '--state', 's.json', '-o', 'json'], { cwd: dir, env: via });
      expect(plan.code, plan.stderr + plan.stdout).toBe(0);
      const changes = (JSON.parse(plan.stdout) as { changes: Array<{ resourceKind: string; name: string; action: string }> }).changes;
      expect(changes.map((c) => `${c.resourceKind}/${c.name} ${c.action}`).sort()).toEqual(['DataSource/raw-events noop', 'Integration/inner-bucket noop', 'Integration/raw-bucket noop']);
    } finally {
      await proxy.close();
    }
  });
});
