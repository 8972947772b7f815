/**
 * The canary test of issue #9: a unique canary in every credential field of every kind (the examples
 * cover every kind and authentication variant), half through fromEnv and half through fromFile, the API
 * token a canary too, against a service that echoes the request in every error it can return (400, 409,
 * 422, 500, webhook item errors, script errors). Every stdout and stderr (trace logs included) of
 * validate, plan, apply, scripts, preview and the daemon, its /status, /readyz and /metrics, the state
 * file and the daemon's work folder (snapshots) are searched: no canary anywhere, in any encoding.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoService, type EchoService } from '../helpers/echo-service.js';
import { CLI, runGovops, type CliResult } from '../helpers/cli.js';

const EXAMPLES = fileURLToPath(new URL('../../examples', import.meta.url));
const RUN = randomBytes(4).toString('hex');
/** The part of a canary no encoding changes (letters, digits, '-'): what the search looks for. */
const core = (i: number | string) => `CANARY${i}-${RUN}`;
/** A canary value: its core, then characters JSON and URL encodings both rewrite. */
const canary = (i: number | string) => `${core(i)}-q"t\\b/s ü+&=%;<x>`;

async function filesUnder(dir: string): Promise<string> {
  let out = '';
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    const full = join(e.parentPath, e.name);
    out += `${full}\n`;
    if (e.isFile()) out += `${await readFile(full, 'utf8')}\n`;
  }
  return out;
}

