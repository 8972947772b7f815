/**
 * Installing govops from a clone, for real: every locked package accepts the Node version the README promises
 * (no EBADENGINE), `npm ci` works with NODE_ENV=production (as the Action's install step runs it), and the first
 * `npx govops` after the install starts at once instead of building the project again.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { afterEach, describe, expect, it } from 'vitest';
import { readAction, runBash } from '../helpers/action-runner.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What a clone holds that the install reads (dist/ is not in Git). */
const CLONE = ['package.json', 'package-lock.json', '.npmrc', 'tsconfig.json', 'src', 'schemas', 'scripts'];

let tmp: string | undefined;
afterEach(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
  tmp = undefined;
});

async function clone(extra: string[] = []): Promise<string> {
  tmp = await mkdtemp(path.join(tmpdir(), 'govops-install-'));
  for (const f of [...CLONE, ...extra]) await cp(path.join(ROOT, f), path.join(tmp, f), { recursive: true, preserveTimestamps: true });
  return tmp;
}

/** npm with its own cache (the npx cache starts empty) and nothing but the registry mirror npm is set up with. */
function npmEnv(dir: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { ...process.env, npm_config_cache: path.join(dir, '.npm-cache'), npm_config_update_notifier: 'false', ...extra };
}

describe('installing govops', () => {
  it("every locked package's engines accept the README's minimum Node (package.json engines)", async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const min = semver.minVersion(pkg.engines.node)!.version;
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`Node.js ${min.replace(/\.0$/, '')} or later`);
    const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: unknown }>;
    };
    const refused: string[] = [];
    for (const [where, p] of Object.entries(lock.packages)) {
      const range = (p.engines as { node?: unknown } | undefined)?.node;
      if (typeof range === 'string' && !semver.satisfies(min, range)) refused.push(`${where}@${p.version}: node ${range}`);
    }
    expect(refused).toEqual([]);
  });

  it('every locked package with an install script is reviewed in package.json allowScripts (no npm warning, same under npm 12)', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
    };
    const unreviewed: string[] = [];
    for (const [where, p] of Object.entries(lock.packages)) {
      if (!where || !p.hasInstallScript) continue;
      const name = where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const reviewed = Object.keys(pkg.allowScripts ?? {}).some((k) => k === name || k === `${name}@${p.version}`);
      if (!reviewed) unreviewed.push(`${name}@${p.version}`);
    }
    expect(unreviewed).toEqual([]);
  });

  it("the Action's install step works with NODE_ENV=production (TypeScript, a dev dependency, builds dist/)", async () => {
    const dir = await clone();
    const action = await readAction(path.join(ROOT, 'action.yml'));
    const install = action.runs.steps.find((s) => s.id === 'install')!.run!;
    // npm's own cache (filled by the clone's install), so the packages come from it, not the registry
    const env = { ...process.env, GITHUB_ACTION_PATH: dir, NODE_ENV: 'production', npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };
    const r = await runBash(install, env, dir);
    expect(r.code, r.stderr).toBe(0);
    const v = spawnSync(process.execPath, [path.join(dir, 'dist', 'cli', 'main.js'), '--version'], { encoding: 'utf8' });
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }, 240_000);

  it('plain `NODE_ENV=production npm ci` in a clone installs TypeScript too (.npmrc include=dev)', () => {
    // cheap: what npm would omit, asked without installing
    const r = spawnSync('npm', ['config', 'get', 'include'], { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' }, encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('dev');
  });

  it('the first `npx govops` after the install does not build again: it starts at once', async () => {
    const dir = await clone(['dist']);
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    // as `npm install` leaves it: the build it just did is newer than every source
    expect(spawnSync(process.execPath, ['scripts/build-done.mjs'], { cwd: dir }).status).toBe(0);
    const stamp = path.join(dir, 'dist', '.build-stamp');
    const before = (await stat(stamp)).mtimeMs;
    const r = spawnSync('npx', ['govops', '--version'], { cwd: dir, env: npmEnv(dir, { npm_config_offline: 'true' }), encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect((await stat(stamp)).mtimeMs).toBe(before);
  }, 150_000);
});
