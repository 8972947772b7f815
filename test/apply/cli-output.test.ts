/**
 * What a human and a CI job see from the real CLI: one-shot commands log at `warn` by default (clean
 * output), progress lines on a TTY, `apply --output json` with exit codes, `plan --detailed-exitcode` 1.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { harness, type Harness } from './harness.js';
import { lakeManifest, sqlManifest, webhookManifest } from './inproc.js';

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;
const DEFAULT_LEVEL = { GOVOPS_LOG_LEVEL: '' }; // empty = unset: the command's own default
const JSON_LOG = /"level":\d+/;

/** Run the CLI under `script`, i.e. with a pseudo-terminal as stdout. */
function runOnTty(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = [process.execPath, CLI, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out: out.replace(/\r/g, '') });
    });
    child.stdin.end();
  });
}

describe('CLI output of plan and apply', () => {
  let h: Harness;
  const secrets = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-QQQQ-1212', GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-WWWW-3434', GOVOPS_SECRET_SQL_PASSWORD: 'sql-pw-EEEE-5656', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-RRRR-7878' };
  const run = (args: string[], env: Record<string, string> = {}) => h.govops(args, { ...secrets, ...env });
  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com'));
    await h.writeManifest('hook.yaml', webhookManifest('hook'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('one-shot commands log at warn by default: no JSON log line, plain progress lines when piped', async () => {
    const r = await run(['apply', 'manifests'], DEFAULT_LEVEL);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Integration\/lake: create ok \(\d/m);
    expect(r.stdout).toMatch(/^Webhook\/hook: create ok \(\d/m);
    expect(r.stdout).toMatch(/Apply complete: 2 ok/);
    expect(r.stdout).not.toMatch(JSON_LOG);
    expect(r.stderr).not.toMatch(JSON_LOG);
    const p = await run(['plan', 'manifests'], DEFAULT_LEVEL);
    expect(p.stdout).toMatch(/No changes/);
    expect(`${p.stdout}${p.stderr}`).not.toMatch(JSON_LOG);
  });

  it('--log-level and GOVOPS_LOG_LEVEL bring the logs back, as text lines on stderr only (GOVOPS_LOG_FORMAT=json: JSON); a bad level is a user error', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    const r = await run(['apply', 'manifests', '--log-level', 'info'], DEFAULT_LEVEL);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^info: applied \(/m);
    expect(r.stderr).not.toMatch(JSON_LOG);
    expect(r.stdout).not.toMatch(/^info: /m);
    const d = await run(['plan', 'manifests'], { GOVOPS_LOG_LEVEL: 'debug' });
    expect(d.stderr).toMatch(/^debug: request \(.*method=GET/m);
    expect(d.stdout).not.toMatch(/^debug: /m);
    const json = await run(['plan', 'manifests'], { GOVOPS_LOG_LEVEL: 'debug', GOVOPS_LOG_FORMAT: 'json' });
    expect(json.stderr).toMatch(/"msg":"request"/);
    expect(json.stdout).not.toMatch(JSON_LOG);
    const flagWins = await run(['plan', 'manifests', '--log-level', 'warn'], { GOVOPS_LOG_LEVEL: 'debug' });
    expect(flagWins.stderr).not.toMatch(/^debug: /m);
    const bad = await run(['plan', 'manifests'], { GOVOPS_LOG_LEVEL: 'loud' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/GOVOPS_LOG_LEVEL must be one of trace, debug, info, warn/);
  });

  it('GOVOPS_LOG_FORMAT: text or json (empty: text); a typo is a usage error, not text lines a tool cannot read', async () => {
    for (const format of ['JSON', 'jsonl', 'xml']) {
      const r = await run(['plan', 'manifests'], { GOVOPS_LOG_LEVEL: 'debug', GOVOPS_LOG_FORMAT: format });
      expect(r.code, format).toBe(1);
      expect(r.stdout, format).toBe('');
      expect(r.stderr, format).toBe(`error: GOVOPS_LOG_FORMAT must be text or json, got "${format}"\n  hint: unset it for text lines, or set it to json\n`);
    }
    for (const format of ['', 'text']) {
      const r = await run(['plan', 'manifests'], { GOVOPS_LOG_LEVEL: 'debug', GOVOPS_LOG_FORMAT: format });
      expect(r.code, format).toBe(0);
      expect(r.stderr, format).toMatch(/^debug: request \(/m);
    }
  });

  it.skipIf(!HAS_SCRIPT)('on a TTY: one counted line per resource as it finishes, then the table', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/3'));
    await h.writeManifest('hook.yaml', webhookManifest('hook', ['modelCreated', 'modelDeleted']));
    const r = await runOnTty(['apply', 'manifests'], h.dir, { ...h.env, ...secrets, ...DEFAULT_LEVEL });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^\[[12]\/2\] ✓ Integration\/lake update \(\d/m);
    expect(r.out).toMatch(/^\[[12]\/2\] ✓ Webhook\/hook replace \(\d/m);
    expect(r.out).not.toMatch(/^Integration\/lake: update ok/m); // the plain form is for pipes
    expect(r.out.indexOf('[2/2]')).toBeLessThan(r.out.indexOf('RESOURCE'));
    expect(r.out).not.toMatch(JSON_LOG);
  });

  it('apply --output json: a failure exits 1 with one JSON document (validation results) on stdout; logs and progress on stderr', async () => {
    await h.writeManifest('bad.yaml', sqlManifest('bad', 'db.invalid'));
    const r = await run(['apply', 'manifests', '--output', 'json', '--log-level', 'info']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ formatVersion: 2, ok: false, stage: 'apply' });
    const bad = doc.outcomes.find((o: { name: string }) => o.name === 'bad');
    expect(bad).toMatchObject({ action: 'create', result: 'failed' });
    expect(bad.validation.some((t: { status: string }) => t.status === 'failed')).toBe(true);
    expect(r.stderr).toMatch(/^Integration\/bad: create failed/m);
    expect(r.stderr).toMatch(/^info: applying plan/m);
    expect(r.stderr).toMatch(/^error: 1 of 1 resource not applied \(listed above\)$/m);
    await rm(path.join(h.dir, 'manifests', 'bad.yaml'));
  });

  it('plan --detailed-exitcode is 1 on an error (service unreachable, invalid manifest), not 0 or 2', async () => {
    const down = await run(['plan', 'manifests', '--detailed-exitcode', '--retries', '0'], { GOVOPS_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: cannot reach the service/m);
    await h.writeManifest('broken.yaml', 'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: broken\nspec:\n  url: 12\n');
    const invalid = await run(['plan', 'manifests', '--detailed-exitcode']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/broken\.yaml:\d+:\d+/);
    await rm(path.join(h.dir, 'manifests', 'broken.yaml'));
    expect((await run(['plan', 'manifests', '--detailed-exitcode'])).code).toBe(0);
  });
});

describe('apply --output json lists the outcomes in the order of the plan', () => {
  let h: Harness;
  beforeAll(async () => {
    // the integration's create settles after the webhooks' creates: it finishes last
    h = await harness({ transitionMs: 800 });
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com'));
    await h.writeManifest('hooks.yaml', `${webhookManifest('hook-b')}---\n${webhookManifest('hook-a')}`);
  });
  afterAll(async () => {
    await h.close();
  });

  it('not in the order the resources finished: two runs of one plan give one order', async () => {
    const r = await h.govops(['apply', 'manifests', '-o', 'json'], { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-1', GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-1', GOVOPS_LOG_LEVEL: '' });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { plan: { changes: Array<{ resourceKind: string; name: string }> }; outcomes: Array<{ resourceKind: string; name: string }> };
    const planned = out.plan.changes.map((c) => `${c.resourceKind}/${c.name}`);
    expect(planned).toEqual(['Integration/lake', 'Webhook/hook-a', 'Webhook/hook-b']);
    expect(out.outcomes.map((o) => `${o.resourceKind}/${o.name}`)).toEqual(planned);
  });
});
