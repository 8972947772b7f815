/**
 * DNS-rebinding protection for servers meant for this machine only (the sandbox on loopback, the daemon under
 * `npm start`): a page on `evil.example` whose name is made to resolve to 127.0.0.1 reaches them from the
 * user's browser, but its requests carry `Host: evil.example`. Such servers answer only requests whose Host
 * names loopback (`localhost`, `127.0.0.1`, `[::1]`, with or without a port) or the address they were told
 * to listen on; others get 421 Misdirected Request.
 */

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);
const WILDCARD: ReadonlySet<string> = new Set(['', '0.0.0.0', '::', '[::]']);

/** Whether a listen host is a loopback address or name (only this machine can connect). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.has(h) || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The name part of a Host header (`[::1]:8088` -> `[::1]`, `Localhost:80` -> `localhost`), or undefined. */
function hostName(header: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/i.exec(header.trim());
  return m ? m[1]!.toLowerCase() : undefined;
}

/**
 * Whether a request with this Host header may be answered by a server listening on `listenHost`. A wildcard
 * listen address (every interface) is the operator's choice to be reached by any name: every Host is
 * accepted. A request without a Host header (HTTP/1.0; browsers always send one) is accepted.
 */
export function hostHeaderAllowed(listenHost: string, header: string | undefined): boolean {
  if (WILDCARD.has(listenHost.toLowerCase())) return true;
  if (header === undefined) return true;
  const name = hostName(header);
  if (name === undefined) return false;
  if (LOOPBACK_NAMES.has(name)) return true;
  const own = listenHost.includes(':') && !listenHost.startsWith('[') ? `[${listenHost}]` : listenHost;
  return name === own.toLowerCase();
}

/** The message of the 421 answer. */
export function misdirectedMessage(): string {
  // (the Host the request gave is not repeated: an answer that echoes request text is an oracle for the redactor)
  return `the request's Host is not this server's: it answers loopback names only (localhost, 127.0.0.1, [::1]); DNS-rebinding protection`;
}
