/**
 * A proxy on 127.0.0.1 in front of the sandbox that forwards every request and, for the ones a test picks, lets the
 * service act and then cuts the connection before the answer reaches govops (an answer lost after the server acted).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CuttingProxy {
  url: string;
  /** Requests forwarded, as `METHOD path?query`, with ` cut` when the answer was lost. */
  requests: string[];
  /**
   * Whether to lose the answer to this request (`METHOD path?query`), decided when it arrives: true = forwarded, the
   * service acts, its answer is lost; 'unsent' = the connection is cut before anything is forwarded.
   */
  cut: (request: string) => boolean | 'unsent';
  close(): Promise<void>;
}

export async function cuttingProxy(upstream: string): Promise<CuttingProxy> {
  const target = new URL(upstream);
  const proxy: CuttingProxy = {
    url: '',
    requests: [],
    cut: () => false,
    close: () => Promise.resolve(),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const line = `${req.method} ${req.url ?? '/'}`;
      const lose = proxy.cut(line);
      proxy.requests.push(lose === 'unsent' ? `${line} unsent` : lose ? `${line} cut` : line);
      if (lose === 'unsent') return void req.socket.destroy();
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (ur) => {
        const rc: Buffer[] = [];
        ur.on('data', (c: Buffer) => rc.push(c));
        ur.on('end', () => {
          if (lose) return void req.socket.destroy();
          const h = { ...ur.headers };
          delete h['transfer-encoding'];
          const body = Buffer.concat(rc);
          res.writeHead(ur.statusCode ?? 502, { ...h, 'content-length': body.length });
          res.end(body);
        });
      });
      up.on('error', () => req.socket.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return proxy;
}
