/**
 * Manifest authors cannot reach the operator's secrets: each attack of issue #9 tried as an attacker
 * would, through the built CLI (validate, plan) and the loader, refused with a clear error at
 * file:line:col naming the rule and the flag that widens it, and nothing of the target read or shown.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { realpathSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/manifests/loader.js';
import { envRefProblem, isGovopsConfigEnv, secretScopeFrom } from '../../src/manifests/secret-scope.js';
import { resolveAllSecrets } from '../../src/manifests/secrets.js';
import { runGovops } from '../helpers/cli.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tmp(prefix = 'govops-scope-'): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** A lakehouse manifest whose token is the given reference (a YAML flow mapping). */
function lake(ref: string, name = 'lake', host = 'lake.example.com'): string {
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://${host}
    httpPath: /sql/1
    token: ${ref}
`;
}

const OUTSIDE_SECRET = 'outside-secret-0f1e2d3c';

describe('fromEnv is scoped by a prefix', () => {
  it('a variable outside the prefix is a validation error at file:line:col naming the rule and the flag', async () => {
    const d = await tmp();
    await writeFile(join(d, 'lake.yaml'), lake('{ fromEnv: AWS_SECRET_ACCESS_KEY }'));
    const r = await runGovops(['validate', '.'], { cwd: d, env: { AWS_SECRET_ACCESS_KEY: OUTSIDE_SECRET } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^lake\.yaml:11:23: Integration\/lake: spec\.config\.token: fromEnv: AWS_SECRET_ACCESS_KEY is outside the secret scope: manifests may read only variables starting with GOVOPS_SECRET_ .*--secret-env-prefix \/ GOVOPS_SECRET_ENV_PREFIX/m);
    expect(r.stdout + r.stderr).not.toContain(OUTSIDE_SECRET);
    // The operator widens the scope on purpose.
    const widened = await runGovops(['validate', '.', '--secret-env-prefix', 'AWS_'], { cwd: d });
    expect(widened.code, widened.stdout).toBe(0);
    const byEnv = await runGovops(['validate', '.'], { cwd: d, env: { GOVOPS_SECRET_ENV_PREFIX: 'AWS_' } });
    expect(byEnv.code, byEnv.stdout).toBe(0);
  });

  it("govops' own variables are never readable, whatever the prefix", async () => {
    const d = await tmp();
    await writeFile(join(d, 'a.yaml'), lake('{ fromEnv: GOVOPS_TOKEN }', 'a', 'a.example.com'));
    await writeFile(join(d, 'b.yaml'), lake('{ fromEnv: GOVOPS_GIT_TOKEN }', 'b', 'b.example.com'));
    await writeFile(join(d, 'c.yaml'), lake('{ fromEnv: GOVOPS_SECRET_ENV_PREFIX }', 'c', 'c.example.com'));
    for (const prefix of [[], ['--secret-env-prefix', 'GOVOPS_'], ['--secret-env-prefix', 'GOVOPS_SECRET_']]) {
      const r = await runGovops(['validate', '.', ...prefix, '-o', 'json'], { cwd: d });
      expect(r.code).toBe(1);
      const diags = JSON.parse(r.stdout) as Array<{ file: string; message: string }>;
      for (const f of ['a.yaml', 'b.yaml', 'c.yaml']) {
        expect(diags.find((x) => x.file === f)?.message, `${f} ${prefix.join(' ')}`).toMatch(/one of govops' own configuration variables; manifests can never read it/);
      }
    }
    expect(isGovopsConfigEnv('GOVOPS_URL')).toBe(true);
    expect(isGovopsConfigEnv('GOVOPS_SOMETHING_NEW')).toBe(true);
    expect(isGovopsConfigEnv('GOVOPS_SECRET_DB')).toBe(false);
  });

  it('plan refuses before any request, and never sends the value anywhere', async () => {
    const d = await tmp();
    await writeFile(join(d, 'lake.yaml'), lake('{ fromEnv: GOVOPS_TOKEN }'));
    // The URL points nowhere: a refusal must come before any connection attempt.
    const r = await runGovops(['plan', '.'], { cwd: d, env: { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 'the-operator-api-token' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/lake\.yaml:11:23: .*GOVOPS_TOKEN is one of govops' own configuration variables/);
    expect(r.stderr).not.toMatch(/cannot reach the service/);
    expect(r.stdout + r.stderr).not.toContain('the-operator-api-token');
  });

  it('a bad prefix is a usage error naming the flag', async () => {
    expect(() => secretScopeFrom({ secretEnvPrefix: 'A-B' }, {}, '/')).toThrow(/--secret-env-prefix: "A-B"/);
    expect(() => secretScopeFrom({}, { GOVOPS_SECRET_ENV_PREFIX: '9X' }, '/')).toThrow(/GOVOPS_SECRET_ENV_PREFIX/);
    expect(secretScopeFrom({}, {}, '/')).toEqual({ envPrefix: 'GOVOPS_SECRET_' });
    expect(secretScopeFrom({}, { GOVOPS_SECRETS_DIR: 'sec' }, '/work')).toEqual({ envPrefix: 'GOVOPS_SECRET_', dir: '/work/sec' });
  });
});

describe('fromFile is scoped by a secrets root', () => {
  it('absolute paths and ".." are refused at file:line:col, naming --secrets-dir; nothing is read', async () => {
    const d = await tmp();
    await writeFile(join(d, 'a.yaml'), lake('{ fromFile: /proc/self/environ }', 'a', 'a.example.com'));
    await writeFile(join(d, 'b.yaml'), lake('{ fromFile: /etc/passwd }', 'b', 'b.example.com'));
    await writeFile(join(d, 'c.yaml'), lake('{ fromFile: ../outside.txt }', 'c', 'c.example.com'));
    await writeFile(join(d, 'e.yaml'), lake('{ fromFile: secrets/../../outside.txt }', 'e', 'e.example.com'));
    await writeFile(join(d, 'g.yaml'), lake('{ fromFile: .git/config }', 'g', 'g.example.com'));
    const r = await runGovops(['validate', '.', '-o', 'json'], { cwd: d });
    expect(r.code).toBe(1);
    const diags = JSON.parse(r.stdout) as Array<{ file: string; line: number; column: number; message: string }>;
    const by = (f: string) => diags.find((x) => x.file === f)!;
    expect(by('a.yaml')).toMatchObject({ line: 11, column: 24, message: expect.stringMatching(/\/proc\/self\/environ is an absolute path.*--secrets-dir \/ GOVOPS_SECRETS_DIR/) });
    expect(by('b.yaml').message).toMatch(/absolute path/);
    expect(by('c.yaml').message).toMatch(/climbs out with "\.\."/);
    expect(by('e.yaml').message).toMatch(/climbs out with "\.\."/);
    expect(by('g.yaml').message).toMatch(/hidden file or folder/);
    expect(r.stdout).not.toMatch(/root:x:0/);
  });

  it('a secret file that is a symlink out of the root is refused without being read (validate and resolution)', async () => {
    const outside = await tmp('govops-outside-');
    await writeFile(join(outside, 'token.txt'), OUTSIDE_SECRET);
    const d = await tmp();
    await mkdir(join(d, 'secrets'));
    await symlink(join(outside, 'token.txt'), join(d, 'secrets', 'token'));
    await symlink(outside, join(d, 'secrets', 'dir'));
    await writeFile(join(d, 'a.yaml'), lake('{ fromFile: secrets/token }', 'a', 'a.example.com'));
    await writeFile(join(d, 'b.yaml'), lake('{ fromFile: secrets/dir/token.txt }', 'b', 'b.example.com'));
    const v = await runGovops(['validate', '.', '-o', 'json'], { cwd: d });
    expect(v.code).toBe(1);
    const diags = JSON.parse(v.stdout) as Array<{ file: string; message: string }>;
    expect(diags.map((x) => x.file).sort()).toEqual(['a.yaml', 'b.yaml', 'secrets/dir']);
    for (const x of diags.filter((y) => y.file.endsWith('.yaml'))) {
      expect(x.message).toMatch(/symbolic link .* leading out of the secrets root; refused without reading it/);
    }
    // The linked folder itself is not walked either.
    expect(diags.find((x) => x.file === 'secrets/dir')!.message).toMatch(/a symbolic link leading outside/);
    expect(v.stdout + v.stderr).not.toContain(OUTSIDE_SECRET);
    // Resolution refuses too (plan/apply/daemon: the loader's check could be raced by a swapped link).
    const set = await loadManifests(['a.yaml'], { cwd: d });
    const { diagnostics } = resolveAllSecrets(set.manifests, { env: {} });
    expect(diagnostics.some((x) => x.rule === 'secret-scope')).toBe(true);
  });

  it('a folder swapped for a link out of the root between the check and the read: refused, the outside file never read', async () => {
    const outside = await tmp('govops-outside-');
    await writeFile(join(outside, 'token'), OUTSIDE_SECRET);
    const d = await tmp();
    await mkdir(join(d, 'secrets'));
    await writeFile(join(d, 'secrets', 'token'), 'inside-value');
    await writeFile(join(d, 'a.yaml'), lake('{ fromFile: secrets/token }', 'a', 'a.example.com'));
    const set = await loadManifests(['a.yaml'], { cwd: d });
    expect(set.diagnostics).toEqual([]);
    // The race, made deterministic: right after the secret's real path is worked out (inside the root), the author
    // who can write the folder (the directory source's watched folder) swaps `secrets` for a link out of it.
    const realpath = (p: string): string => {
      const real = realpathSync(p);
      if (p.endsWith(join('secrets', 'token'))) {
        renameSync(join(d, 'secrets'), join(d, 'secrets-old'));
        symlinkSync(outside, join(d, 'secrets'));
      }
      return real;
    };
    const { resolved, diagnostics } = resolveAllSecrets(set.manifests, { env: {}, realpath });
    expect(JSON.stringify(resolved)).not.toContain(OUTSIDE_SECRET);
    expect(diagnostics.map((x) => x.rule)).toEqual(['secret-scope']);
    expect(diagnostics[0]!.message).toMatch(/changed while it was read/);
  });

  it('a symlink inside the root into a hidden folder (.git/config) is refused; one to a sibling file is fine', async () => {
    const d = await tmp();
    await mkdir(join(d, '.git'));
    await writeFile(join(d, '.git', 'config'), '[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n');
    await mkdir(join(d, 'secrets'));
    await writeFile(join(d, 'secrets', 'real'), 'fine-value');
    await symlink('../.git/config', join(d, 'secrets', 'cfg'));
    await symlink('real', join(d, 'secrets', 'alias'));
    await writeFile(join(d, 'a.yaml'), lake('{ fromFile: secrets/cfg }', 'a', 'a.example.com'));
    await writeFile(join(d, 'b.yaml'), lake('{ fromFile: secrets/alias }', 'b', 'b.example.com'));
    const set = await loadManifests(['.'], { cwd: d });
    expect(set.diagnostics.map((x) => [x.file, x.rule])).toEqual([['a.yaml', 'secret-scope']]);
  });

  it('--secrets-dir: paths are relative to it, and only it can be read', async () => {
    const secrets = await tmp('govops-secrets-dir-');
    await writeFile(join(secrets, 'lake-token'), 'from-the-secrets-dir\n');
    const d = await tmp();
    await writeFile(join(d, 'lake.yaml'), lake('{ fromFile: lake-token }'));
    const set = await loadManifests(['.'], { cwd: d, secretScope: { envPrefix: 'GOVOPS_SECRET_', dir: secrets } });
    expect(set.diagnostics).toEqual([]);
    const { resolved, diagnostics } = resolveAllSecrets(set.manifests, { env: {}, scope: { envPrefix: 'GOVOPS_SECRET_', dir: secrets } });
    expect(diagnostics).toEqual([]);
    expect((resolved[0]!.manifest.spec as unknown as { config: { token: string } }).config.token).toBe('from-the-secrets-dir');
    // Without it the file is looked for next to the manifest, and is not there.
    const { diagnostics: missing } = resolveAllSecrets(set.manifests, { env: {} });
    expect(missing[0]!.message).toMatch(/cannot read secret file .*lake-token \(ENOENT\)/);
    // An absolute path stays refused even with a secrets folder.
    await writeFile(join(d, 'lake.yaml'), lake(`{ fromFile: ${join(secrets, 'lake-token')} }`));
    const abs = await loadManifests(['.'], { cwd: d, secretScope: { envPrefix: 'GOVOPS_SECRET_', dir: secrets } });
    expect(abs.diagnostics[0]!.message).toMatch(/absolute path; secret files are read only by a relative path inside the secrets folder/);
  });
});

describe("govops' own files are never a secret", () => {
  it('a fromFile naming the state file, its journal or its lock in the manifests\' folder (`--dir DIR --state DIR/state.json`) is refused, nothing of it sent', async () => {
    const { acquireStateLock, newState, saveState } = await import('../../src/state/store.js');
    const d = await tmp();
    const statePath = join(d, 'state.json');
    const lock = await acquireStateLock(statePath);
    try {
      const state = newState();
      await saveState(statePath, state);
      await writeFile(join(d, 'state.json.journal'), `${JSON.stringify({ base: 'a'.repeat(64) })}\n{"op":"put"}\n`);
      await writeFile(join(d, 'a.yaml'), lake('{ fromFile: state.json }', 'a', 'a.example.com'));
      await writeFile(join(d, 'b.yaml'), lake('{ fromFile: state.json.journal }', 'b', 'b.example.com'));
      await writeFile(join(d, 'c.yaml'), lake('{ fromFile: state.json.lock }', 'c', 'c.example.com'));
      // the stream of a render (`kubectl kustomize … | govops plan - --state prod-state.json`) reads from the folder too
      const set = await loadManifests(['a.yaml', 'b.yaml', 'c.yaml'], { cwd: d, stateFiles: [statePath] });
      expect(set.diagnostics).toEqual([]);
      const { resolved, diagnostics } = resolveAllSecrets(set.manifests, { env: {} });
      expect(JSON.stringify(resolved)).not.toContain(state.fingerprintKey);
      expect(JSON.stringify(resolved)).not.toContain('a'.repeat(64));
      expect(JSON.stringify(resolved)).not.toContain(lock.info.token);
      expect(diagnostics.map((x) => [x.file, x.rule])).toEqual([
        ['a.yaml', 'secret-scope'],
        ['b.yaml', 'secret-scope'],
        ['c.yaml', 'secret-scope'],
      ]);
      for (const x of diagnostics) expect(x.message).toMatch(/govops' own state .*manifests can never read it/);
    } finally {
      await lock.release();
    }
  });
});

describe("govops' own credentials are never a secret", () => {
  it('a fromFile naming the --token-file a CI job wrote beside the manifests is refused: the API token is never sent', async () => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    try {
      const d = await tmp();
      // `echo "$GOVOPS_API_TOKEN" > token.txt` in the checkout, then `govops apply . --token-file token.txt`
      await writeFile(join(d, 'token.txt'), `${sandbox.adminToken}\n`);
      await writeFile(join(d, 'lake.yaml'), lake('{ fromFile: token.txt }', 'lake', 'attacker.example.com'));
      sandbox.clearRequests();
      const r = await runGovops(['apply', '.', '--token-file', 'token.txt'], { cwd: d, env: { GOVOPS_URL: sandbox.url } });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/lake\.yaml:\d+:\d+: .*token\.txt holds one of govops' own credentials of this run/);
      expect(sandbox.requests().filter((q) => q.method !== 'GET')).toEqual([]);
      // GOVOPS_TOKEN is the same credential, wherever it was read from
      const env = await runGovops(['plan', '.'], { cwd: d, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });
      expect(env.code).toBe(1);
      expect(env.stdout + env.stderr).toMatch(/holds one of govops' own credentials/);
    } finally {
      await sandbox.close();
    }
  });

  it('a file that holds the API token among other lines (an env file, a JSON credentials file a CI job wrote) is refused too', async () => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    try {
      const d = await tmp();
      // `env | grep ^GOVOPS_ > ci.env`, or a credentials file for another tool, in the checkout
      await writeFile(join(d, 'ci.env'), `GOVOPS_URL=${sandbox.url}\nGOVOPS_TOKEN=${sandbox.adminToken}\n`);
      await writeFile(join(d, 'creds.json'), JSON.stringify({ url: sandbox.url, token: sandbox.adminToken }));
      for (const file of ['ci.env', 'creds.json']) {
        await writeFile(join(d, 'lake.yaml'), lake(`{ fromFile: ${file} }`, 'lake', 'attacker.example.com'));
        sandbox.clearRequests();
        const r = await runGovops(['apply', '.'], { cwd: d, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });
        expect(r.code, file).toBe(1);
        expect(r.stdout + r.stderr, file).toMatch(new RegExp(`lake\\.yaml:\\d+:\\d+: .*${file.replace('.', '\\.')} holds one of govops' own credentials of this run`));
        expect(sandbox.requests().filter((q) => q.method !== 'GET'), file).toEqual([]);
      }
      // a secret that merely shares a few characters with it is a secret
      await writeFile(join(d, 'part.txt'), `${sandbox.adminToken.slice(0, 8)}-mine\n`);
      await writeFile(join(d, 'lake.yaml'), lake('{ fromFile: part.txt }'));
      const plan = await runGovops(['plan', '.'], { cwd: d, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });
      expect(plan.stdout + plan.stderr).not.toMatch(/own credentials/);
    } finally {
      await sandbox.close();
    }
  });

  it('a fromEnv naming an in-scope variable that holds the API token (a CI job exporting it under the wider prefix too) is refused', async () => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    try {
      const d = await tmp();
      // the operator widened the scope (`--secret-env-prefix CI_`); the CI exports the API token as CI_GOVOPS_TOKEN too
      await writeFile(join(d, 'lake.yaml'), lake('{ fromEnv: CI_GOVOPS_TOKEN }', 'lake', 'attacker.example.com'));
      sandbox.clearRequests();
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, CI_GOVOPS_TOKEN: sandbox.adminToken };
      const r = await runGovops(['apply', '.', '--secret-env-prefix', 'CI_'], { cwd: d, env });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/lake\.yaml:\d+:\d+: .*CI_GOVOPS_TOKEN holds one of govops' own credentials of this run/);
      expect(sandbox.requests().filter((q) => q.method !== 'GET')).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});

