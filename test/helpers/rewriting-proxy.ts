/**
 * A plausible other service: a proxy on 127.0.0.1 in front of the sandbox that forwards every request and lets a
 * test rewrite the answer (a list in an envelope, booleans as strings, a field as a list, a create answered
 * without an id...), where the interface leaves the service's reading open and no sandbox behaviour takes it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  /** The path alone. */
  path: string;
  body: string;
}

export interface ProxiedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Returns the answer to send: the upstream's as it is, changed, or another one. */
export type Rewrite = (req: ProxiedRequest, res: ProxiedResponse) => ProxiedResponse;

export interface RewritingProxy {
  url: string;
  /** Requests forwarded, as `METHOD path?query`. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * @param request optional: the path and query sent upstream instead of the client's (e.g. a service that
 *   ignores a query parameter).
 */
export async function rewritingProxy(upstream: string, rewrite: Rewrite, request?: (method: string, url: string) => string): Promise<RewritingProxy> {
  const target = new URL(upstream);
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? '/';
      requests.push(`${req.method} ${url}`);
      const headers = { ...req.headers, host: target.host };
      const sent = request ? request(req.method ?? 'GET', url) : url;
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: sent, headers }, (ur) => {
        const rc: Buffer[] = [];
        ur.on('data', (c: Buffer) => rc.push(c));
        ur.on('end', () => {
          const q: ProxiedRequest = { method: req.method ?? 'GET', url, path: url.split('?')[0]!, body: body.toString('utf8') };
          const out = rewrite(q, { status: ur.statusCode ?? 502, headers: { ...ur.headers }, body: Buffer.concat(rc).toString('utf8') });
          const h = { ...out.headers };
          delete h['content-length'];
          delete h['transfer-encoding'];
          res.writeHead(out.status, { ...h, 'content-length': Buffer.byteLength(out.body) });
          res.end(out.body);
        });
      });
      up.on('error', () => req.socket.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** The answer with its JSON body changed by `fn` (a body that is not JSON is left as it is). */
export function mapJsonBody(res: ProxiedResponse, fn: (body: unknown) => unknown): ProxiedResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    return res;
  }
  return { ...res, body: JSON.stringify(fn(parsed)) };
}
