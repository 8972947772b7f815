/** loadManifests on real temp folders: discovery, .govopsignore, duplicates, file-level limits. */
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/manifests/loader.js';
import { MAX_FILE_BYTES } from '../../src/manifests/hostile.js';
import { isIgnored, parseIgnore } from '../../src/manifests/ignore.js';

const hook = (name: string) =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://h.example.com/${name}\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n`;
const lake = (name: string, host: string) =>
  `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: lakehouse\n  autoBootstrap: false\n  config:\n    workspaceUrl: https://${host}\n    httpPath: /p\n    token: { fromEnv: GOVOPS_SECRET_T }\n`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'govops-load-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function put(rel: string, text: string | Buffer): Promise<void> {
  const full = join(dir, rel);
  await mkdir(join(full, '..'), { recursive: true });
  await writeFile(full, text);
}

const names = (set: Awaited<ReturnType<typeof loadManifests>>) => set.manifests.map((m) => m.manifest.metadata.name).sort();

describe('discovery', () => {
  it('finds *.yaml and *.yml recursively, skipping dot-folders, dot-files, node_modules and other files', async () => {
    await put('a.yaml', hook('a'));
    await put('sub/deeper/b.yml', hook('b'));
    await put('.git/c.yaml', hook('c'));
    await put('.hidden.yaml', hook('d'));
    await put('node_modules/pkg/e.yaml', hook('e'));
    await put('notes.txt', 'not yaml');
    await put('sub/f.YAML', hook('f'));
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([]);
    expect(names(set)).toEqual(['a', 'b', 'f']);
    expect(set.files).toEqual(['a.yaml', 'sub/deeper/b.yml', 'sub/f.YAML']);
    const b = set.manifests.find((m) => m.manifest.metadata.name === 'b')!;
    expect(b.source).toEqual({ file: 'sub/deeper/b.yml', line: 1, column: 1 });
    expect(b.dir).toBe(join(dir, 'sub/deeper'));
  });

  it('loads a file named explicitly whatever its name, and reports missing paths', async () => {
    await put('manifest.txt', hook('x'));
    const set = await loadManifests(['manifest.txt', 'missing'], { cwd: dir });
    expect(names(set)).toEqual(['x']);
    expect(set.diagnostics).toEqual([expect.objectContaining({ file: 'missing', severity: 'error', message: 'no such file or folder' })]);
  });

  it('accepts absolute paths and names files relative to cwd', async () => {
    await put('m/a.yaml', hook('a'));
    const set = await loadManifests([join(dir, 'm')], { cwd: dir });
    expect(set.files).toEqual(['m/a.yaml']);
  });

  it('survives symlink loops', async () => {
    await put('a.yaml', hook('a'));
    await symlink(dir, join(dir, 'loop'));
    const set = await loadManifests(['.'], { cwd: dir });
    expect(names(set)).toEqual(['a']);
  });

  it('warns when no manifest file is found', async () => {
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', message: expect.stringMatching(/no manifest files/) })]);
  });
});

describe('.govopsignore', () => {
  it('skips folders, globs and anchored paths, relative to its folder; ! re-includes', async () => {
    await put('.govopsignore', '# not govops files\nkubernetes/\n*.draft.yaml\n/only-root.yaml\n!keep.draft.yaml\n');
    await put('kubernetes/deploy.yaml', 'apiVersion: apps/v1\nkind: Deployment\n');
    await put('a.yaml', hook('a'));
    await put('b.draft.yaml', hook('b'));
    await put('keep.draft.yaml', hook('keep'));
    await put('only-root.yaml', hook('r1'));
    await put('sub/only-root.yaml', hook('r2'));
    await put('sub/c.draft.yaml', hook('c'));
    await put('sub/.govopsignore', 'local.yaml\n');
    await put('sub/local.yaml', 'not: [valid');
    await put('other/local.yaml', hook('other-local'));
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([]);
    expect(names(set)).toEqual(['a', 'keep', 'other-local', 'r2']);
  });

  it('unknown apiVersion stays an error without it', async () => {
    await put('kubernetes/deploy.yaml', 'apiVersion: apps/v1\nkind: Deployment\n');
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([
      expect.objectContaining({ file: 'kubernetes/deploy.yaml', line: 1, column: 13, severity: 'error', message: expect.stringMatching(/unknown apiVersion `apps\/v1`/) }),
    ]);
  });

  it('pattern matching', () => {
    const rules = parseIgnore('docs/**/*.yaml\nbuild\n');
    expect(isIgnored(rules, 'docs/a/b/c.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'docs/c.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'src/docs/c.yaml', false)).toBe(false);
    expect(isIgnored(rules, 'x/build', true)).toBe(true);
    expect(isIgnored(parseIgnore('build/'), 'build', false)).toBe(false);
  });

  it('pattern matching follows gitignore: classes, escapes, re-includes, anchoring, case', () => {
    const rules = parseIgnore('[ab]-*.yaml\n\\#literal.yaml\n\\!bang.yaml\n*.draft.yaml\n!keep.draft.yaml\n/top.yaml\nfoo[0-9].yml\n');
    expect(isIgnored(rules, 'a-one.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'sub/b-two.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'c-three.yaml', false)).toBe(false);
    expect(isIgnored(rules, '#literal.yaml', false)).toBe(true);
    expect(isIgnored(rules, '!bang.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'x.draft.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'keep.draft.yaml', false)).toBe(false);
    expect(isIgnored(rules, 'top.yaml', false)).toBe(true);
    expect(isIgnored(rules, 'sub/top.yaml', false)).toBe(false);
    expect(isIgnored(rules, 'foo7.yml', false)).toBe(true);
    expect(isIgnored(rules, 'fooX.yml', false)).toBe(false);
    expect(isIgnored(rules, 'A-one.yaml', false)).toBe(false); // case-sensitive, as Git on Linux
  });

  it('a .govopsignore with a class pattern skips the matching files', async () => {
    await put('.govopsignore', '[xy]-*.yaml\n');
    await put('x-skip.yaml', 'apiVersion: apps/v1\nkind: Deployment\n');
    await put('z-keep.yaml', hook('kept'));
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([]);
    expect(names(set)).toEqual(['kept']);
  });
});