describe('manifest discovery never leaves the scanned root', () => {
  it('a manifest that is a symlink out of the folder is an error naming it; its target is never read nor applied', async () => {
    const outside = await tmp('govops-outside-');
    await writeFile(join(outside, 'shadow'), `root:${OUTSIDE_SECRET}:19000:0:99999:7:::\n`);
    await writeFile(join(outside, 'valid.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }', 'smuggled', 'smuggled.example.com'));
    const d = await tmp();
    await mkdir(join(d, 'manifests'));
    await symlink(join(outside, 'shadow'), join(d, 'manifests', 'x.yaml'));
    await symlink(join(outside, 'valid.yaml'), join(d, 'manifests', 'y.yaml'));
    await symlink(outside, join(d, 'manifests', 'linked-dir'));
    await symlink('../../../nowhere/z.yaml', join(d, 'manifests', 'z.yaml'));
    await writeFile(join(d, 'manifests', 'ok.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }'));
    const r = await runGovops(['validate', 'manifests', '-o', 'json'], { cwd: d });
    expect(r.code).toBe(1);
    const diags = JSON.parse(r.stdout) as Array<{ file: string; message: string }>;
    expect(diags.map((x) => x.file).sort()).toEqual(['manifests/linked-dir', 'manifests/x.yaml', 'manifests/y.yaml', 'manifests/z.yaml']);
    for (const x of diags) expect(x.message).toMatch(/a symbolic link leading outside .*: refused, its target is not read/);
    expect(r.stdout + r.stderr).not.toContain(OUTSIDE_SECRET);
    expect(r.stdout + r.stderr).not.toContain('smuggled');
    expect(r.stderr).toMatch(/1 valid manifest/);
  });

  it('a folder named on the command line that is a link out of the current folder is refused', async () => {
    const outside = await tmp('govops-outside-');
    await writeFile(join(outside, 'valid.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }', 'smuggled'));
    const d = await tmp();
    await symlink(outside, join(d, 'manifests'));
    const r = await runGovops(['validate', 'manifests'], { cwd: d });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^manifests:1:1: a symbolic link leading outside/m);
    expect(r.stdout).not.toContain('smuggled');
  });

  it('links inside the folder are followed', async () => {
    const d = await tmp();
    await mkdir(join(d, 'shared'));
    await writeFile(join(d, 'shared', 'lake.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }'));
    await symlink('shared/lake.yaml', join(d, 'lake-link.yaml'));
    await writeFile(join(d, '.govopsignore'), 'shared/\n');
    const set = await loadManifests(['.'], { cwd: d });
    expect(set.diagnostics).toEqual([]);
    expect(set.manifests.map((m) => m.source.file)).toEqual(['lake-link.yaml']);
  });

  it('a Git submodule (declared in .gitmodules, or a nested .git) is reported, unless listed in .govopsignore', async () => {
    const d = await tmp();
    await writeFile(join(d, '.gitmodules'), '[submodule "vendor"]\n\tpath = vendor/shared\n\turl = https://example.com/x.git\n');
    await mkdir(join(d, 'vendor', 'shared'), { recursive: true });
    await mkdir(join(d, 'nested'));
    await writeFile(join(d, 'nested', '.git'), 'gitdir: ../.git/modules/nested\n');
    await writeFile(join(d, 'nested', 'n.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }', 'nested'));
    const r = await runGovops(['validate', '.', '-o', 'json'], { cwd: d });
    expect(r.code).toBe(1);
    const diags = JSON.parse(r.stdout) as Array<{ file: string; message: string }>;
    expect(diags.map((x) => x.file).sort()).toEqual(['nested', 'vendor/shared']);
    for (const x of diags) expect(x.message).toMatch(/a Git submodule: govops does not read submodules/);
    await writeFile(join(d, '.govopsignore'), 'vendor/shared/\nnested/\n');
    const ignored = await runGovops(['validate', '.'], { cwd: d });
    expect(ignored.code, ignored.stdout).toBe(0);
  });

  it('a .gitmodules or .govopsignore larger than 1 MiB is an error at that file, not read (a pull request could add one of any size)', async () => {
    const d = await tmp();
    await mkdir(join(d, 'team'));
    await writeFile(join(d, '.gitmodules'), `[submodule "v"]\n\tpath = v\n${'#'.repeat(1024 * 1024)}\n`);
    await writeFile(join(d, 'team', '.govopsignore'), `${'# x\n'.repeat(300_000)}`);
    await writeFile(join(d, 'team', 'lake.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }'));
    const set = await loadManifests(['.'], { cwd: d });
    expect(set.diagnostics.map((x) => [x.file, x.severity, x.message.slice(0, 40)])).toEqual([
      ['.gitmodules', 'error', 'larger than 1048576 bytes (1 MiB): not r'],
      [join('team', '.govopsignore'), 'error', 'larger than 1048576 bytes (1 MiB): not r'],
    ]);
  });
});

