/**
 * Manifest streams: `-` is a multi-document YAML stream on standard input (`kustomize build ... | govops plan -`).
 * Diagnostics name the document and the line of the stream (`-:doc 3:12:5`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/manifests/loader.js';
import { splitStream } from '../../src/manifests/stream.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

const hook = (name: string, extra = ''): string =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://hooks.example.com/${name}\n  global: false\n  notificationType: [userCreated]\n  actionType: triggered\n${extra}`;

const stream = (text: string) => ({ stream: { read: async () => text } });

let dir: string | undefined;
let sandbox: SandboxHandle | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await sandbox?.close();
  dir = undefined;
  sandbox = undefined;
});

describe('splitStream', () => {
  it('splits at document markers; a marker before any content opens the first document', () => {
    const docs = splitStream('# header\n---\na: 1\n---\nb: 2\n...\nc: 3\n');
    expect(docs.map((d) => [d.index, d.line])).toEqual([
      [1, 1],
      [2, 4],
      [3, 7],
    ]);
    expect(splitStream('a: 1\n')).toEqual([{ index: 1, line: 1, text: 'a: 1\n' }]);
  });

  it('splits a CRLF stream (rendered on Windows) at its markers too, `...` included', () => {
    const docs = splitStream('# header\r\n---\r\na: 1\r\n---\r\nb: 2\r\n...\r\nc: 3\r\n');
    expect(docs.map((d) => [d.index, d.line])).toEqual([
      [1, 1],
      [2, 4],
      [3, 7],
    ]);
  });

  it('a CRLF stream past the one-file limit in all is read document by document, each named by its number', async () => {
    const docs = Array.from({ length: 6000 }, (_, i) => hook(`h${i + 1}`, i === 1 ? '  secret: { fromEnv: HOME }\n' : ''));
    const text = docs.join('---\n').replace(/\n/g, '\r\n');
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const res = await loadManifests(['-'], { cwd: tmpdir(), ...stream(text) });
    expect(res.manifests).toHaveLength(6000);
    expect(res.diagnostics.map((d) => `${d.file}:${d.line}`)).toEqual([`-:doc 2:${10 + 10}`]);
  });
});

describe('loadManifests with -', () => {
  it('names the document and the line of the stream in every diagnostic', async () => {
    const text = `${hook('a')}---\n# the second\n${hook('b').replace('global: false', 'global: nope')}---\n${hook('a')}`;
    const res = await loadManifests(['-'], { cwd: '/tmp', ...stream(text) });
    const lines = res.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^-:doc 2:18:11 `spec.global` must be a boolean/);
    expect(lines[1]).toMatch(/^-:doc 3:2[0-9]:\d+ duplicate name: Webhook\/a is also defined at -:doc 1:1:1/);
    expect(res.manifests.map((m) => `${m.source.file}:${m.source.line}`)).toEqual(['-:doc 1:1']);
  });

  it('a document of another tool in the stream says to leave it out of the stream (a .govopsignore cannot skip it)', async () => {
    const text = `${hook('a')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: c }\n`;
    const res = await loadManifests(['-'], { cwd: '/tmp', ...stream(text) });
    expect(res.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`)).toEqual([
      '-:doc 2:11:13 unknown apiVersion `v1`: govops manifests use govops/v1 (not a govops document? leave it out of the stream)',
    ]);
  });

  it('is checked with files beside it: a data source in the stream under an integration of a folder', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'govops-stream-'));
    await writeFile(
      path.join(dir, 'bucket.yaml'),
      'apiVersion: govops/v1\nkind: Integration\nmetadata: { name: raw }\nspec:\n  type: object_store\n  autoBootstrap: false\n  config: { name: raw, cloudAccountId: "1", cloudRegion: us-east-1, cloudLocationRole: r, cloudLocationPath: "s3://raw/", authenticationType: auto }\n',
    );
    const ds = 'apiVersion: govops/v1\nkind: DataSource\nmetadata: { name: ev }\nspec: { integration: raw, dataSourceName: Events, prefix: "s3://raw/events/" }\n';
    const ok = await loadManifests(['bucket.yaml', '-'], { cwd: dir, ...stream(ds) });
    expect(ok.diagnostics).toEqual([]);
    expect(ok.manifests).toHaveLength(2);
    const alone = await loadManifests(['-'], { cwd: dir, ...stream(ds) });
    expect(alone.diagnostics.map((d) => d.file)).toEqual(['-:doc 1']);
  });

  it('without a stream, - is an error (never a file named -)', async () => {
    const res = await loadManifests(['-'], { cwd: '/tmp' });
    expect(res.diagnostics.map((d) => `${d.file} ${d.severity}`)).toEqual(['- error']);
  });
});

describe('govops validate - / plan -', () => {
  it('validate reads standard input and exits 1 naming the document', async () => {
    const res = await runGovops(['validate', '-'], { input: `${hook('a')}---\n${hook('b', '  extra: 1\n')}` });
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^-:doc 2:\d+:\d+: Webhook\/b: /m);
  });

  it('plan - against a sandbox plans the stream', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-stream-'));
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const res = await runGovops(['plan', '-'], { cwd: dir, env, input: `${hook('a')}---\n${hook('b')}` });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Plan: 2 to create, 0 to update, 0 to replace, 0 to delete/);
  });

  it('plan - --out FILE, then apply FILE reads the stream again: the same stream applies, another is refused as stale', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-stream-'));
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const text = `${hook('a')}---\n${hook('b')}`;
    const plan = await runGovops(['plan', '-', '--out', 'plan.json'], { cwd: dir, env, input: text });
    expect(plan.code, plan.stderr).toBe(0);
    const stale = await runGovops(['apply', 'plan.json'], { cwd: dir, env, input: hook('a') });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('stale');
    const apply = await runGovops(['apply', 'plan.json'], { cwd: dir, env, input: text });
    expect(apply.code, apply.stderr + apply.stdout).toBe(0);
    expect(sandbox.requests().filter((r) => r.method === 'POST' && r.path === '/webhooks')).toHaveLength(1);
  });
});
