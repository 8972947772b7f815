/** The Git revision recorded by CLI plan/apply: HEAD of the manifests' work tree, `-dirty` on uncommitted manifest changes. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gitRevision, isManifestPath, revisionFor, statusPaths } from '../../src/reconcile/revision.js';
import { harness, type Harness } from '../apply/harness.js';
import { lakeManifest } from '../apply/inproc.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();

describe('revision helpers', () => {
  it('reads both paths of a rename from porcelain -z output; manifest files are yaml and .govopsignore', () => {
    expect(statusPaths(' M a.yaml\0R  new.yml\0old.yml\0?? .govops/state.json\0')).toEqual(['a.yaml', 'new.yml', 'old.yml', '.govops/state.json']);
    expect(['a.yaml', 'b.YML', 'x/.govopsignore'].every(isManifestPath)).toBe(true);
    expect(['.govops/state.json', 'secret.txt', 'yaml'].some(isManifestPath)).toBe(false);
  });
});

describe('gitRevision (real git repositories)', () => {
  const dirs: string[] = [];
  const tmp = async () => {
    const d = await mkdtemp(path.join(tmpdir(), 'govops-rev-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it('unknown outside a work tree and before the first commit', async () => {
    const d = await tmp();
    await writeFile(path.join(d, 'a.yaml'), 'x: 1\n');
    expect(await gitRevision(d, ['.'])).toBeUndefined();
    git(d, 'init', '-q');
    expect(await gitRevision(d, ['.'])).toBeUndefined();
  });

  it('HEAD when clean; -dirty for a changed, new or deleted manifest; not for other or ignored files', async () => {
    const d = await tmp();
    await mkdir(path.join(d, 'm'));
    await writeFile(path.join(d, 'm', 'a.yaml'), 'x: 1\n');
    await writeFile(path.join(d, '.gitignore'), 'm/ignored.yaml\n');
    git(d, 'init', '-q');
    git(d, 'add', '.');
    git(d, 'commit', '-qm', 'one');
    const head = git(d, 'rev-parse', 'HEAD');
    expect(await gitRevision(d, ['m'])).toBe(head);
    await mkdir(path.join(d, '.govops'));
    await writeFile(path.join(d, '.govops', 'state.json'), '{}'); // untracked, not a manifest
    await writeFile(path.join(d, 'm', 'ignored.yaml'), 'x: 2\n');
    await writeFile(path.join(d, 'notes.txt'), 'hi');
    expect(await gitRevision(d, ['.'])).toBe(head);
    await writeFile(path.join(d, 'other.yaml'), 'x: 3\n'); // outside the manifest path
    expect(await gitRevision(d, ['m'])).toBe(head);
    expect(await gitRevision(d, ['.'])).toBe(`${head}-dirty`);
    await writeFile(path.join(d, 'm', 'a.yaml'), 'x: 9\n');
    expect(await gitRevision(path.join(d, 'm'), ['a.yaml'])).toBe(`${head}-dirty`);
    git(d, 'checkout', '-q', '--', 'm/a.yaml');
    await rm(path.join(d, 'm', 'a.yaml'));
    expect(await gitRevision(d, ['m'])).toBe(`${head}-dirty`);
  });

  it('revisionFor: --revision when given (trimmed), else the Git revision of the paths (the working directory by default)', async () => {
    const d = await tmp();
    await writeFile(path.join(d, 'a.yaml'), 'x: 1\n');
    git(d, 'init', '-q');
    git(d, 'add', '.');
    git(d, 'commit', '-qm', 'one');
    const head = git(d, 'rev-parse', 'HEAD');
    expect(await revisionFor([], ' release-7 ', d)).toBe('release-7');
    expect(await revisionFor([], '  ', d)).toBe(head);
    expect(await revisionFor([], undefined, d)).toBe(head);
    expect(await revisionFor(['a.yaml'], undefined, d)).toBe(head);
    await writeFile(path.join(d, 'a.yaml'), 'x: 2\n');
    expect(await revisionFor(['a.yaml'], undefined, d)).toBe(`${head}-dirty`);
    expect(await revisionFor(['-'], undefined, d)).toBeUndefined();
  });

  it('runs no filter driver: git status compares a stat-dirty manifest without the clean filter its attributes select', async () => {
    const d = await tmp();
    await writeFile(path.join(d, '.gitattributes'), '*.yaml filter=evil\n');
    await writeFile(path.join(d, 'a.yaml'), 'x: 1\n');
    git(d, 'init', '-q');
    git(d, 'add', '.');
    git(d, 'commit', '-qm', 'one');
    const head = git(d, 'rev-parse', 'HEAD');
    // A driver configured for this repository (as a host configures git-lfs), recording that it ran.
    const ran = path.join(d, '.git', 'filter-ran');
    git(d, 'config', 'filter.evil.clean', `echo ran >> '${ran}'; cat`);
    git(d, 'config', 'filter.evil.required', 'true');
    const old = new Date('2001-01-01T00:00:00Z');
    await utimes(path.join(d, 'a.yaml'), old, old);
    expect(await gitRevision(d, ['.'])).toBe(head);
    expect(existsSync(ran)).toBe(false);
  });

  it('unknown when the paths span two work trees', async () => {
    const [a, b] = [await tmp(), await tmp()];
    for (const d of [a, b]) {
      await writeFile(path.join(d, 'a.yaml'), 'x: 1\n');
      git(d, 'init', '-q');
      git(d, 'add', '.');
      git(d, 'commit', '-qm', 'one');
    }
    expect(await gitRevision(a, ['.'])).toBe(git(a, 'rev-parse', 'HEAD'));
    expect(await gitRevision(a, ['.', b])).toBeUndefined();
  });
});

describe('govops apply records the Git revision', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com'));
    git(h.dir, 'init', '-q');
    git(h.dir, 'add', 'manifests');
    git(h.dir, 'commit', '-qm', 'lake');
  });
  afterAll(async () => {
    await h.close();
  });

  it('in state and in the JSON plan; -dirty after an uncommitted edit; --revision overrides', async () => {
    const head = git(h.dir, 'rev-parse', 'HEAD');
    const env = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-rev-1' };
    expect((await h.govops(['apply', 'manifests'], env)).code).toBe(0);
    const st = (await h.state()) as unknown as { resources: Array<{ name: string; revision?: string }> };
    expect(st.resources).toEqual([expect.objectContaining({ name: 'lake', revision: head })]);
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    const plan = await h.govops(['plan', 'manifests', '--output', 'json'], env);
    expect(JSON.parse(plan.stdout).revision).toBe(`${head}-dirty`);
    expect((await h.govops(['apply', 'manifests', '--revision', 'v1.2.3'], env)).code).toBe(0);
    const after = (await h.state()) as unknown as { resources: Array<{ revision?: string }> };
    expect(after.resources[0]!.revision).toBe('v1.2.3');
  });
});
