/** The suite's build step (test/helpers/build.ts): built when a source is newer than the last good build, else skipped. */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIsFresh, STAMP } from '../helpers/build.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const at = (s: number): Date => new Date(1_700_000_000_000 + s * 1000);

async function project(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'govops-build-'));
  await mkdir(join(dir, 'src', 'cli'), { recursive: true });
  await mkdir(join(dir, 'dist'));
  await mkdir(join(dir, 'schemas'));
  for (const f of ['src/a.ts', 'src/cli/b.ts', 'schemas/manifest.json', 'tsconfig.json']) {
    await writeFile(join(dir, f), '');
    await utimes(join(dir, f), at(0), at(0));
  }
  for (const d of ['src/cli', 'src', 'schemas']) await utimes(join(dir, d), at(0), at(0));
  return dir;
}

async function stamp(root: string, s: number): Promise<void> {
  await writeFile(join(root, STAMP), '');
  await utimes(join(root, STAMP), at(s), at(s));
}

describe('test build freshness', () => {
  it('needs a build without a stamp (never built, or the last build failed)', async () => {
    expect(buildIsFresh(await project())).toBe(false);
  });

  it('is fresh when the stamp is newer than every source', async () => {
    const root = await project();
    await stamp(root, 10);
    expect(buildIsFresh(root)).toBe(true);
  });

  it('is stale after an edit, an added or a removed source, or a tsconfig change', async () => {
    const root = await project();
    await stamp(root, 10);
    await utimes(join(root, 'src/cli/b.ts'), at(20), at(20));
    expect(buildIsFresh(root)).toBe(false);

    await utimes(join(root, 'src/cli/b.ts'), at(0), at(0));
    await unlink(join(root, 'src/cli/b.ts')); // the folder's mtime moves on
    expect(buildIsFresh(root)).toBe(false);

    await utimes(join(root, 'src/cli'), at(0), at(0));
    expect(buildIsFresh(root)).toBe(true);
    await utimes(join(root, 'tsconfig.json'), at(30), at(30));
    expect(buildIsFresh(root)).toBe(false);
  });

  it('is stale after a schema change (the validators are generated from the schemas)', async () => {
    const root = await project();
    await stamp(root, 10);
    await utimes(join(root, 'schemas/manifest.json'), at(20), at(20));
    expect(buildIsFresh(root)).toBe(false);
  });
});

describe('the build', () => {
  it('leaves the CLI bin executable and stamps the build (npm run build and the suite setup alike)', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.scripts.build).toMatch(/node scripts\/build-done\.mjs$/);
    for (const bin of Object.values(pkg.bin)) expect((await stat(bin)).mode & 0o111, bin).toBe(0o111);
    expect(buildIsFresh()).toBe(true);
  });
});

describe('the suite builds what npm run build builds', () => {
  it('runs the steps of package.json\'s build script, the govops command\'s file among them', async () => {
    const { buildSteps } = await import('../helpers/build.js');
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { build: string } };
    const steps = buildSteps(pkg.scripts.build);
    expect(steps[0]).toEqual(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json']);
    expect(steps.map((s) => s[0])).toContain('scripts/build-bin.mjs');
    expect(steps.at(-1)?.[0]).toBe('scripts/build-done.mjs');
    expect(() => buildSteps('tsc && rm -rf dist')).toThrow(/cannot run without npm/);
  });
});
