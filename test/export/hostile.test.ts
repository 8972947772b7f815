/**
 * `govops export` with text from the service that holds control characters (issue 27): what reaches the terminal
 * is escaped by the one escaper, no comment line govops writes into a file can be broken by a service id, and a
 * file name is always a plain name inside the output folder (no path, no control character).
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { renderExport, writeExport } from '../../src/export/write.js';
import type { ExportedResource } from '../../src/export/resources.js';
import { runGovops } from '../helpers/cli.js';

const HOSTILE = 'bad\u001b[2J\u001b]0;pwned\u0007\u202eevil\u009b31m\nerror: forged';
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-hostile-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('export of hostile service text', () => {
  let sandbox: SandboxHandle;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  it('a webhook name with control characters: exported as spec.name, nothing raw on the terminal, no file is named after it', async () => {
    const res = await fetch(`${sandbox.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ webhooks: [{ name: HOSTILE, url: "https://h.example.com/x", global: false, notificationType: ["modelCreated"], actionType: "triggered" }] }),
    });
    expect(res.status, await res.text()).toBeLessThan(300);
    const r = await runGovops(['export', '--out', 'out'], { cwd: dir, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/not exported/);
    expect(r.stderr + r.stdout).not.toMatch(RAW);
    expect(r.stderr).not.toMatch(/^error: forged/m);
    const files = await readdir(path.join(dir, 'out'));
    for (const f of files) expect(f).not.toMatch(RAW);
    // the name is kept as it is in the service (spec.name): the file validates, and plans as an adoption of it
    const text = await readFile(path.join(dir, 'out', files.find((f) => f.startsWith('webhook-'))!), 'utf8');
    expect(text).toMatch(/^metadata:\n {2}name: bad-2j-0-pwned-evil-31m-error-forged$/m);
    // nor in the file to commit: a reviewer reads it in a diff, where a bidi override or a C1 control would show
    // other text than YAML reads (every such character written as an escape of a double-quoted scalar)
    expect(text).not.toMatch(RAW);
    expect(text).toContain('\\u202e');
    const validated = await runGovops(['validate', 'out', '--strict'], { cwd: dir });
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    const planned = await runGovops(['plan', 'out', '-o', 'json'], { cwd: dir, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });
    expect(planned.code, planned.stderr).toBe(0);
    expect((JSON.parse(planned.stdout) as { changes: Array<{ action: string }> }).changes.map((c) => c.action)).toEqual(['adopt']);
  });
});

describe('export files', () => {
  const hook = (name: string, liveId: string): ExportedResource => ({
    kind: 'Webhook',
    name,
    liveId,
    manifest: { apiVersion: 'govops/v1', kind: 'Webhook', metadata: { name }, spec: { url: 'https://h.example.com/x', global: false, notificationType: ['modelCreated'], actionType: 'triggered' } },
  });

  it('a service id with a line break cannot add a line to the comment govops writes', () => {
    const files = renderExport([hook('a', `7\napiVersion: forged\n${HOSTILE}`)], [{ name: 'V', resource: 'Integration/a', path: `config.x\nforged: 1` }], 'resource');
    const doc = files.get('webhook-a.yaml')!;
    expect(doc.split('\n')[0]).toMatch(/^# Webhook\/a: exported by govops export \(live id 7\\napiVersion: forged\\n/);
    expect(doc).not.toMatch(/^apiVersion: forged/m);
    expect(doc).not.toMatch(RAW);
    expect(files.get('secrets.env.template')).not.toMatch(/^forged/m);
  });

  it('writes only plain file names inside the output folder', async () => {
    for (const bad of ['../escape.yaml', 'sub/x.yaml', '/tmp/abs.yaml', 'x\u001b.yaml', '..', '']) {
      await expect(writeExport(path.join(dir, 'out'), new Map([[bad, 'x: 1\n']]), false), bad).rejects.toThrow(/not a plain file name/);
    }
    expect(await readdir(dir)).not.toContain('escape.yaml');
    await writeExport(path.join(dir, 'out'), new Map([['webhook-a.yaml', 'x: 1\n']]), false);
    expect(await readFile(path.join(dir, 'out', 'webhook-a.yaml'), 'utf8')).toBe('x: 1\n');
  });
});

describe('an env template in the output folder that is not a plain file', () => {
  // The folder an import writes into is the repository's manifests folder, which pull requests change: a committed
  // `secrets.env.template` link to a file of the operator's (a filled-in env file, /proc/self/environ) was read
  // through and its content written, as the merged template, into a file of the folder, ready to commit.
  const template = 'GOVOPS_SECRET_NEW=\n';

  it('a symbolic link: refused before anything is written; its target is neither read nor copied', async () => {
    const out = path.join(dir, 'out');
    await mkdir(out);
    const target = path.join(dir, 'operator-secrets.env');
    await writeFile(target, 'GOVOPS_TOKEN=live-admin-token\n');
    await symlink(target, path.join(out, 'secrets.env.template'));
    await expect(writeExport(out, new Map([['webhook-a.yaml', 'x: 1\n'], ['secrets.env.template', template]]), false)).rejects.toThrow(/secrets\.env\.template.*not a regular file/);
    expect((await lstat(path.join(out, 'secrets.env.template'))).isSymbolicLink()).toBe(true);
    expect(await readdir(out)).toEqual(['secrets.env.template']);
    expect(await readFile(target, 'utf8')).toBe('GOVOPS_TOKEN=live-admin-token\n');
  });

  it('a FIFO: refused at once (reading it waited for a writer forever)', async () => {
    const out = path.join(dir, 'out');
    await mkdir(out);
    execFileSync('mkfifo', [path.join(out, 'secrets.env.template')]);
    await expect(writeExport(out, new Map([['secrets.env.template', template]]), false)).rejects.toThrow(/not a regular file/);
  });

  it('a regular file is extended as before', async () => {
    const out = path.join(dir, 'out');
    await mkdir(out);
    await writeFile(path.join(out, 'secrets.env.template'), '# old\nGOVOPS_SECRET_OLD=\n');
    await writeExport(out, new Map([['secrets.env.template', `# new\n${template}`]]), false);
    expect(await readFile(path.join(out, 'secrets.env.template'), 'utf8')).toBe('# old\nGOVOPS_SECRET_OLD=\n# new\nGOVOPS_SECRET_NEW=\n');
  });
});
