/**
 * The daemon's HTTP endpoints: /healthz, /readyz, /metrics, /status and POST /hooks/git.
 * node:http, no framework; handlers are injected so this file only speaks HTTP.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { verifyPush, type HookVerdict } from './hooks.js';

export interface HttpHandlers {
  ready(): { ready: boolean; reason?: string };
  status(): unknown;
  registry: Registry;
  /** Secret for POST /hooks/git; when unset every push notification is rejected (401). */
  hookSecret?: string;
  /** A verified push notification; returns false when it was ignored (another branch). */
  onPush(verdict: Extract<HookVerdict, { ok: true }>): boolean;
}

export interface HttpServerHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_HOOK_BODY = 5 * 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = typeof body === 'string' ? body : `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(text);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startHttpServer(
  listen: { host: string; port: number },
  handlers: HttpHandlers,
  logger: Logger,
): Promise<HttpServerHandle> {
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      logger.error({ err: { message: (err as Error).message } }, 'http handler failed');
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const method = req.method ?? 'GET';
    const known: Record<string, string> = {
      '/healthz': 'GET',
      '/readyz': 'GET',
      '/metrics': 'GET',
      '/status': 'GET',
      '/hooks/git': 'POST',
    };
    const allowed = known[path];
    if (!allowed) return send(res, 404, { error: `not found: ${path}` });
    if (method !== allowed && !(allowed === 'GET' && method === 'HEAD')) {
      res.setHeader('allow', allowed === 'GET' ? 'GET, HEAD' : allowed);
      return send(res, 405, { error: `method ${method} not allowed on ${path}` });
    }
    switch (path) {
      case '/healthz':
        return send(res, 200, 'ok\n', 'text/plain; charset=utf-8');
      case '/readyz': {
        const r = handlers.ready();
        return send(res, r.ready ? 200 : 503, r);
      }
      case '/metrics':
        return send(res, 200, await handlers.registry.metrics(), handlers.registry.contentType);
      case '/status':
        return send(res, 200, handlers.status());
      case '/hooks/git': {
        const body = await readBody(req, MAX_HOOK_BODY);
        if (!body) return send(res, 413, { error: 'body too large' });
        const verdict = verifyPush(req.headers, body, handlers.hookSecret);
        if (!verdict.ok) {
          logger.warn({ reason: verdict.reason, remote: req.socket.remoteAddress }, 'push notification rejected');
          return send(res, 401, { error: 'unauthorized', message: verdict.reason });
        }
        const accepted = handlers.onPush(verdict);
        logger.info({ provider: verdict.provider, event: verdict.event, ref: verdict.ref, accepted }, 'push notification');
        return send(res, 202, { accepted, message: accepted ? 'fetch triggered' : `ignored: ${verdict.ref} is not the watched branch` });
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  return {
    url: `http://${shown}:${addr.port}`,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
