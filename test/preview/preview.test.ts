/**
 * `govops preview` end to end: a real git repository (base commit on main, PR commit on a branch),
 * the sandbox over HTTP, the real CLI. Live and offline previews, unknown secrets, invalid manifests,
 * the marker, the JSON envelope, exit codes, and no secret value in any output.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops, type CliResult } from '../helpers/cli.js';

const SECRETS = {
  GOVOPS_SECRET_LAKE_TOKEN: 'lake-SECRET-tok-7171',
  GOVOPS_SECRET_HOOK_SECRET: 'hook-SECRET-sig-8282',
  LITERAL: 'literal-SECRET-9393',
  // a reference in a field the service returns in clear
  GOVOPS_SECRET_PATH2: '/sql/x-SECRET-path-5151',
};
const MARKER = '<!-- govops-preview -->';

const lake = (httpPath: string) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: lake
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://lake.example.com
    httpPath: ${httpPath}
    token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN }
`;
/** The http path comes from a secret reference: the service shows it in clear, so it is compared with live. */
const LAKE2 = lake('{ fromEnv: GOVOPS_SECRET_PATH2 }').replace('name: lake', 'name: lake2').replace('lake.example.com', 'lake2.example.com');
const hook = (name: string, secret = '{ fromEnv: GOVOPS_SECRET_HOOK_SECRET }') => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: http://127.0.0.1:9/${name}
  global: false
  notificationType: [modelCreated]
  actionType: triggered
  secret: ${secret}
`;
const OLD = `apiVersion: govops/v1
kind: Integration
metadata:
  name: old
spec:
  type: distributed_sql
`;
const BAD = `apiVersion: govops/v1
kind: Integration
metadata:
  name: bad
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://bad.example.com
    httpPath: /p
    tokn: x
