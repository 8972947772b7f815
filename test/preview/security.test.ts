/**
 * `govops preview` of an untrusted pull request: a manifest linked out of the work tree, a secret file
 * linked out of it, govops' own variables and absolute paths are refused with the file named in the
 * comment (exit 1), offline and live; nothing of the link targets or of the operator's variables shows.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { git, initRepo } from '../helpers/git.js';

const OUTSIDE = 'outside-preview-4e3d2c1b';
const OPERATOR = 'operator-api-token-9f8e7d';

const lake = (name: string, ref: string) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://${name}.example.com
    httpPath: /sql/1
    token: ${ref}
`;

describe('govops preview of an untrusted pull request', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  let outside: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-preview-sec-'));
    outside = await mkdtemp(path.join(tmpdir(), 'govops-preview-outside-'));
    await writeFile(path.join(outside, 'shadow'), `root:${OUTSIDE}:0:0\n`);
    await writeFile(path.join(outside, 'token'), OUTSIDE);
    initRepo(repo);
    await mkdir(path.join(repo, 'm', 'secrets'), { recursive: true });
    await writeFile(path.join(repo, 'm', 'ok.yaml'), lake('ok', '{ fromEnv: GOVOPS_SECRET_OK }'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    // The pull request's attacks.
    await symlink(path.join(outside, 'shadow'), path.join(repo, 'm', 'x.yaml'));
    await symlink(path.join(outside, 'token'), path.join(repo, 'm', 'secrets', 'token'));
    await writeFile(path.join(repo, 'm', 'file.yaml'), lake('file', '{ fromFile: secrets/token }'));
    await writeFile(path.join(repo, 'm', 'abs.yaml'), lake('abs', `{ fromFile: ${path.join(outside, 'token')} }`));
    await writeFile(path.join(repo, 'm', 'steal.yaml'), lake('steal', '{ fromEnv: GOVOPS_TOKEN }'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  for (const mode of ['offline', 'live'] as const) {
    it(`${mode}: every attack is an error naming its file, exit 1, nothing leaked`, async () => {
      const env = mode === 'live' ? { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: OPERATOR } : { GOVOPS_URL: undefined, GOVOPS_TOKEN: OPERATOR };
      const r = await runGovops(['preview', 'm', '--base', 'main'], { cwd: repo, env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toMatch(/m\/x\.yaml:1:1.*a symbolic link leading outside/);
      expect(r.stdout).toMatch(/m\/file\.yaml:11:\d+.*secrets\/token is a symbolic link .* leading out of the secrets root/);
      expect(r.stdout).toMatch(/m\/abs\.yaml:11:\d+.*is an absolute path/);
      expect(r.stdout).toMatch(/m\/steal\.yaml:11:\d+.*GOVOPS_TOKEN is one of govops' own configuration variables/);
      expect(r.stdout + r.stderr).not.toContain(OUTSIDE);
      expect(r.stdout + r.stderr).not.toContain(OPERATOR);
    });
  }

  it('a reference CI cannot resolve stays an unknown, one outside the scope is an error', async () => {
    git(repo, 'checkout', '-q', 'main');
    try {
      const ok = await runGovops(['preview', 'm'], { cwd: repo, env: { GOVOPS_URL: undefined, GOVOPS_SECRET_OK: undefined } });
      expect(ok.code, ok.stdout).toBe(0);
      await writeFile(path.join(repo, 'm', 'ok.yaml'), lake('ok', '{ fromEnv: CI_JOB_TOKEN }'));
      const bad = await runGovops(['preview', 'm'], { cwd: repo, env: { GOVOPS_URL: undefined, CI_JOB_TOKEN: OPERATOR } });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/CI_JOB_TOKEN is outside the secret scope/);
      expect(bad.stdout + bad.stderr).not.toContain(OPERATOR);
    } finally {
      git(repo, 'checkout', '-q', '--', '.');
      git(repo, 'checkout', '-q', 'pr');
    }
  });
});

describe('govops preview: a "secret" chosen by the pull request cannot rewrite the comment', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await mkdtemp(path.join(tmpdir(), 'govops-preview-md-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm'), { recursive: true });
    await writeFile(path.join(repo, 'm', 'ok.yaml'), lake('ok', '{ fromEnv: GOVOPS_SECRET_OK }'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    // A literal webhook secret equal to the escaped form of the file name's `QQQ|` (`QQQ\|`): before, the comment's
    // last redaction pass replaced it, escape included, and `![redacted](https:evil.example)` was an image. A second
    // literal, `delete`-like words of the verdict, must not be blanked either.
    const hook = (name: string, secret: string) =>
      `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://hooks.example.com/${name}\n  global: false\n  notificationType: [healthCheckFailed]\n  actionType: triggered\n  secret: ${JSON.stringify(secret)}\n`;
    await writeFile(path.join(repo, 'm', '!QQQ|(https:evil.example).yaml'), hook('hook-one', 'QQQ\\|'));
    await writeFile(path.join(repo, 'm', 'two.yaml'), hook('hook-two', 'added'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
  });
  afterAll(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  for (const output of ['text', 'json'] as const) {
    it(`-o ${output}, stdout and --out: the escapes and govops' own words stay`, async () => {
      const out = path.join(repo, `out.${output}`);
      const env = { GOVOPS_URL: undefined, GOVOPS_SECRET_OK: undefined };
      const r = await runGovops(['preview', 'm', '--base', 'main', '--offline', 'test', '-o', output, '--out', out], { cwd: repo, env });
      const s = await runGovops(['preview', 'm', '--base', 'main', '--offline', 'test', '-o', output], { cwd: repo, env });
      expect(r.code, r.stderr).toBe(2);
      const { readFile } = await import('node:fs/promises');
      for (const text of [await readFile(out, 'utf8'), s.stdout]) {
        const markdown = output === 'json' ? (JSON.parse(text) as { markdown: string }).markdown : text;
        expect(markdown).toContain('m/!QQQ\\|(https:evil.example).yaml');
        expect(markdown).not.toMatch(/\]\(https:evil/);
        expect(markdown).toMatch(/\| added \|/);
      }
    });
  }
});
