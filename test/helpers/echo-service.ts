/**
 * A hostile service for the canary test: lists are empty (so everything is a create), and every call
 * that carries a body answers with an error that echoes the whole request, in every form an echo can
 * take: raw, inside a JSON string (escaped once and twice), URL-encoded, the parsed body as an object,
 * the Authorization header, validation test names. Statuses rotate through 400, 409, 422 and 500;
 * a webhook batch answers 200 with one item error per webhook, echoing the item (its secret included);
 * script endpoints answer 400 or 422 echoing the body.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EchoService {
  url: string;
  /** Requests answered, by status. */
  statuses: number[];
  close(): Promise<void>;
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 409: 'Conflict', 422: 'Unprocessable Entity', 500: 'Internal Server Error' };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => resolve(text));
  });
}

export async function startEchoService(): Promise<EchoService> {
  const statuses: number[] = [];
  let turn = 0;
  const server: Server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const method = req.method ?? 'GET';
      const path = new URL(req.url ?? '/', 'http://echo').pathname;
      const send = (status: number, body: unknown): void => {
        statuses.push(status);
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      let parsed: unknown;
      try {
        parsed = raw ? JSON.parse(raw) : undefined;
      } catch {
        parsed = raw;
      }
      const auth = req.headers.authorization ?? '';
      const echo = (status: number) => ({
        statusCode: status,
        error: REASONS[status] ?? 'Error',
        message: `rejected ${method} ${path}: ${raw} (auth ${auth}) encoded=${encodeURIComponent(raw)} nested=${JSON.stringify(JSON.stringify(parsed ?? null))}`,
        request: parsed,
        headers: { authorization: auth },
        ...(status === 422
          ? { validationResults: { validationTests: [{ name: `Echo test ${raw}`, status: 'failed', message: raw }] } }
          : {}),
      });
      if (method === 'GET' && (path === '/integrations' || path === '/webhooks')) return send(200, []);
      if (method === 'GET' && path === '/webhooks/actions') return send(200, ['ALL_NOTIFICATIONS']);
      if (method === 'POST' && path === '/webhooks') {
        const items = (parsed as { webhooks?: unknown[] } | undefined)?.webhooks ?? [];
        return send(200, {
          createdWebhooks: [],
          errors: items.map((item, index) => ({ index, name: (item as { name?: string }).name, message: `invalid webhook ${JSON.stringify(item)} (auth ${auth})`, webhook: item })),
        });
      }
      if (path.includes('/scripts/')) {
        const status = turn++ % 2 === 0 ? 400 : 422;
        return send(status, echo(status));
      }
      if (method === 'GET') return send(404, { statusCode: 404, error: 'Not Found', message: `no ${path} (auth ${auth})` });
      const status = [400, 409, 422, 500][turn++ % 4]!;
      return send(status, echo(status));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    statuses,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
