/** Shared harness of the webhook tests: a real sandbox (three callers) and a real receiver. */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import type { Logger } from '../../src/log.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Behaviour } from '../../src/sandbox/behaviours.js';

export const ADMIN = 'admin-token-h3';
export const ALICE = 'alice-token-h3';
export const BOB = 'bob-token-h3';
export const IDS = { admin: 1, alice: 2, bob: 3 } as const;

export interface Harness {
  url: string;
  call(method: string, path: string, token: string | undefined, body?: unknown): Promise<{ status: number; body: any }>;
  control(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  deliveryTimeoutMs?: number;
  dataFile?: string;
  deliveryHosts?: string | string[];
  deliveryLookup?: LookupFunction;
  logger?: Logger;
  behaviours?: Behaviour[];
}

/** One harness for the test file, reset (POST /_sandbox/reset) before each test; read it inside tests and hooks. */
export function harnessPerFile(): Harness {
  let started: Harness | undefined;
  beforeAll(async () => {
    started = await startHarness();
  });
  afterAll(async () => {
    await started?.close();
  });
  beforeEach(async () => {
    expect((await running().control('POST', '/_sandbox/reset')).status).toBeLessThan(300);
  });
  const running = (): Harness => {
    if (!started) throw new Error('the harness starts in beforeAll');
    return started;
  };
  return {
    get url() {
      return running().url;
    },
    call: (...args) => running().call(...args),
    control: (...args) => running().control(...args),
    close: () => running().close(),
  };
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'govops-wh-'));
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(
    tokensFile,
    JSON.stringify([
      { token: ADMIN, role: 'admin', userId: IDS.admin, name: 'Ada Admin' },
      { token: ALICE, role: 'user', userId: IDS.alice, name: 'Alice' },
      { token: BOB, role: 'user', userId: IDS.bob, name: 'Bob' },
    ]),
  );
  const sb = await startSandbox({
    port: 0,
    tokensFile,
    transitionMs: 50,
    deliveryTimeoutMs: opts.deliveryTimeoutMs ?? 300,
    ...(opts.dataFile ? { dataFile: opts.dataFile } : {}),
    ...(opts.deliveryHosts !== undefined ? { deliveryHosts: opts.deliveryHosts } : {}),
    ...(opts.deliveryLookup ? { deliveryLookup: opts.deliveryLookup } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.behaviours ? { behaviours: opts.behaviours } : {}),
  }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const send = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(sb.url + path, {
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* text body */
    }
    return { status: res.status, body: parsed as any };
  };
  return {
    url: sb.url,
    call: (method, path, token, body) => send(method, path, token === undefined ? {} : { authorization: `Bearer ${token}` }, body),
    control: (method, path, body) => send(method, path, { authorization: `Bearer ${ADMIN}` }, body),
    close: async () => {
      await sb.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  json: any;
}

/**
 * A real receiver on 127.0.0.1 (or `host`, another loopback address): `/slow` never answers, `/status/<n>` answers n, `/hold/<ms>` answers
 * 200 after ms, else 200 `{"received":true}`. `maxInFlight` is the most requests it held at once.
 */
export interface Receiver {
  url: string;
  received: Received[];
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  let inFlight = 0;
  const state = { maxInFlight: 0 };
  const server = http.createServer((req, res) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        json = undefined;
      }
      received.push({ path: req.url ?? '', headers: req.headers, raw, json });
      if (req.url === '/slow') return; // never answers
      const hold = /^\/hold\/(\d+)$/.exec(req.url ?? '');
      if (hold) {
        setTimeout(() => res.end('{}'), Number(hold[1]));
        return;
      }
      const m = /^\/status\/(\d+)$/.exec(req.url ?? '');
      const status = m ? Number(m[1]) : 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: true, status }));
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    received,
    get maxInFlight() {
      return state.maxInFlight;
    },
    set maxInFlight(v: number) {
      state.maxInFlight = v;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function sha1(secret: string, raw: string): string {
  return `sha1=${createHmac('sha1', secret).update(raw).digest('hex')}`;
}

export function hook(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { url, name: 'hook', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered', ...extra };
}

/** Create webhooks as `token`; fails the test unless every item was created. */
export async function createHooks(h: Harness, token: string, items: Record<string, unknown>[]): Promise<any[]> {
  const res = await h.call('POST', '/webhooks', token, { webhooks: items });
  if (res.status !== 200 || res.body.errors.length > 0) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.createdWebhooks;
}

/** Fire an event through the control API and wait until its deliveries are recorded. */
export async function fire(h: Harness, notificationType: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await h.control('POST', '/_sandbox/events?wait=true', { notificationType, ...extra });
  if (res.status !== 200) throw new Error(`fire failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
