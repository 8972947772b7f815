/** One HTTP/1.1 request written byte for byte on a socket (any Host header), and the status line's code. */
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

export function rawRequest(url: string, opts: { host?: string; path?: string; headers?: Record<string, string> } = {}): Promise<RawAnswer> {
  const u = new URL(url);
  const lines = [`GET ${opts.path ?? '/'} HTTP/1.1`, `Host: ${opts.host ?? u.host}`, 'Connection: close', ...Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}`)];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname.replace(/^\[|\]$/g, ''));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = out.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, body: rest.join('\r\n\r\n') });
    });
    socket.end(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
