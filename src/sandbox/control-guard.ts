/**
 * Who may use the control API (`/_sandbox/...`): it resets state, injects faults and edits
 * integrations out of band, so it needs the admin token (raw, as integration calls send it, or as
 * `Bearer`) unless the sandbox runs with `--dev`. Whatever the mode, it refuses requests a browser
 * sends for another site (an `Origin` that is not the sandbox itself, `Sec-Fetch-Site: cross-site`)
 * and bodies that are not JSON by their content type (a `text/plain` "simple request" needs no CORS
 * preflight: no page on any origin may drive the sandbox). Nor may a webhook delivery (the sandbox's own or
 * another sandbox's, recognised by its event headers): a webhook's URL is a manifest author's choice, and
 * deliveries go to loopback, so with `--dev` a webhook at `http://127.0.0.1:8088/_sandbox/reset` reset it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Caller } from './http.js';
import { HttpError } from './http.js';

export interface ControlPolicy {
  /** `--dev`: no token needed (the cross-origin and content-type rules still apply). */
  open: boolean;
  /** The address the sandbox listens on (`--host`): an allowed origin host besides loopback. */
  host: string;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Headers every webhook delivery of a sandbox carries (webhooks/dispatcher.ts) and no control client sends. */
const DELIVERY_HEADERS = ['x-webhook-event', 'x-webhook-activity-id', 'x-webhook-history-id'] as const;

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Whether `origin` names the sandbox itself (loopback or its --host, on the port it was reached on). */
export function sameOrigin(origin: string, policy: ControlPolicy, localPort: number | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:') return false;
  const port = url.port === '' ? 80 : Number(url.port);
  if (localPort !== undefined && port !== localPort) return false;
  const host = url.hostname.toLowerCase();
  const own = policy.host.includes(':') && !policy.host.startsWith('[') ? `[${policy.host}]` : policy.host;
  return LOOPBACK_NAMES.has(host) || host === own.toLowerCase();
}

/**
 * Throw the HttpError a control request gets, or return when it may go on. `rawBody` is the request
 * body as received; `callers` are the sandbox's tokens.
 */
export function guardControl(
  headers: IncomingHttpHeaders,
  rawBody: string,
  policy: ControlPolicy,
  callers: ReadonlyMap<string, Caller>,
  localPort: number | undefined,
): void {
  if (DELIVERY_HEADERS.some((h) => headers[h] !== undefined)) {
    throw new HttpError(403, 'The control API refuses webhook deliveries (a webhook URL pointing at the sandbox itself)');
  }
  const site = first(headers['sec-fetch-site'])?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') {
    throw new HttpError(403, 'The control API refuses requests a browser sends from another site');
  }
  const origin = first(headers.origin);
  if (origin !== undefined && !sameOrigin(origin, policy, localPort)) {
    throw new HttpError(403, `The control API refuses cross-origin requests (Origin: ${origin})`);
  }
  if (rawBody.trim() !== '') {
    const type = first(headers['content-type']) ?? '';
    if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type.trim())) {
      throw new HttpError(415, 'The control API accepts only JSON bodies sent as Content-Type: application/json');
    }
  }
  if (policy.open) return;
  const value = first(headers.authorization)?.trim();
  if (!value) {
    throw new HttpError(401, 'The control API needs the admin token in Authorization (raw or "Bearer <token>"), or a sandbox started with --dev');
  }
  const token = /^Bearer\s+(\S+)$/i.exec(value)?.[1] ?? value;
  const caller = callers.get(token);
  if (!caller) throw new HttpError(401, 'Invalid or unknown token');
  if (caller.role !== 'admin') throw new HttpError(403, 'The control API needs the admin token');
}
