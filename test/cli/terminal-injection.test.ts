/**
 * Issue 27: terminal injection. Text from manifests (a YAML key holding a newline, `error: forged` and `\e[2J`)
 * and from the service (names, ids, error messages) reaches no terminal raw: every text renderer passes it through
 * the one escaper (src/util/terminal.ts). JSON output stays JSON (its escaping is enough there).
 */
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textLine } from '../../src/log.js';
import { formatDiagnostic } from '../../src/manifests/format.js';
import { renderText } from '../../src/plan/render-text.js';
import type { Plan } from '../../src/plan/types.js';
import { outcomeTable, progressLine } from '../../src/reconcile/report.js';
import { cell, table } from '../../src/deliveries/render.js';
import { ApiError } from '../../src/errors.js';
import { printable, printableLines } from '../../src/util/terminal.js';
import { runGovops } from '../helpers/cli.js';
import { manualLakeManifest } from '../helpers/manifests.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

const FORGED = 'x\nerror: forged \u001b[2J\u001b]0;title\u0007 \u202egnp.exe\r';
/** No control character but the line breaks the renderer wrote, and no line a forger wrote. */
function clean(text: string): void {
  // eslint-disable-next-line no-control-regex
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  expect(text).not.toMatch(/^error: forged/m);
}

describe('the one escaper', () => {
  it('writes every control and invisible format character as an escape', () => {
    expect(printable(FORGED)).toBe('x\\nerror: forged \\x1b[2J\\x1b]0;title\\x07 \\u202egnp.exe\\r');
    expect(printable('plain text ü — ok')).toBe('plain text ü — ok');
    expect(printableLines('a\u001b[2J\nb')).toBe('a\\x1b[2J\nb');
  });
});

describe('validate prints a hostile key escaped, in text; JSON output stays valid JSON', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-inject-'));
    await writeFile(
      join(dir, 'h.yaml'),
      'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: a\nspec:\n  url: https://h.example.com/a\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n  "x\\nerror: forged \\e[2J\\e]0;title\\a": 1\n',
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([{}, { GOVOPS_LOG_FORMAT: 'json' }])('text (env %o)', async (env) => {
    const r = await runGovops(['validate', 'h.yaml'], { cwd: dir, env });
    expect(r.code).toBe(1);
    clean(r.stdout + r.stderr);
    expect(r.stdout).toContain('unknown field `x\\nerror: forged \\x1b[2J\\x1b]0;title\\x07`');
  });

  it('-o json: the key as it is, JSON-escaped', async () => {
    const r = await runGovops(['validate', 'h.yaml', '-o', 'json'], { cwd: dir });
    const [d] = JSON.parse(r.stdout) as Array<{ message: string }>;
    expect(d!.message).toContain('x\nerror: forged \u001b[2J');
  });
});

