/** Listen addresses are written `HOST:PORT` or `:PORT` (all interfaces). */
export interface ListenAddress {
  host: string;
  port: number;
  /**
   * `:PORT` (no host written): every address, IPv6 included. The server binds without a host (Node: `::`, which
   * takes IPv4 too, where the machine has IPv6; else 0.0.0.0). `host` stays `defaultHost` for what is shown.
   */
  anyHost?: true;
}

export function parseAddress(text: string, defaultHost = '0.0.0.0'): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new Error(`invalid address "${text}": write HOST:PORT or :PORT, e.g. 127.0.0.1:8080 or :8080`);
  }
  const host = m[1] ?? m[2] ?? '';
  return host === '' ? { host: defaultHost, port, anyHost: true } : { host, port };
}
