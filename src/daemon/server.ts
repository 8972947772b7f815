/**
 * The daemon's HTTP endpoints: /healthz, /readyz, /metrics, /status and POST /hooks/git.
 * node:http, no framework; handlers are injected so this file only speaks HTTP.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { redactJsonText } from '../util/redact.js';
import { normalRequestPath } from '../util/http-target.js';
import { hostHeaderAllowed, misdirectedMessage } from '../util/host-header.js';
import { githubSignature, precheckPush, safeEqual, verifyPush, type HookVerdict } from './hooks.js';

/**
 * Readiness: `reason` says why not ready in words and codes only; `detail` holds the error text (which names hosts,
 * URLs and the service's messages). /readyz shows `detail` only to whom /status would be shown (the status token).
 */
export interface Readiness {
  ready: boolean;
  reason?: string;
  detail?: string;
}

export interface HttpHandlers {
  ready(): Readiness;
  status(): unknown;
  registry: Registry;
  /** Secret for POST /hooks/git; when unset every push notification is rejected (401). */
  hookSecret?: string;
  /**
   * Bearer token GET /status requires (it names resources, revisions, errors and webhook receivers); compared in
   * constant time. Unset: /status answers anyone who reaches the listen address, like /metrics.
   */
  statusToken?: string;
  /** A verified push notification: accepted, ignored (another branch), or refused because the daemon is stopping. */
  onPush(verdict: Extract<HookVerdict, { ok: true }>): boolean | 'stopping';
  /** Limits of POST /hooks/git (defaults: HOOK_LIMITS). */
  hookLimits?: Partial<HookLimits>;
  /** The clock of the rejected-notification log's throttle, monotonic ms (default performance.now: the time of day may be set back). */
  now?: () => number;
  /** Close a connection idle this long (default IDLE_CONNECTION_MS). */
  idleConnectionMs?: number;
}

/** A connection that sends or receives nothing for this long is closed (one that never sends a byte included). */
export const IDLE_CONNECTION_MS = 30_000;

/** Rejected push notifications are logged once per window, with how many more there were (anyone can send them). */
export const REJECTED_LOG_WINDOW_MS = 60_000;

/** How many accepted notifications are remembered at least (by id and GitHub body signature), to answer a replay without acting on it. */
export const DELIVERIES_KEPT = 1000;

export interface HookLimits {
  /** Largest body read (a push payload is a few KiB; GitHub caps deliveries at 25 MB). */
  maxBytes: number;
  /** Bodies read at the same time before their signature could be checked; more get 503. */
  maxConcurrent: number;
  /** Time allowed to receive a whole body. */
  bodyTimeoutMs: number;
}

export const HOOK_LIMITS: HookLimits = { maxBytes: 1024 * 1024, maxConcurrent: 8, bodyTimeoutMs: 10_000 };

export interface HttpServerHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Every answer passes the one redactor (string literals of JSON, label values of /metrics). */
function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = redactJsonText(typeof body === 'string' ? body : `${JSON.stringify(body, null, 2)}\n`);
  // x-govops: a client pointed at the daemon instead of the service can tell (`GOVOPS_URL` set to the daemon's URL)
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'x-govops': 'daemon' });
  res.end(text);
}

/** Whether the request's `Authorization: Bearer <token>` is `token` (constant-time). */
function bearerMatches(req: IncomingMessage, token: string): boolean {
  const value = req.headers.authorization;
  const given = typeof value === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(value)?.[1] : undefined;
  return given !== undefined && safeEqual(given, token);
}

/** What `/status` shows (and `/readyz`'s error text) is for anyone when no status token is set, else for its bearer. */
function statusVisible(handlers: { statusToken?: string }, req: IncomingMessage): boolean {
  return handlers.statusToken === undefined || bearerMatches(req, handlers.statusToken);
}