describe('canary: no secret value in any output, whatever the service echoes', () => {
  let echo: EchoService;
  let dir: string;
  const env: Record<string, string | undefined> = { GOVOPS_DEBUG: '1' };
  const cores: string[] = [];
  const outputs: Array<{ what: string; text: string }> = [];
  const refs = { env: 0, file: 0 };

  const run = async (args: string[]): Promise<CliResult> => {
    const r = await runGovops([...args, '--log-level', 'trace'], { cwd: dir, env, timeoutMs: 120_000 });
    outputs.push({ what: args.join(' '), text: `${r.stdout}\n${r.stderr}` });
    return r;
  };

  beforeAll(async () => {
    echo = await startEchoService();
    dir = await mkdtemp(join(tmpdir(), 'govops-canary-'));
    await mkdir(join(dir, 'm', 'secrets'), { recursive: true });
    // Every reference of the examples gets its own canary: even ones by fromEnv, odd ones by fromFile.
    let i = 0;
    const writes: Array<Promise<void>> = [];
    for (const f of (await readdir(EXAMPLES)).filter((n) => n.endsWith('.yaml'))) {
      let text = await readFile(join(EXAMPLES, f), 'utf8');
      text = text.replace(/\{ fromEnv: (GOVOPS_SECRET_EXAMPLE_[A-Z0-9_]+) \}/g, (_m, name: string) => {
        const n = i++;
        const value = name.includes('CREDENTIAL') ? JSON.stringify({ type: 'service_account', private_key: canary(n) }) : canary(n);
        cores.push(core(n));
        if (n % 2 === 0) {
          const varName = `GOVOPS_SECRET_CANARY_${n}`;
          env[varName] = value;
          refs.env++;
          return `{ fromEnv: ${varName} }`;
        }
        writes.push(writeFile(join(dir, 'm', 'secrets', `s${n}`), `${value}\n`));
        refs.file++;
        return `{ fromFile: secrets/s${n} }`;
      });
      await writeFile(join(dir, 'm', f), text);
    }
    env.GOVOPS_URL = echo.url;
    env.GOVOPS_TOKEN = canary('token');
    cores.push(core('token'));
    await Promise.all(writes); // the secret files written above
  });

  afterAll(async () => {
    await echo.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('has a canary in every credential reference of every example, by both kinds of reference', () => {
    expect(refs.env).toBeGreaterThanOrEqual(6);
    expect(refs.file).toBeGreaterThanOrEqual(6);
  });

  it('the one-shot commands fail as the service makes them fail, and print no canary', async () => {
    expect((await run(['validate', 'm'])).code).toBe(0);
    for (const o of [[], ['-o', 'json'], ['-o', 'markdown']]) expect((await run(['plan', 'm', ...o])).code).toBe(0);
    for (const o of [[], ['-o', 'json'], ['-o', 'markdown']]) expect((await run(['apply', 'm', '--timeout', '5s', '--state', 'state.json', ...o])).code).toBe(1);
    expect((await run(['scripts', 'sales-warehouse', '--phase', 'create', 'm'])).code).toBe(1);
    expect((await run(['scripts', 'sales-warehouse', '--phase', 'cleanup', 'm'])).code).toBe(1);
    // the preview dry-runs every integration (allowed to send their secrets: no base to compare with), and the
    // service rejects every dry run, echoing the request: exit 1, the comment holds the answers, redacted
    const preview = await run(['preview', 'm', '--dry-run-new-targets']);
    expect(preview.code).toBe(1);
    expect(preview.stdout).toMatch(/\*\*Dry run\*\* `(POST|PUT|DELETE) \/integrations[^`]*\?dryRun=true`: ❌ (failed|rejected) — [^\n]*\\?\[redacted\\?\]/);
    // A saved plan holds fingerprints, never values; applying it fails as the service makes it fail.
    expect((await run(['plan', 'm', '--out', 'saved.plan'])).code).toBe(0);
    outputs.push({ what: 'saved plan file', text: await readFile(join(dir, 'saved.plan'), 'utf8') });
    expect((await run(['apply', 'saved.plan', '--timeout', '5s'])).code).toBe(1);
    // The service did echo: every error status, webhook item errors, script errors.
    expect([...new Set(echo.statuses)].sort()).toEqual(expect.arrayContaining([200, 400, 409, 422, 500]));
    const all = outputs.map((o) => o.text).join('\n');
    expect(all).toContain('[redacted]');
    expect(all).toMatch(/^(trace|debug): /m); // trace and debug logs were written
  });

  it('the daemon: its log, /status, /readyz, /metrics, state and work folder hold no canary', async () => {
    const home = join(dir, 'daemon');
    // A notification receiver: every event body is searched too.
    const events: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        events.push(body);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    const child = spawn(
      process.execPath,
      [CLI, 'run', '--dir', join(dir, 'm'), '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--log-level', 'trace', '--timeout', '5s', '--notify-url', notifyUrl],
      { cwd: dir, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    try {
      let url: string | undefined;
      const deadline = Date.now() + 30_000;
      while (!url && Date.now() < deadline) {
        url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
        if (!url) await new Promise((r) => setTimeout(r, 50));
      }
      expect(url, out).toBeDefined();
      let status: { lastReconcile?: { result: string }; lastError?: { failures: unknown[] } } = {};
      while (Date.now() < deadline) {
        status = (await (await fetch(`${url}/status`)).json()) as typeof status;
        if (status.lastReconcile && status.lastError?.failures.length) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status.lastError?.failures.length, JSON.stringify(status)).toBeGreaterThan(0);
      for (const p of ['/status', '/readyz', '/metrics']) outputs.push({ what: p, text: await (await fetch(`${url}${p}`)).text() });
      while (events.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(events.length).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
      await exited;
      await new Promise((r) => receiver.close(r));
    }
    outputs.push({ what: 'notification bodies', text: events.join('\n') });
    expect(events.join('\n')).toContain('io.govops.reconcile.failed');
    outputs.push({ what: 'daemon log', text: out });
    outputs.push({ what: 'daemon state and work folder', text: await filesUnder(home) });
    outputs.push({ what: 'apply state', text: await readFile(join(dir, 'state.json'), 'utf8').catch(() => '') });
    const names = (await readdir(home, { recursive: true })).map(String);
    expect(names.some((n) => n.startsWith('work/snapshots/'))).toBe(true);
    expect(names.filter((n) => n.includes('secrets'))).toEqual([]);
  });

  it('no canary, in any encoding, anywhere', () => {
    expect(outputs.length).toBeGreaterThanOrEqual(16);
    const leaks: string[] = [];
    for (const o of outputs) for (const c of cores) if (o.text.includes(c)) leaks.push(`${o.what}: ${c}: …${o.text.slice(Math.max(0, o.text.indexOf(c) - 80), o.text.indexOf(c) + 60)}…`);
    expect(leaks).toEqual([]);
  });
});
