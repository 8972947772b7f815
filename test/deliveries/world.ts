/**
 * Harness of the webhook delivery tests: a real sandbox (dev mode, short receiver deadline), a real
 * receiver on 127.0.0.1 whose behaviour per path can change during a test, and helpers for the
 * service and control APIs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

/** What the receiver does for a path: answer 200, answer a status, never answer, or hold until released. */
export type Behaviour = 'ok' | 'hang' | 'hold' | number;

export interface TestReceiver {
  url: string;
  /** Requests received per path. */
  hits: Map<string, number>;
  set(path: string, b: Behaviour): void;
  /** Answer every held request with 200. */
  release(): void;
  /** Resolves once a request is held. */
  held(n?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startTestReceiver(): Promise<TestReceiver> {
  const behaviour = new Map<string, Behaviour>();
  const hits = new Map<string, number>();
  const holding: http.ServerResponse[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const b = behaviour.get(path) ?? 'ok';
      if (b === 'hang') return;
      if (b === 'hold') {
        holding.push(res);
        for (const w of waiters.splice(0)) {
          if (holding.length >= w.n) w.resolve();
          else waiters.push(w);
        }
        return;
      }
      res.writeHead(b === 'ok' ? 200 : b, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    set: (path, b) => void behaviour.set(path, b),
    release() {
      for (const res of holding.splice(0)) res.writeHead(200).end('{}');
    },
    held: (n = 1) => (holding.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface World {
  sb: SandboxHandle;
  rx: TestReceiver;
  url: string;
  admin: string;
  user: string;
  /** A webhook API call (Bearer token). */
  call(method: string, path: string, body?: unknown, token?: string): Promise<any>;
  /** A control API call (dev mode; the admin token is sent too, for sandboxes that require it). */
  control(method: string, path: string, body?: unknown): Promise<any>;
  createHooks(items: Array<Record<string, unknown>>, token?: string): Promise<any[]>;
  fire(notificationType: string, extra?: Record<string, unknown>): Promise<any>;
  seed(spec: Record<string, unknown>): Promise<any>;
  /** Request log entries for GET /webhooks/history since the last clear. */
  historyRequests(): Promise<Array<{ method: string; path: string; query: Record<string, string> }>>;
  clearRequests(): Promise<void>;
  close(): Promise<void>;
}

async function send(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text === '' ? undefined : JSON.parse(text);
}

export async function startWorld(opts: { deliveryTimeoutMs?: number } = {}): Promise<World> {
  const sb = await startSandbox({ port: 0, dev: true, transitionMs: 50, deliveryTimeoutMs: opts.deliveryTimeoutMs ?? 400 });
  const rx = await startTestReceiver();
  const auth = (t: string) => ({ authorization: `Bearer ${t}` });
  const w: World = {
    sb,
    rx,
    url: sb.url,
    admin: sb.adminToken,
    user: sb.userToken,
    call: (method, path, body, token = sb.adminToken) => send(sb.url + path, method, auth(token), body),
    control: (method, path, body) => send(sb.url + path, method, auth(sb.adminToken), body),
    async createHooks(items, token = sb.adminToken) {
      const res = await w.call('POST', '/webhooks', { webhooks: items }, token);
      if (res.errors.length) throw new Error(`create failed: ${JSON.stringify(res.errors)}`);
      return res.createdWebhooks;
    },
    fire: (notificationType, extra = {}) => w.control('POST', '/_sandbox/events?wait=true', { notificationType, ...extra }),
    seed: (spec) => w.control('POST', '/_sandbox/webhooks/history', spec),
    async historyRequests() {
      const { requests } = await w.control('GET', '/_sandbox/requests');
      return requests.filter((r: { path: string }) => r.path === '/webhooks/history');
    },
    async clearRequests() {
      await w.control('DELETE', '/_sandbox/requests');
    },
    async close() {
      await sb.close();
      await rx.close();
    },
  };
  return w;
}

/** A webhook item for POST /webhooks delivering to the receiver's `path`. */
export function hookItem(w: World, name: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { url: `${w.rx.url}${path}`, name, global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered', ...extra };
}
