/** Listen addresses are written `HOST:PORT` or `:PORT` (all interfaces). */
export interface ListenAddress {
  host: string;
  port: number;
}

export function parseAddress(text: string, defaultHost = '0.0.0.0'): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new Error(`invalid address "${text}": write HOST:PORT or :PORT, e.g. 127.0.0.1:8080 or :8080`);
  }
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? defaultHost : host, port };
}