class BodyError extends Error {
  constructor(
    readonly status: 408 | 413,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Read a body while it streams in, giving up (and dropping what was read) as soon as it passes
 * `limit` bytes or takes longer than `timeoutMs`.
 */
function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err?: BodyError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) {
        chunks = [];
        req.pause();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > limit) return finish(new BodyError(413, `body larger than ${limit} bytes`));
      chunks.push(c);
    };
    const onEnd = (): void => finish();
    const onError = (): void => finish(new BodyError(408, 'request body broken off'));
    const onAborted = (): void => finish(new BodyError(408, 'request body broken off'));
    const timer = setTimeout(() => finish(new BodyError(408, `body not received within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** Whether the request announces a body (a length above 0, or chunks). */
function carriesBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Close the connection once the answer is sent, without reading the rest of the request body. */
function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('connection', 'close');
  res.once('finish', () => req.socket.destroySoon());
}

/** Answer and close the connection without reading the rest of the request body. */
function sendAndClose(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  closeAfterAnswer(req, res);
  send(res, status, body);
}

/** What one server's handlers share: the handlers, the notification limits, and the unauthenticated uploads in progress. */
interface ServerContext {
  listen: { host: string; port: number; anyHost?: true; loopbackOnly?: boolean };
  handlers: HttpHandlers;
  limits: HookLimits;
  logger: Logger;
  /** GitHub bodies being read before their signature could be checked. */
  uploads: { unauthenticated: number };
  /** The rejected-notification log's window: when it began, and the rejections not logged in it. */
  rejections: { since: number; unlogged: number };
  /** Keys (ids, GitHub body signatures) of the notifications acted on (the newest DELIVERIES_KEPT, oldest first). */
  deliveries: Set<string>;
}

/**
 * What identifies a delivery: its id (`X-GitHub-Delivery`, GitLab's `X-Gitlab-Event-UUID`) when the sender gives
 * one, and for GitHub the signature of its body. A signed notification captured once can be sent again by whoever
 * captured it: each copy would fetch again (and, with a PostgreSQL state, wake the leader); a repeat of a delivery
 * already acted on is answered without acting. GitHub signs the body only, not the id header, so a copy with another
 * id (or none) is known by its signature. (GitLab's token is the secret itself: whoever captured it can send anything.)
 */
function deliveryKeys(req: IncomingMessage, verdict: Extract<HookVerdict, { ok: true }>, body: Buffer, secret: string): string[] {
  const id = req.headers['x-github-delivery'] ?? req.headers['x-gitlab-event-uuid'];
  const keys = typeof id === 'string' && id !== '' ? [`id:${id}`] : [];
  if (verdict.provider === 'github') keys.push(`signed:${githubSignature(secret, body)}`);
  return keys;
}

/** Remember a delivery acted on (the oldest is forgotten past DELIVERIES_KEPT). */
function rememberDelivery(ctx: ServerContext, keys: readonly string[]): void {
  for (const key of keys) ctx.deliveries.add(key);
  // two keys at most per delivery: the last DELIVERIES_KEPT deliveries at least are known
  while (ctx.deliveries.size > 2 * DELIVERIES_KEPT) ctx.deliveries.delete(ctx.deliveries.values().next().value!);
}

const ROUTES: Record<string, string> = {
  '/healthz': 'GET',
  '/readyz': 'GET',
  '/metrics': 'GET',
  '/status': 'GET',
  '/hooks/git': 'POST',
};

async function handle(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { handlers, listen } = ctx;
  // (a target not in normal form, `/hooks/git/../../status`, is malformed: never routed where it resolves)
  const path = normalRequestPath(req.url);
  if (path === undefined) return sendAndClose(req, res, 400, { error: 'malformed request target' });
  // Under `npm start` (loopbackOnly): DNS-rebinding protection, only loopback Host names are answered.
  // No answer repeats what the request said (its path, method or Host): every answer passes the redactor, so an echo
  // would tell anyone whether a guess is a secret in force (`[redacted]` in the answer).
  if (listen.loopbackOnly && !hostHeaderAllowed(listen.host, req.headers.host)) {
    return sendAndClose(req, res, 421, { error: 'misdirected', message: misdirectedMessage() });
  }
  const method = req.method ?? 'GET';
  const allowed = ROUTES[path];
  // Only a push notification's body is read (bounded in size and time). Any other request that carries one (`POST
  // /status`, `GET /healthz` with a body) is answered and its connection closed: kept alive, Node reads the unread
  // body before the next request, and a body trickled in held the connection until the request timeout (minutes).
  if (!(path === '/hooks/git' && method === 'POST') && carriesBody(req)) closeAfterAnswer(req, res);
  if (!allowed) return send(res, 404, { error: 'not found', message: `the daemon answers ${Object.keys(ROUTES).join(', ')}` });
  if (method !== allowed && !(allowed === 'GET' && method === 'HEAD')) {
    res.setHeader('allow', allowed === 'GET' ? 'GET, HEAD' : allowed);
    return send(res, 405, { error: 'method not allowed', message: `${path} takes ${allowed === 'GET' ? 'GET or HEAD' : allowed}` });
  }
  switch (path) {
    case '/healthz':
      return send(res, 200, 'ok\n', 'text/plain; charset=utf-8');
    case '/readyz': {
      const { detail, ...r } = handlers.ready();
      // the error text only where /status would be shown
      const shown = detail !== undefined && statusVisible(handlers, req);
      return send(res, r.ready ? 200 : 503, shown ? { ...r, detail } : r);
    }
    case '/metrics':
      return send(res, 200, await handlers.registry.metrics(), handlers.registry.contentType);
    case '/status':
      if (!statusVisible(handlers, req)) {
        res.setHeader('www-authenticate', 'Bearer realm="govops status"');
        return send(res, 401, { error: 'unauthorized', message: '/status needs Authorization: Bearer <token> (the daemon runs with --status-token-file or GOVOPS_STATUS_TOKEN)' });
      }
      return send(res, 200, handlers.status());
    case '/hooks/git':
      return hook(ctx, req, res);
  }
}

/** The body of a push notification, read only once the headers allow it; undefined when refused (answered). */
async function hookBody(ctx: ServerContext, req: IncomingMessage, authenticated: boolean, reject: (status: number, reason: string, extra?: Record<string, string>) => void): Promise<Buffer | undefined> {
  const { limits, uploads } = ctx;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limits.maxBytes) return void reject(413, `body larger than ${limits.maxBytes} bytes`);
  const counted = !authenticated;
  if (counted && uploads.unauthenticated >= limits.maxConcurrent) {
    return void reject(503, `more than ${limits.maxConcurrent} notifications being received; retry`, { 'retry-after': '1' });
  }
  if (counted) uploads.unauthenticated++;
  try {
    return await readBody(req, limits.maxBytes, limits.bodyTimeoutMs);
  } catch (err) {
    if (err instanceof BodyError) return void reject(err.status, err.message);
    throw err;
  } finally {
    if (counted) uploads.unauthenticated--;
  }
}

/**
 * Log a rejected notification: the first of each window, and at the next logged one how many were not (anyone who
 * reaches the port can send thousands a second; each used to be a line).
 */
function logRejection(ctx: ServerContext, fields: { reason: string; status: number; remote: string | undefined }): void {
  const now = ctx.handlers.now ? ctx.handlers.now() : performance.now();
  const r = ctx.rejections;
  if (now - r.since < REJECTED_LOG_WINDOW_MS && r.since !== 0) {
    r.unlogged++;
    return;
  }
  const unlogged = r.unlogged;
  ctx.rejections = { since: now, unlogged: 0 };
  ctx.logger.warn(unlogged > 0 ? { ...fields, unloggedBefore: unlogged } : fields, 'push notification rejected');
}

async function hook(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { handlers, logger } = ctx;
  const reject = (status: number, reason: string, extra: Record<string, string> = {}): void => {
    logRejection(ctx, { reason, status, remote: req.socket.remoteAddress });
    sendAndClose(req, res, status, { error: status === 401 ? 'unauthorized' : 'rejected', message: reason }, extra);
  };
  // Everything the headers can decide is decided before reading a byte of the body.
  const pre = precheckPush(req.headers, handlers.hookSecret);
  if (!pre.ok) return reject(401, pre.reason);
  const body = await hookBody(ctx, req, pre.authenticated, reject);
  if (body === undefined) return;
  const verdict = verifyPush(req.headers, body, handlers.hookSecret);
  if (!verdict.ok) return reject(401, verdict.reason);
  if (verdict.malformed) return reject(400, `malformed push notification: ${verdict.malformed}`);
  if (verdict.kind === 'ping') {
    logger.info({ provider: verdict.provider, event: verdict.event }, 'push notification ping');
    return send(res, 200, { accepted: false, message: 'pong: notifications reach govops' });
  }
  if (verdict.kind === 'other') {
    logger.info({ provider: verdict.provider, event: verdict.event }, 'push notification ignored: not a push event');
    // (the event header is not signed: a delivery sent again may carry any; repeated here, a guess of a secret came
    // back [redacted], so the answer names no event; the log, the operator's, does)
    return send(res, 200, { accepted: false, message: 'ignored: only a push to the followed branch triggers a fetch (this event is not a push)' });
  }
  const delivery = deliveryKeys(req, verdict, body, handlers.hookSecret!);
  if (delivery.some((key) => ctx.deliveries.has(key))) {
    return send(res, 200, { accepted: false, message: 'already received: this delivery was acted on' });
  }
  const accepted = handlers.onPush(verdict);
  if (accepted === true) rememberDelivery(ctx, delivery);
  if (accepted === 'stopping') {
    return sendAndClose(req, res, 503, { accepted: false, message: 'the daemon is stopping: retry' }, { 'retry-after': '5' });
  }
  logger.info({ provider: verdict.provider, event: verdict.event, ref: verdict.ref, accepted }, 'push notification');
  // (the ref is not repeated: a committer names branches and tags, and the Git host shows the answer; through the
  // redactor, a ref named after a right guess of a secret came back [redacted])
  const why = verdict.ref?.startsWith('refs/heads/') === false ? 'the pushed ref is not a branch (a tag push moves no branch)' : 'the pushed branch is not the watched branch';
  return send(res, 202, { accepted, message: accepted ? 'fetch triggered' : `ignored: ${why}` });
}

export async function startHttpServer(
  listen: { host: string; port: number; anyHost?: true; loopbackOnly?: boolean },
  handlers: HttpHandlers,
  logger: Logger,
): Promise<HttpServerHandle> {
  const ctx: ServerContext = { listen, handlers, limits: { ...HOOK_LIMITS, ...handlers.hookLimits }, logger, uploads: { unauthenticated: 0 }, rejections: { since: 0, unlogged: 0 }, deliveries: new Set() };
  const server: Server = createServer((req, res) => {
    void handle(ctx, req, res).catch((err: unknown) => {
      logger.error({ err: { message: (err as Error).message } }, 'http handler failed');
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
      else res.end();
    });
  });
  // Node closes a request whose headers or body are slow, but keeps a connection that never sends a byte: a few
  // thousand of those would use up the process's file descriptors (the manifests' reads, /healthz).
  server.setTimeout(handlers.idleConnectionMs ?? IDLE_CONNECTION_MS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // `:PORT`: no host, so that IPv6 is bound too (a pod probed on its IPv6 address); see ListenAddress.anyHost.
    server.listen(listen.port, listen.anyHost ? undefined : listen.host, () => {
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
