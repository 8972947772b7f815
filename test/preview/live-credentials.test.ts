/**
 * A pull request can add a manifest that matches, by natural key, a live integration the base revision does not
 * have (another team's, one made by hand): the preview then diffs it against that live integration. A live value
 * the service shows in clear but that carries a credential (an ODBC `connectArgs` with `PWD=`) must not be copied
 * into the comment the pull request's author reads.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { git, manifestsBaseRepo } from '../helpers/git.js';

const LIVE_PASSWORD = 'hunter2-OTHER-TEAM-6363';

const other = (connectArgs: string) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: other
spec:
  type: sql_analytics
  autoBootstrap: false
  config:
    host: other.example.com
    database: d
    schema: s
    username: u
    password: written-by-the-pr
${connectArgs}`;

describe('govops preview: a live value carrying a credential is not shown to the pull request', () => {
  let sandbox: SandboxHandle;
  let repo: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    const res = await request(`${sandbox.url}/integrations`, {
      method: 'POST',
      headers: { authorization: sandbox.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'sql_analytics',
        autoBootstrap: false,
        config: { host: 'other.example.com', database: 'd', schema: 's', username: 'u', password: 'other-team-pw', connectArgs: `Server=other;PWD=${LIVE_PASSWORD}` },
      }),
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    repo = await manifestsBaseRepo('govops-pr-livecred-');
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
  });

  const cases = [
    { name: 'a changed value', connectArgs: '    connectArgs: "Server=other"\n' },
    { name: 'a removed field', connectArgs: '' },
  ];
  for (const c of cases) {
    it(`${c.name}: listed as a sensitive change, without the live value`, async () => {
      git(repo, 'checkout', '-q', '-B', `pr-${cases.indexOf(c)}`, 'main');
      await writeFile(path.join(repo, 'm', 'other.yaml'), other(c.connectArgs));
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'pr');
      for (const format of ['markdown', 'json']) {
        const r = await runGovops(['preview', 'm', '--base', 'main', '--manual-steps', 'trust', '-o', format], {
          cwd: repo,
          env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken },
        });
        expect(r.stdout, r.stderr).toContain('config.connectArgs');
        expect(r.stdout + r.stderr).not.toContain(LIVE_PASSWORD);
      }
    });
  }
});
