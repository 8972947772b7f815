/**
 * Issue 22 "govops never reads what it writes", for the CLI too: `plan DIR` / `apply DIR` / `validate DIR` skip a
 * daemon's work folder left under DIR (it holds the marker govops writes into it: snapshots, revision worktrees)
 * and the state file's family, by name (`--state`, relative or absolute) and by content (whatever it is called).
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/manifests/loader.js';
import { DirSource } from '../../src/sources/dir.js';
import { acquireStateLock, newState, saveState } from '../../src/state/store.js';
import { isGovopsStateText, WORKDIR_MARKER } from '../../src/util/own-files.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

const hook = (name: string) =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://h.example.com/${name}\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'govops-own-'));
  await writeFile(join(dir, 'a.yaml'), hook('a'));
  await mkdir(join(dir, 'team'));
  await writeFile(join(dir, 'team', 'b.yaml'), hook('b'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const names = (set: Awaited<ReturnType<typeof loadManifests>>) => set.manifests.map((m) => m.manifest.metadata.name).sort();

describe('a daemon work folder under the manifests is not read', () => {
  it('the directory source marks its work folder; loading the folder then reads the manifests once, not the snapshots', async () => {
    const source = new DirSource({ dir, workdir: join(dir, 'work'), statePath: join(dir, 'state.json'), logger: pino({ level: 'silent' }), intervalMs: 3_600_000 });
    await source.start();
    try {
      expect(source.current()).toBeDefined();
    } finally {
      await source.stop();
    }
    expect(await readdir(join(dir, 'work'))).toContain(WORKDIR_MARKER);
    expect((await readdir(join(dir, 'work', 'snapshots'))).length).toBe(1); // copies of a.yaml and team/b.yaml
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(names(set)).toEqual(['a', 'b']);
    expect(set.files.sort()).toEqual(['a.yaml', 'team/b.yaml']);
  });

  it('a marked folder is skipped with everything below it (a Git revision worktree is not reported as a submodule)', async () => {
    await mkdir(join(dir, 'work', 'revs', 'abc'), { recursive: true });
    await writeFile(join(dir, 'work', WORKDIR_MARKER), '');
    await writeFile(join(dir, 'work', 'revs', 'abc', '.git'), 'gitdir: ../../repo.git/worktrees/abc\n');
    await writeFile(join(dir, 'work', 'revs', 'abc', 'a.yaml'), hook('a'));
    const set = await loadManifests(['.'], { cwd: dir });
    expect(set.diagnostics).toEqual([]);
    expect(names(set)).toEqual(['a', 'b']);
  });

  it('naming the work folder itself is an error that says what it is', async () => {
    await mkdir(join(dir, 'work'));
    await writeFile(join(dir, 'work', WORKDIR_MARKER), '');
    const set = await loadManifests(['work'], { cwd: dir });
    expect(set.diagnostics).toEqual([expect.objectContaining({ severity: 'error', rule: 'own-files', message: expect.stringContaining("govops' own work folder") })]);
  });
});

describe('the state file family is not read', () => {
  it('by content: a state, journal or lock named *.yaml is skipped, a manifest written as JSON is not', async () => {
    await saveState(join(dir, 'state.yaml'), newState());
    const lock = await acquireStateLock(join(dir, 'x.yaml'));
    try {
      await writeFile(join(dir, 'j.yaml'), `{"base":"${'a'.repeat(64)}"}\n{"remove":{"kind":"Webhook","name":"a"}}\n`);
      await writeFile(join(dir, 'c.yaml'), JSON.stringify({ apiVersion: 'govops/v1', kind: 'Webhook', metadata: { name: 'c' }, spec: { url: 'https://h.example.com/c', global: false, notificationType: ['modelCreated'], actionType: 'triggered' } }));
      // the lock is x.yaml.lock: copy its text under a manifest-like name too
      await writeFile(join(dir, 'lock.yaml'), await readFile(`${join(dir, 'x.yaml')}.lock`, 'utf8'));
      const set = await loadManifests(['.'], { cwd: dir });
      expect(set.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(names(set)).toEqual(['a', 'b', 'c']);
    } finally {
      await lock.release();
    }
    expect(isGovopsStateText('{"apiVersion":"govops/v1","kind":"Webhook"}')).toBe(false);
    expect(isGovopsStateText('fingerprintKey: x\nresources: []\nversion: 1\n')).toBe(false);
  });

  it('by name: the state file given (relative or absolute) and its siblings are skipped; named explicitly, refused', async () => {
    await writeFile(join(dir, 'state.yml'), 'not: a state\n');
    await writeFile(join(dir, 'state.yml.bak.yaml'), 'not: a state either\n');
    for (const state of ['state.yml', join(dir, 'state.yml')]) {
      const set = await loadManifests(['.'], { cwd: dir, stateFiles: [state] });
      expect(set.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(names(set)).toEqual(['a', 'b']);
    }
    const named = await loadManifests(['state.yml'], { cwd: dir, stateFiles: ['state.yml'] });
    expect(named.diagnostics).toEqual([expect.objectContaining({ severity: 'error', rule: 'own-files' })]);
  });
});

describe('plan and apply with --state inside the manifest folder', () => {
  let sandbox: SandboxHandle;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  it('a relative --state DIR/state.yaml is neither loaded by plan nor by apply, before and after it exists', async () => {
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const cwd = join(dir, '..');
    const rel = dir.slice(cwd.length + 1);
    const state = join(rel, 'state.yaml');
    const apply = await runGovops(['apply', rel, '--state', state], { cwd, env });
    expect(apply.stderr).not.toMatch(/state\.yaml/);
    expect(apply.code).toBe(0);
    const plan = await runGovops(['plan', rel, '--state', state, '--detailed-exitcode'], { cwd, env });
    expect(plan.stderr + plan.stdout).not.toMatch(/error/i);
    expect(plan.code).toBe(0);
    const validate = await runGovops(['validate', rel], { cwd, env });
    expect(validate.code).toBe(0);
  });
});