describe('every text renderer escapes what manifests and the service wrote', () => {
  it('diagnostics', () => {
    const line = formatDiagnostic({ file: `m${FORGED}.yaml`, line: 1, column: 1, severity: 'error', kind: 'Webhook', name: FORGED, message: FORGED });
    clean(line);
    expect(line.split('\n')).toHaveLength(1);
  });

  it('the text plan: names, reasons, errors, warnings, values (with colour on)', () => {
    const plan: Plan = {
      formatVersion: 2,
      changes: [
        {
          resourceKind: 'Webhook',
          name: FORGED,
          action: 'update',
          adopt: false,
          liveId: FORGED,
          changes: [{ path: `config.${FORGED}`, before: FORGED, after: '\u0085\u009b2J', sensitive: false, forcesReplace: false }],
          reasons: [{ code: 'adopted', message: FORGED }],
          blocked: { code: 'replace-not-allowed', message: FORGED },
        },
      ],
      summary: { create: 0, update: 1, replace: 0, delete: 0, adopt: 0, noop: 0 },
      errors: [FORGED],
      warnings: [{ code: 'orphan', message: FORGED }],
    } as Plan;
    // eslint-disable-next-line no-control-regex
    const text = renderText(plan, { color: true }).replace(/\u001b\[\d+m/g, ''); // the renderer's own colours
    clean(text);
    expect(text).toContain('"\\x85\\x9b2J"');
  });

  it('log lines in text mode: the message and the fields', () => {
    const line = textLine(JSON.stringify({ level: 50, msg: FORGED, [FORGED]: FORGED, word: 'a\u001b[2J' }));
    clean(line.trimEnd());
    expect(line.trimEnd().split('\n')).toHaveLength(1);
  });

  it('log lines in pretty mode (a terminal): the message escaped, only pino-pretty\'s own colours', () => {
    const log = new URL('../../dist/log.js', import.meta.url).href;
    const script = `import(${JSON.stringify(log)}).then((m) => m.createLogger({ pretty: true }).error({ key: ${JSON.stringify(FORGED)} }, ${JSON.stringify(FORGED)}))`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    // eslint-disable-next-line no-control-regex
    const out = r.stdout.replace(/\u001b\[[0-9;]*m/g, '').trimEnd();
    clean(out);
    expect(out).toContain('x\\nerror: forged \\x1b[2J');
  });

  it('apply progress and outcome tables, delivery tables, service errors', async () => {
    const o = { resourceKind: 'Webhook' as const, name: FORGED, action: 'create' as const, result: 'failed' as const, durationMs: 5, error: FORGED, validation: [{ name: FORGED, status: 'failed' }] };
    clean(progressLine(o, 1, 1, true));
    clean(outcomeTable([o]));
    clean(await table([['A', 'B'], [FORGED, FORGED]]));
    clean(cell(FORGED));
    const err = new ApiError(400, 'Bad Request', FORGED, 'POST', '/webhooks');
    clean(printableLines(`service error: ${err.toString()}`));
  });
});

describe('the closing error line of plan and apply: a service error is escaped', () => {
  let dir: string;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-inject-service-'));
    await writeFile(
      join(dir, 'h.yaml'),
      'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: a\nspec:\n  url: https://h.example.com/a\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n',
    );
    // a service (or whatever answers at its address) whose refusal carries control sequences
    server = createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ message: FORGED, error: `Forbidden ${FORGED}` }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // a pull request for preview: the base commit, and a head that changes the webhook
    const git = (...args: string[]) => spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: dir });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'base');
    await writeFile(join(dir, 'h.yaml'), (await readFile(join(dir, 'h.yaml'), 'utf8')).replace('/a\n', '/b\n'));
    git('commit', '-qam', 'head');
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['preview --base HEAD~1', 'preview --base HEAD~1 --require-live', 'preview --base HEAD~1 -o json'])('%s', async (command) => {
    const r = await runGovops([...command.split(' '), 'h.yaml', '--retries', '0'], { cwd: dir, env: { GOVOPS_URL: url, GOVOPS_TOKEN: 'tok-1234' } });
    expect([1, 2]).toContain(r.code);
    clean(r.stderr);
    expect(r.stderr).toContain('error: forged \\x1b[2J\\x1b]0;title\\x07');
  });

  it('preview --require-live says once that the live state was not consulted: as the error, not also as a warning', async () => {
    const r = await runGovops(['preview', '--base', 'HEAD~1', '--require-live', 'h.yaml', '--retries', '0'], { cwd: dir, env: { GOVOPS_URL: url, GOVOPS_TOKEN: 'tok-1234' } });
    expect(r.code).toBe(1);
    expect(r.stderr.match(/live state not consulted/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: live state not consulted: service error: GET \/integrations: 403/);
  });

  it.each(['plan', 'apply', 'plan -o json', 'apply -o markdown'])('%s', async (command) => {
    const r = await runGovops([...command.split(' '), 'h.yaml', '--state', 'state.json', '--retries', '0'], { cwd: dir, env: { GOVOPS_URL: url, GOVOPS_TOKEN: 'tok-1234' } });
    expect(r.code).toBe(1);
    clean(r.stderr);
    expect(r.stderr).toContain('error: forged \\x1b[2J\\x1b]0;title\\x07');
  });
});

