/**
 * `govops export --secret-env-prefix P`: the variables it names are P + resource + field. Under a prefix whose names
 * are govops' own configuration variables (`GOVOPS_*` outside `GOVOPS_SECRET_*`: `GOVOPS_`, or `GOVOPS_SECRET`
 * without its `_`), every reference it wrote was one no manifest may read: `validate` and `plan` with the same prefix
 * refused the whole export. It is refused before anything is written, naming a prefix that works.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

let sandbox: SandboxHandle;
let dir: string;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-prefix-'));
  const res = await fetch(`${sandbox.url}/integrations`, {
    method: 'POST',
    headers: { authorization: sandbox.adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'sql_analytics', autoBootstrap: false, config: { host: 'sql.example.com', database: 'gov', schema: 's', username: 'u', password: 'hand-set' } }),
  });
  expect(res.status, await res.text()).toBe(200);
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

describe('export --secret-env-prefix', () => {
  it.each(['GOVOPS_', 'GOVOPS_SECRET', 'GOVOPS_MY_'])('%s: refused, nothing written', async (prefix) => {
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const r = await runGovops(['export', '--out', 'out', '--secret-env-prefix', prefix], { cwd: dir, env });
    expect(r.code, r.stdout).toBe(1);
    expect(r.stderr).toContain("govops' own configuration variables");
    expect(await readdir(dir)).toEqual([]);
  });

  it.each(['GOVOPS_SECRET_', 'ACME_SECRET_', 'GOVOPS'])('%s: the export validates under that prefix', async (prefix) => {
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const r = await runGovops(['export', '--out', 'out', '--secret-env-prefix', prefix], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    const v = await runGovops(['validate', 'out', '--strict', '--secret-env-prefix', prefix], { cwd: dir });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});