describe('snapshots never hold a secret file', () => {
  it('the directory source never holds a file whole: past 1 MiB it keeps one byte more, and the loader refuses the file by name', async () => {
    const { readTree, writeSnapshot } = await import('../../src/sources/snapshot.js');
    const d = await tmp();
    await writeFile(join(d, 'lake.yaml'), lake('{ fromEnv: GOVOPS_SECRET_X }'));
    await writeFile(join(d, 'big.yaml'), `# ${'x'.repeat(3 * 1024 * 1024)}\n`);
    const set = await readTree(d);
    expect(set.files.get('big.yaml')!.length).toBe(1024 * 1024 + 1);
    expect(set.files.get('lake.yaml')!.toString()).toBe(lake('{ fromEnv: GOVOPS_SECRET_X }'));
    const out = join(await tmp('govops-snap-'), 'snap');
    await writeSnapshot(out, set);
    const loaded = await loadManifests(['.'], { cwd: out });
    expect(loaded.diagnostics.map((x) => [x.file, x.message.slice(0, 24)])).toEqual([['big.yaml', 'file is larger than 1048']]);
  });

  it('the directory source copies manifests, .govopsignore and links only', async () => {
    const { readTree, writeSnapshot } = await import('../../src/sources/snapshot.js');
    const d = await tmp();
    await mkdir(join(d, 'secrets'));
    await writeFile(join(d, 'secrets', 'admin-password'), OUTSIDE_SECRET);
    await writeFile(join(d, 'token.txt'), OUTSIDE_SECRET);
    await writeFile(join(d, 'lake.yaml'), lake('{ fromFile: secrets/admin-password }'));
    await writeFile(join(d, '.govopsignore'), '# none\n');
    const set = await readTree(d);
    expect([...set.files.keys()].sort()).toEqual(['.govopsignore', 'lake.yaml']);
    const out = join(await tmp('govops-snap-'), 'snap');
    await writeSnapshot(out, set);
    expect(await readFile(join(out, 'lake.yaml'), 'utf8')).toContain('fromFile');
    await expect(readFile(join(out, 'secrets', 'admin-password'))).rejects.toThrow();
  });
});

describe("the hint for a reference to govops' own variable", () => {
  it('names the default prefix when the scope is one that holds govops’ own variables (GOVOPS_), else the scope', () => {
    expect(envRefProblem('GOVOPS_TOKEN', { envPrefix: 'GOVOPS_' })).toMatch(/name a variable starting with GOVOPS_SECRET_ instead/);
    expect(envRefProblem('GOVOPS_TOKEN', { envPrefix: 'APP_' })).toMatch(/name a variable starting with APP_ instead/);
  });
});
