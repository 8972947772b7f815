/** Shared pieces of the daemon tests: temp dirs, waiting, HTTP, manifests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer } from 'node:net';
import { Writable } from 'node:stream';
import type { RunSettings } from '../../src/daemon/run.js';
import type { Revision, Source } from '../../src/sources/types.js';
import { CLI } from '../helpers/cli.js';
import { lakehouseManifest } from '../helpers/manifests.js';

export class Cleanup {
  private fns: Array<() => Promise<unknown> | unknown> = [];
  add(fn: () => Promise<unknown> | unknown): void {
    this.fns.push(fn);
  }
  async run(): Promise<void> {
    for (const fn of this.fns.reverse()) {
      try {
        await fn();
      } catch {
        // keep cleaning
      }
    }
    this.fns = [];
  }
  async tmp(prefix: string): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), prefix));
    this.add(() => rm(d, { recursive: true, force: true }));
    return d;
  }
}

export async function until<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`${what} not met within ${timeoutMs}ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // text
  }
  return { status: res.status, body };
}

/** A lakehouse integration (autoBootstrap true) with its token from the environment. */
export function lakehouse(name: string, httpPath: string, host = 'lake1.example.com'): string {
  return lakehouseManifest({ name, host, httpPath, tokenEnv: 'GOVOPS_SECRET_TEST_LAKE_TOKEN' });
}

export function webhook(name: string, url: string): string {
  return `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: ${url}
  global: true
  notificationType: [healthCheckFailed]
  actionType: triggered
`;
}

export const GOVOPS_SECRET_LAKE_TOKEN = 'lake-t0ken-value-xyz';

export interface DaemonProcess {
  child: ChildProcess;
  /** stdout and stderr together, as they came. */
  out: () => string;
  /** stdout alone (the logs when not on a TTY). */
  stdout: () => string;
  /** The address from the "govops daemon listening" log line. */
  url: Promise<string>;
  exit: Promise<number | null>;
}

/**
 * `govops run ARGS` as a real process (the built CLI). Cleanup stops it with `stopSignal` (default SIGTERM) if it
 * is still running and waits for its exit.
 */
export function spawnRun(
  cleanup: Cleanup,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; stopSignal?: NodeJS.Signals },
): DaemonProcess {
  const child = spawn(process.execPath, [CLI, 'run', ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  let resolveUrl!: (u: string) => void;
  const url = new Promise<string>((r) => (resolveUrl = r));
  const onData = (d: Buffer): void => {
    out += d.toString();
    const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*govops daemon listening/.exec(out);
    if (m) resolveUrl(m[1]!);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  cleanup.add(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(opts.stopSignal ?? 'SIGTERM');
      await exit;
    }
  });
  return { child, out: () => out, stdout: () => stdout, url, exit };
}

/**
 * Settings of an in-process daemon for tests: state and work folder under `home`, listening on port 0, no
 * self-heal, prune or replace, long intervals (tests trigger what they need), short debounce and retries.
 */
export function runSettings(home: string, overrides: Partial<RunSettings> & Record<string, unknown>): RunSettings {
  return {
    branch: 'main',
    path: '.',
    intervalMs: 60_000,
    resyncMs: 60_000,
    selfHeal: false,
    plan: { prune: false, allowReplace: false },
    listen: { host: '127.0.0.1', port: 0 },
    statePath: join(home, 'state.json'),
    workdir: join(home, 'work'),
    debounceMs: 100,
    retryBaseMs: 100,
    retryMaxMs: 500,
    tuning: { timeoutMs: 20_000 },
    ...overrides,
  };
}

/** A loopback port nothing listens on (a service or database that refuses connections). */
export async function closedPort(): Promise<number> {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** A source that has one revision from the start, and gives another on `push`. */
export class OneRevisionSource implements Source {
  private cb?: (r: Revision) => void;
  private rev: Revision;
  constructor(rev: Partial<Revision> = {}) {
    this.rev = { id: 'rev1', root: '/nonexistent', paths: ['.'], display: 'stub', observedAt: new Date(0).toISOString(), order: 1, ...rev };
  }
  describe() {
    return { type: 'dir' as const, location: '/nonexistent' };
  }
  async start(): Promise<void> {
    this.cb?.(this.rev);
  }
  async stop(): Promise<void> {}
  onRevision(cb: (r: Revision) => void): void {
    this.cb = cb;
  }
  current(): Revision | undefined {
    return this.rev;
  }
  push(id: string): void {
    this.rev = { ...this.rev, id };
    this.cb?.(this.rev);
  }
  async refresh(): Promise<void> {}
  async retain(): Promise<void> {}
  health() {
    return { consecutiveFailures: 0 };
  }
}

/**
 * An in-process daemon's settings whose PostgreSQL state nothing answers at (it never gets the lease: a standby, and
 * not ready), watching an empty folder under `home` (made here).
 */
export async function unreachableStateSettings(home: string, overrides: Partial<RunSettings> & Record<string, unknown> = {}): Promise<RunSettings> {
  await mkdir(join(home, 'm'), { recursive: true });
  await writeFile(join(home, 'm', 'empty.yaml'), '');
  const port = await closedPort();
  return runSettings(home, { dir: join(home, 'm'), intervalMs: 600_000, resyncMs: 600_000, statePath: `postgres://govops@127.0.0.1:${port}/govops`, ...overrides });
}

/** A stream for a pino logger that keeps each JSON log line, parsed, in `logs`. */
export function jsonLogSink(): { logs: Array<Record<string, unknown>>; sink: Writable } {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { logs, sink };
}

/** The flags of `govops run` at their defaults, as commander gives them to settingsFrom (no source chosen). */
export const RUN_FLAG_DEFAULTS = {
  branch: 'main',
  path: '.',
  interval: '60s',
  resync: '5m',
  concurrency: '8',
  timeout: '10m',
  listen: ':8080',
  state: '.govops/state.json',
  grace: '30s',
};