describe('state adopt: the live webhook name it warns about is escaped', () => {
  let dir: string;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-inject-adopt-'));
    await writeFile(
      join(dir, 'h.yaml'),
      'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: a\nspec:\n  url: https://h.example.com/a\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n',
    );
    // the live webhook 7 has a name a renamed manifest does not (someone else chose it)
    server = createServer((req, res) => {
      if (req.url !== '/webhooks/7') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 7, name: FORGED, url: 'https://h.example.com/a', global: false, notificationType: ['modelCreated'], actionType: 'triggered' }),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  });

  it('in the warning line on stderr', async () => {
    const r = await runGovops(['state', 'adopt', 'Webhook/a', '--id', '7', 'h.yaml', '--state', 'state.json', '--retries', '0'], { cwd: dir, env: { GOVOPS_URL: url, GOVOPS_TOKEN: 'tok-1234' } });
    expect(r.code, r.stderr).toBe(0);
    clean(r.stderr);
    expect(r.stderr).toMatch(/^warning: webhook 7 is named .*\\u202egnp\.exe/m);
  });
});

describe('state adopt and forget: the live id the service answered is escaped in their text output', () => {
  let dir: string;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-inject-adopt-id-'));
    await writeFile(
      join(dir, 'h.yaml'),
      'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: a\nspec:\n  url: https://h.example.com/a\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n',
    );
    // asked for webhook 7, the service answers with an id of its own making
    server = createServer((req, res) => {
      if (req.url !== '/webhooks/7') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: `7${FORGED}`, name: 'a', url: 'https://h.example.com/a', global: false, notificationType: ['modelCreated'], actionType: 'triggered' }),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  });

  it('in the lines on stdout that name it', async () => {
    const env = { GOVOPS_URL: url, GOVOPS_TOKEN: 'tok-1234' };
    const adopted = await runGovops(['state', 'adopt', 'Webhook/a', '--id', '7', 'h.yaml', '--state', 'state.json', '--retries', '0'], { cwd: dir, env });
    expect(adopted.code, adopted.stderr).toBe(0);
    clean(adopted.stdout);
    expect(adopted.stdout).toContain('as live id 7x\\nerror: forged \\x1b[2J');
    const forgot = await runGovops(['state', 'forget', 'Webhook/a', '--state', 'state.json'], { cwd: dir, env });
    expect(forgot.code, forgot.stderr).toBe(0);
    clean(forgot.stdout);
  });
});

describe('webhooks list: the recorded id of a webhook the service no longer lists is escaped in its note', () => {
  it('on stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'govops-inject-list-id-'));
    const server = createServer((req, res) => {
      if (req.url !== '/webhooks') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const entry = { kind: 'Webhook', name: 'a', id: `7${FORGED}`, origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: new Date(0).toISOString() };
      await writeFile(join(dir, 'state.json'), JSON.stringify({ version: 2, fingerprintKey: 'a'.repeat(64), resources: [entry] }));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await runGovops(['webhooks', 'list', '--state', 'state.json', '--retries', '0'], { cwd: dir, env: { GOVOPS_URL: url, GOVOPS_TOKEN: 'tok-1234' } });
      expect(r.code, r.stderr).toBe(0);
      clean(r.stderr);
      expect(r.stderr).toContain('note: Webhook/a is in the state (id 7x\\nerror: forged');
    } finally {
      await new Promise((done) => server.close(done));
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a manifest file name holding control sequences (a file a commit added) is escaped', () => {
  let dir: string;
  let sandbox: SandboxHandle;
  const hostile = 'lake\u001b[2J\u001b]0;title\u0007.yaml';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-inject-file-'));
    await writeFile(join(dir, hostile), manualLakeManifest('/sql/1'));
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('acknowledge: the lines naming the file', async () => {
    const r = await runGovops(['acknowledge', '--phase', 'create', '--dry-run'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    clean(r.stdout + r.stderr);
    expect(r.stdout).toContain('in lake\\x1b[2J\\x1b]0;title\\x07.yaml');
  });

  it('scripts: the acknowledgment line naming the file', async () => {
    const r = await runGovops(['scripts', 'lake', '--phase', 'create', '--retries', '0'], {
      cwd: dir,
      env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-1' },
    });
    expect(r.code, r.stderr).toBe(0);
    clean(r.stderr);
    expect(r.stderr).toContain('lake\\x1b[2J\\x1b]0;title\\x07.yaml:');
  });
});