describe('the whole set', () => {
  it('duplicate (kind, name) across files names both places', async () => {
    await put('one.yaml', `${hook('a')}---\n${lake('a', 'w1.example.com')}`);
    await put('two/two.yaml', `# second\n${hook('a')}`);
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([
      expect.objectContaining({
        file: 'two/two.yaml',
        line: 5,
        column: 9,
        kind: 'Webhook',
        name: 'a',
        severity: 'error',
        message: 'duplicate name: Webhook/a is also defined at one.yaml:1:1 (names are unique per kind)',
      }),
    ]);
    expect(set.manifests).toHaveLength(2); // the Integration of the same name is another kind: fine
  });

  it('two integrations on the same host and kind is an error (the service allows one)', async () => {
    await put('a.yaml', `${lake('one', 'w.example.com')}---\n${lake('two', 'W.example.com/other')}`);
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([
      expect.objectContaining({ line: 21, column: 19, name: 'two', message: expect.stringMatching(/same lakehouse integration as Integration\/one at a\.yaml:1:1/) }),
    ]);
    expect(set.manifests.map((m) => m.manifest.metadata.name)).toEqual(['one']);
  });

  it('two object_store integrations on one cloudLocationPath is an error (unique across object_store, interface 8)', async () => {
    const store = (name: string, path: string | { fromEnv: string }) =>
      `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: object_store\n  autoBootstrap: false\n  config:\n` +
      `    name: ${name}\n    cloudAccountId: "1"\n    cloudRegion: eu-west-1\n    cloudLocationRole: arn:role/x\n` +
      `    cloudLocationPath: ${typeof path === 'string' ? path : `{ fromEnv: ${path.fromEnv} }`}\n    authenticationType: auto\n`;
    await put('a.yaml', `${store('one', 's3://shared/')}---\n${store('two', 's3://shared/')}`);
    // another path, another case, a secret reference and the same path without its trailing slash are not clashes
    // (compared as written: the interface states uniqueness, not what makes two paths one); the last is warned of
    await put('b.yaml', `${store('three', 's3://other/')}---\n${store('four', 's3://Shared')}---\n${store('five', { fromEnv: 'GOVOPS_SECRET_LOC' })}---\n${store('six', 's3://shared')}`);
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([
      expect.objectContaining({
        file: 'a.yaml',
        line: 28,
        column: 24,
        name: 'two',
        severity: 'error',
        message: 'cloudLocationPath `s3://shared/` is also used by Integration/one at a.yaml:1:1: it is unique across object_store integrations (the service refuses a second one)',
      }),
      expect.objectContaining({
        file: 'b.yaml',
        name: 'six',
        severity: 'warning',
        message:
          'cloudLocationPath `s3://shared` and `s3://shared/` of Integration/one at a.yaml:1:1 differ only by trailing slashes: govops reads ' +
          'them as one location, and the service may too (it refuses a second integration on one cloudLocationPath); write one location once',
      }),
    ]);
    expect(names(set)).toEqual(['five', 'four', 'one', 'six', 'three']);
  });

  it('a cloudLocationPath moved from a manifest marked govops/delete to a new one is not a clash (the plan orders the create after the delete)', async () => {
    const store = (name: string, annotations = '') =>
      `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\n${annotations}spec:\n  type: object_store\n  autoBootstrap: false\n  config:\n` +
      `    name: ${name}\n    cloudAccountId: "1"\n    cloudRegion: eu-west-1\n    cloudLocationRole: arn:role/x\n` +
      `    cloudLocationPath: s3://moved/\n    authenticationType: auto\n`;
    await put('a.yaml', `${store('old', '  annotations:\n    govops/delete: "true"\n')}---\n${store('new')}`);
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([]);
    expect(names(set)).toEqual(['new', 'old']);
  });

  it('refuses files over 1 MiB and binary files', async () => {
    await put('big.yaml', Buffer.alloc(MAX_FILE_BYTES + 1, 0x61));
    await put('bin.yaml', Buffer.from([0x61, 0x3a, 0x00, 0x01]));
    await put('latin1.yaml', Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`)).toEqual([
      'big.yaml:1:1 file is larger than 1048576 bytes (1 MiB); manifests are small text files',
      'bin.yaml:1:1 binary content (NUL byte): not a YAML text file',
      'latin1.yaml:1:1 not UTF-8 text',
    ]);
  });

  it('strict turns plain literals into errors', async () => {
    await put('a.yaml', `${hook('a')}  secret: hunter2\n`);
    expect((await loadManifests(['.'], { cwd: dir })).diagnostics.map((d) => d.severity)).toEqual(['warning']);
    const strict = await loadManifests(['.'], { cwd: dir, strict: true });
    expect(strict.diagnostics.map((d) => d.severity)).toEqual(['error']);
    expect(strict.manifests).toEqual([]);
  });
});
