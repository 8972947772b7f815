/** A tiny real HTTP server on 127.0.0.1:0 whose behaviour each test scripts (for retry/timeout tests). */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Handler = (
  req: SeenRequest,
  res: http.ServerResponse,
  ctx: { socket: Socket; count: (method: string, urlPrefix: string) => number },
) => void | Promise<void>;

export interface TestServer {
  url: string;
  seen: SeenRequest[];
  connections: number;
  close(): Promise<void>;
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      seen.push(entry);
      const count = (method: string, prefix: string) =>
        seen.filter((s) => s.method === method && s.url.startsWith(prefix)).length;
      Promise.resolve(handler(entry, res, { socket: req.socket, count })).catch((err: unknown) => {
        sendJson(res, 500, { statusCode: 500, error: 'Internal Server Error', message: String(err) });
      });
    });
  });
  server.on('connection', (s: Socket) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A port on 127.0.0.1 with nothing listening (connection refused). */
export async function deadPort(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}
