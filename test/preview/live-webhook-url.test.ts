/**
 * A pull request can add a Webhook manifest whose name matches a live webhook the base revision does not have
 * (another team's, one made by hand): the preview then diffs it against that webhook. A live url carrying a
 * credential (`?token=...`, a password in its userinfo: the service shows urls in clear) must not be copied into the
 * comment the pull request's author reads, as for an integration's `connectArgs` (live-credentials.test.ts).
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { git, manifestsBaseRepo } from '../helpers/git.js';

const LIVE_TOKEN = 'live-token-OTHER-TEAM-7171';

const manifest = `apiVersion: govops/v1
kind: Webhook
metadata:
  name: other-hook
spec:
  url: http://127.0.0.1:9/written-by-the-pr
  global: false
  notificationType: [userCreated]
  actionType: triggered
`;

describe('govops preview: a live webhook url carrying a credential is not shown to the pull request', () => {
  let sandbox: SandboxHandle;
  let repo: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    const res = await request(`${sandbox.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        webhooks: [{ name: 'other-hook', url: `http://127.0.0.1:9/hook?token=${LIVE_TOKEN}`, global: false, notificationType: ['userCreated'], actionType: 'triggered' }],
      }),
    });
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { createdWebhooks: unknown[] }).createdWebhooks).toHaveLength(1);
    repo = await manifestsBaseRepo('govops-pr-livehook-');
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
  });

  it('the url is listed as a sensitive change, without the live value', async () => {
    git(repo, 'checkout', '-q', '-B', 'pr', 'main');
    await writeFile(path.join(repo, 'm', 'other.yaml'), manifest);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
    for (const format of ['markdown', 'json']) {
      const r = await runGovops(['preview', 'm', '--base', 'main', '-o', format], {
        cwd: repo,
        env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken },
      });
      expect(r.stdout, r.stderr).toContain('other-hook');
      expect(r.stdout, r.stderr).toContain('url');
      expect(r.stdout + r.stderr).not.toContain(LIVE_TOKEN);
    }
  });
});
