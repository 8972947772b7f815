/**
 * The sandbox's HTTP shell: node:http, body limits, JSON/YAML bodies, fault injection, authentication,
 * routing to Route handlers, error bodies `{statusCode, error, message}` everywhere, and the request log.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../log.js';
import { requestPath } from '../util/http-target.js';
import { authenticate } from './auth.js';
import { guardControl, type ControlPolicy } from './control-guard.js';
import { hostHeaderAllowed, misdirectedMessage } from '../util/host-header.js';
import type { FaultSet } from './faults.js';
import { errorResponse, HttpError, type Caller, type Route, type SandboxRequest, type SandboxResponse } from './http.js';
import type { RequestLog } from './requestlog.js';
import { Router } from './router.js';

export const CONTROL_PREFIX = '/_sandbox';
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface ServerDeps {
  routes: Route[];
  callers: ReadonlyMap<string, Caller>;
  faults: FaultSet;
  log: RequestLog;
  logger: Logger;
  bodyLimit: number;
  /** Control API access (default: the admin token needed, loopback origins only). */
  control?: ControlPolicy;
  /** The time of the request log's entries (ms since the epoch; default the system's). */
  now?: () => number;
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => (tooLarge ? reject(new BodyTooLarge()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/**
 * Whether a path is the control API's, read as the router reads it: empty segments are ignored, so
 * `//_sandbox/reset` and `/_sandbox//faults` are control paths too (they reach the control routes).
 */
export function isControlPath(path: string): boolean {
  return path.split('/').find((s) => s !== '') === CONTROL_PREFIX.slice(1);
}

function isYaml(contentType: string | undefined): boolean {
  return /\b(ya?ml)\b/i.test(contentType ?? '');
}

/** `application/json`, or a `+json` type (`application/vnd.x+json`), parameters (charset) allowed. */
function isJson(contentType: string | undefined): boolean {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(media);
}

function yamlBody(raw: string): unknown {
  return parseYaml(raw, { maxAliasCount: 100, prettyErrors: false });
}

/**
 * Parse a body: JSON, or YAML on routes that accept it (integration endpoints, interface 4: "a YAML
 * payload is also accepted"). YAML is recognised by a YAML content type, and also when a body sent
 * as JSON (the documented `Content-Type`) is not JSON but a YAML mapping or sequence.
 */
export function parseBody(raw: string, contentType: string | undefined, yamlAllowed: boolean, typeRequired = false): unknown {
  if (raw.trim() === '') return undefined;
  if (typeRequired && !isJson(contentType) && !isYaml(contentType)) {
    // Interface 4: requests carry the JSON Content-Type; a body without it (none, text/plain...) is not read.
    throw new HttpError(
      415,
      `A request body needs "Content-Type: application/json"${yamlAllowed ? ' (or a YAML type)' : ''}; got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`,
    );
  }
  if (isYaml(contentType)) {
    if (!yamlAllowed) throw new HttpError(415, 'Only JSON bodies are accepted here (YAML is accepted for integration requests)');
    try {
      return yamlBody(raw);
    } catch (err) {
      throw new HttpError(400, `Malformed YAML body: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    if (yamlAllowed) {
      try {
        const doc = yamlBody(raw);
        if (typeof doc === 'object' && doc !== null) return doc;
      } catch {
        // neither JSON nor YAML: report the JSON error below
      }
    }
    throw new HttpError(400, `Malformed JSON body: ${(err as Error).message}`);
  }
}

function send(res: ServerResponse, out: SandboxResponse): void {
  const headers: Record<string, string> = { ...out.headers };
  let payload: string | Buffer;
  if (out.text !== undefined) {
    payload = out.text;
    headers['content-type'] ??= 'text/plain; charset=utf-8';
  } else {
    payload = out.rawJson ?? (out.body === undefined ? '' : JSON.stringify(out.body));
    if (payload.length > 0) headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  headers['content-length'] = String(bytes.length);
  res.writeHead(out.status, headers);
  res.end(bytes);
}

export function createSandboxServer(deps: ServerDeps): Server {
  const router = new Router(deps.routes);
  /** Aborted when the server has closed: a request held by a latency fault then ends (nothing of it runs later). */
  const closed = new AbortController();
  // each held request listens until its delay ends (then its listener is removed): any number may be held at once
  setMaxListeners(0, closed.signal);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = (req.method ?? 'GET').toUpperCase();
    if (requestPath(req.url) === undefined) {
      res.setHeader('connection', 'close');
      send(res, errorResponse(400, 'Malformed request target'));
      return;
    }
    // DNS rebinding: a page whose name resolves to this machine sends its own name as Host.
    const listenHost = deps.control?.host ?? '127.0.0.1';
    if (!hostHeaderAllowed(listenHost, req.headers.host)) {
      res.setHeader('connection', 'close');
      send(res, errorResponse(421, misdirectedMessage()));
      return;
    }
    const url = new URL(`http://sandbox.local${req.url ?? '/'}`);
    const path = url.pathname;
    const match = router.match(method, path);
    // Read as the router reads it (`//_sandbox/reset` reaches the reset route), and any route without authentication.
    const control = isControlPath(path) || (match.kind === 'found' && match.route.auth === 'none');
    const record = (status: number): void => {
      deps.logger.debug({ method, path, status }, 'sandbox request');
      if (control) return;
      deps.log.add({
        method,
        path,
        query: Object.fromEntries(url.searchParams),
        status,
        time: new Date(deps.now ? deps.now() : Date.now()).toISOString(),
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        ...(typeof req.headers['user-agent'] === 'string' ? { userAgent: req.headers['user-agent'] } : {}),
      });
    };
    const reply = (out: SandboxResponse): void => {
      send(res, out);
      record(out.status);
    };

    let rawBody: string;
    try {
      rawBody = await readBody(req, deps.bodyLimit);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        reply(errorResponse(413, `Request body larger than ${deps.bodyLimit} bytes`));
        return;
      }
      throw err;
    }

    if (control) {
      try {
        guardControl(req.headers, rawBody, deps.control ?? { open: false, host: '127.0.0.1' }, deps.callers, req.socket.localPort);
      } catch (err) {
        if (err instanceof HttpError) {
          reply(err.toResponse());
          return;
        }
        throw err;
      }
    }

    if (!control) {
      const decision = deps.faults.decide(method, match.kind === 'found' ? match.route.pattern : undefined, path);
      if (decision.delayMs > 0) {
        try {
          await sleep(decision.delayMs, undefined, { signal: closed.signal });
        } catch (err) {
          if (closed.signal.aborted) return; // stopped meanwhile: its connection is gone, nothing is carried out
          throw err;
        }
      }
      const action = decision.action;
      if (action?.type === 'drop') {
        req.socket.destroy();
        record(0);
        return;
      }
      if (action?.type === 'error') {
        const out = errorResponse(action.status, `Injected fault: ${action.status} (sandbox fault injection)`);
        if (action.retryAfter !== undefined) out.headers = { 'retry-after': String(action.retryAfter) };
        reply(out);
        return;
      }
      if (action?.type === 'conflict') {
        reply(errorResponse(409, 'Injected fault: conflict (sandbox fault injection); retry later'));
        return;
      }
    }

    if (match.kind === 'none') {
      reply(errorResponse(404, `No endpoint ${method} ${path}`));
      return;
    }
    if (match.kind === 'method') {
      const out = errorResponse(405, `Method ${method} is not allowed on ${path}; allowed: ${match.allowed.join(', ')}`);
      out.headers = { allow: match.allowed.join(', ') };
      reply(out);
      return;
    }
    try {
      const caller = authenticate(match.route.auth, req.headers.authorization, deps.callers);
      const sreq: SandboxRequest = {
        method,
        path,
        params: match.params,
        query: url.searchParams,
        headers: req.headers,
        body: parseBody(rawBody, req.headers['content-type'], match.route.auth === 'integration', match.route.auth !== 'none'),
        rawBody,
      };
      if (caller) sreq.caller = caller;
      reply(await match.route.handler(sreq));
    } catch (err) {
      if (err instanceof HttpError) {
        reply(err.toResponse());
        return;
      }
      deps.logger.error({ err, method, path }, 'sandbox handler failed');
      reply(errorResponse(500, 'Internal sandbox error'));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      deps.logger.error({ err }, 'sandbox request failed');
      if (!res.headersSent) send(res, errorResponse(500, 'Internal sandbox error'));
      else res.destroy();
    });
  });
  server.once('close', () => closed.abort());
  return server;
}