`;

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((res) => srv.close(() => res()));
  return port;
}

describe('govops preview', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  let plain: string;
  const outputs: string[] = [];
  const live = () => ({ GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken });
  /** Run in the repo; no secrets in the environment unless given. */
  const run = async (args: string[], env: Record<string, string | undefined> = {}, cwd = repo): Promise<CliResult> => {
    const r = await runGovops(['preview', ...args], {
      cwd,
      env: { GOVOPS_URL: undefined, GOVOPS_TOKEN: undefined, GOVOPS_SECRET_LAKE_TOKEN: undefined, GOVOPS_SECRET_HOOK_SECRET: undefined, GOVOPS_SECRET_PATH2: undefined, ...env },
    });
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  const write = (file: string, text: string) => writeFile(path.join(repo, 'm', file), text);

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-preview-test-'));
    plain = await mkdtemp(path.join(tmpdir(), 'govops-preview-plain-'));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 'ci@example.com');
    git(repo, 'config', 'user.name', 'ci');
    await mkdir(path.join(repo, 'm'));
    await write('lake.yaml', lake('/sql/1'));
    await write('hook.yaml', hook('hook'));
    await write('old.yaml', OLD);
    await write('lake2.yaml', LAKE2);
    await write('lit.yaml', hook('lit', 'literal-SECRET-9393'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    // the base is live (applied with the real secrets)
    const applied = await runGovops(['apply', 'm'], { cwd: repo, env: { ...live(), ...SECRETS } });
    expect(applied.code, applied.stderr).toBe(0);
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(plain, { recursive: true, force: true });
  });

  it('live, no secrets available, nothing changed: exit 0, secrets listed as not checked', async () => {
    sandbox.clearRequests();
    const r = await run(['m'], live());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(MARKER);
    expect(r.stdout).toContain(`**Revision** \`${git(repo, 'rev-parse', '--short', 'HEAD')}\``);
    expect(r.stdout).toContain('Compared with** the live service');
    expect(r.stdout).toMatch(/\| Integration\/lake \| `config.token` \| \(sensitive, not checked\) \| fromEnv: GOVOPS_SECRET_LAKE_TOKEN \|/);
    expect(r.stdout).toMatch(/\| Webhook\/hook \| `secret` \| \(sensitive, not checked\) \| fromEnv: GOVOPS_SECRET_HOOK_SECRET \|/);
    expect(r.stdout).toMatch(/\| Integration\/lake2 \| `config.httpPath` \| \(sensitive, not checked\) \| fromEnv: GOVOPS_SECRET_PATH2 \|/);
    expect(r.stdout).toContain('secret rotation cannot be previewed');
    expect(r.stdout).toContain('No changes: the service matches the manifests.');
    // read-only: only the two list calls
    expect(sandbox.requests().map((q) => `${q.method} ${q.path}`).sort()).toEqual(['GET /integrations', 'GET /webhooks']);
  });

  describe('on a pull-request commit', () => {
    beforeAll(async () => {
      git(repo, 'checkout', '-q', '-b', 'pr');
      await write('lake.yaml', lake('/sql/2'));
      await write('hook2.yaml', hook('hook2'));
      await rm(path.join(repo, 'm', 'old.yaml'));
      await writeFile(path.join(repo, 'README.md'), 'not a manifest\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'pr');
    });

    it('live with --base: changed files, the plan; exit 2', async () => {
      const r = await run(['m', '--base', 'main', '--prune'], live());
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout.startsWith(`${MARKER}\n`)).toBe(true);
      const mb = git(repo, 'merge-base', 'HEAD', 'main').slice(0, 7);
      expect(r.stdout).toContain(`**Base** \`main\` (merge-base \`${mb}\`)`);
      expect(r.stdout).toMatch(/\| added \| m\/hook2\.yaml \|/);
      expect(r.stdout).toMatch(/\| modified \| m\/lake\.yaml \|/);
      expect(r.stdout).toMatch(/\| deleted \| m\/old\.yaml \|/);
      expect(r.stdout).not.toContain('README.md');
      expect(r.stdout).toMatch(/\| `~` \| Integration\/lake \| lakehouse \| will be updated in place/);
      expect(r.stdout).toMatch(/\| `\+` \| Webhook\/hook2 \|/);
      expect(r.stdout).toMatch(/\| `-` \| Integration\/old \| distributed_sql \|/);
      expect(r.stdout).toContain('~ config.httpPath: "/sql/1" -> "/sql/2"');
      // the unchanged webhook with an unknown secret is not a change
      expect(r.stdout).not.toMatch(/\| `[^`]*` \| Webhook\/hook \|/);
      expect(r.stdout).toMatch(/\| Webhook\/hook \| `secret` \| \(sensitive, not checked\) \|/);
      expect(r.stdout).toContain('Plan: 1 to create, 1 to update, 0 to replace, 1 to delete, 0 to adopt.');
    });

    it('with the secrets available, a rotated secret is a change (never shown)', async () => {
      const r = await run(['m'], { ...live(), ...SECRETS, GOVOPS_SECRET_HOOK_SECRET: 'hook-SECRET-rotated-4646', GOVOPS_SECRET_PATH2: '/sql/x-SECRET-path-rotated' });
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/\| `~` \| Integration\/lake2 \| lakehouse \| will be updated in place/);
      expect(r.stdout).toContain('~ config.httpPath = (sensitive)');
      expect(r.stdout).not.toContain('Sensitive values not checked');
      expect(r.stdout).toMatch(/\| `-\/\+` \| Webhook\/hook \|/);
      expect(r.stdout).toContain('~ secret = (sensitive)   # forces replacement');
    });

    it('-o json: an envelope with the markdown and the plan; --out writes a file', async () => {
      const out = path.join(repo, '..', `${path.basename(repo)}-preview.json`);
      const r = await run(['m', '--base', 'main', '-o', 'json', '--out', out], live());
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const doc = JSON.parse(await readFile(out, 'utf8'));
      outputs.push(JSON.stringify(doc));
      await rm(out);
      expect(doc).toMatchObject({ formatVersion: 1, marker: MARKER, mode: 'live', valid: true, changed: true, exitCode: 2 });
      expect(doc.markdown.startsWith(MARKER)).toBe(true);
      expect(doc.plan.summary).toMatchObject({ create: 1, update: 1 });
      expect(doc.base.files.map((f: { status: string; file: string }) => `${f.status} ${f.file}`)).toEqual([
        'A m/hook2.yaml',
        'M m/lake.yaml',
        'D m/old.yaml',
      ]);
      expect(doc.unknownSecrets.map((u: { name: string; path: string }) => `${u.name}:${u.path}`)).toEqual([
        'lake:config.token',
        'lake2:config.httpPath',
        'lake2:config.token',
        'hook:secret',
        'hook2:secret',
      ]);
    });

    it('offline (no URL): manifest-level diff against the base, clearly labelled; exit 2', async () => {
      const r = await run(['m', '--base', 'main']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout.startsWith(`${MARKER}\n`)).toBe(true);
      expect(r.stdout).toContain('**Live state was not consulted:** no service URL given');
      expect(r.stdout).toContain('Compared with** manifests only (offline)');
      expect(r.stdout).toMatch(/\| `~` \| Integration\/lake \| lakehouse \| changed \|/);
      expect(r.stdout).toMatch(/\| `\+` \| Webhook\/hook2 \| {2}\| added \|/);
      expect(r.stdout).toMatch(/\| `-` \| Integration\/old \| distributed_sql \| removed \|/);
      expect(r.stdout).toContain('~ spec.config.httpPath: "/sql/1" -> "/sql/2"');
      expect(r.stdout).toContain('**Manifests: 1 added, 1 changed, 1 removed.**');
      expect(r.stderr).toMatch(/warning: live state not consulted/);
    });

    it('offline (service unreachable), from a subfolder: same diff; --require-live makes it exit 1', async () => {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const env = { GOVOPS_URL: url, GOVOPS_TOKEN: 'x' };
      const r = await run(['.', '--base', 'main', '--retries', '0'], env, path.join(repo, 'm'));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toContain('**Live state was not consulted:** cannot reach the service');
      expect(r.stdout).toMatch(/\| modified \| m\/lake\.yaml \|/);
      expect(r.stdout).toContain('~ spec.config.httpPath: "/sql/1" -> "/sql/2"');
      const strict = await run(['.', '--base', 'main', '--retries', '0', '--require-live'], env, path.join(repo, 'm'));
      expect(strict.code).toBe(1);
      expect(strict.stdout).toContain(MARKER);
      expect(strict.stdout).toContain('**Preview failed:** live state not consulted');
    });

    it('offline: a changed literal secret is shown as (sensitive), without values', async () => {
      await write('lit.yaml', hook('lit', 'literal-SECRET-9393-changed'));
      try {
        const r = await run(['m', '--base', 'main']);
        expect(r.code).toBe(2);
        expect(r.stdout).toMatch(/\| modified \| m\/lit\.yaml \|/);
        expect(r.stdout).toMatch(/\| `~` \| Webhook\/lit \| {2}\| changed \|/);
        expect(r.stdout).toContain('~ spec.secret = (sensitive)');
      } finally {
        await write('lit.yaml', hook('lit', 'literal-SECRET-9393'));
      }
    });

    it('an invalid manifest: the comment says why (file:line:col), exit 1, nothing planned', async () => {
      await write('bad.yaml', BAD);
      try {
        sandbox.clearRequests();
        const r = await run(['m', '--base', 'main'], live());
        expect(r.code).toBe(1);
        expect(r.stdout.startsWith(`${MARKER}\n`)).toBe(true);
        expect(r.stdout).toContain('**Validation failed:**');
        expect(r.stdout).toMatch(/#### Validation failed\n\n```text\nm\/bad\.yaml:\d+:\d+: Integration\/bad: /);
        expect(r.stdout).toContain('_No plan was made._');
        expect(r.stdout).not.toContain('Plan against the live service');
        expect(r.stderr).toMatch(/error: invalid manifests/);
        expect(sandbox.requests()).toEqual([]);
      } finally {
        await rm(path.join(repo, 'm', 'bad.yaml'));
      }
    });

    it('an unknown base ref is an error (exit 1) explained in the comment', async () => {
      const r = await run(['m', '--base', 'no-such-branch']);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(MARKER);
      expect(r.stdout).toMatch(/\*\*Preview failed:\*\* --base: unknown revision "no-such-branch"/);
    });
  });

  it('outside a git work tree: offline, resources listed, exit 0; --base is an error', async () => {
    await writeFile(path.join(plain, 'hook.yaml'), hook('solo'));
    const r = await run([], {}, plain);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('**Revision** (not a git work tree)');
    expect(r.stdout).toMatch(/\| Webhook\/solo \| hook\.yaml \|/);
    expect(r.stdout).toContain('no base given');
    const b = await run(['--base', 'main'], {}, plain);
    expect(b.code).toBe(1);
    expect(b.stdout).toContain('--base needs a git work tree');
  });

  it('no secret value in any output', () => {
    const all = outputs.join('\n');
    expect(all.length).toBeGreaterThan(1000);
    for (const v of [...Object.values(SECRETS), '/sql/x-SECRET-path-rotated', 'hook-SECRET-rotated-4646', 'literal-SECRET-9393-changed']) expect(all).not.toContain(v);
    expect(all).not.toContain('-SECRET-');
  });
});
