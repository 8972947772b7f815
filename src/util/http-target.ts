/**
 * The path of an HTTP request target, or undefined when the target is malformed (answered 400, never
 * 500): it must be origin-form (`/path?query`) and resolve as a URL the way a client would resolve it
 * (`//[` does not: an authority with a broken IPv6 literal).
 */
export function requestPath(target: string | undefined): string | undefined {
  if (target === undefined || target === '') return '/';
  if (!target.startsWith('/')) return undefined;
  try {
    new URL(target, 'http://localhost'); // rejects `//[`, `//a b` and other broken authorities
    return new URL(`http://localhost${target}`).pathname;
  } catch {
    return undefined;
  }
}

/**
 * The path of a request target that is already in normal form: what the client wrote is what it resolves to. A
 * target with dot segments (`/hooks/git/../../status`, or `%2e%2e`), backslashes or characters a URL encodes is
 * undefined (answered 400): routed where it resolves, it reached an endpoint other than the one a proxy in front
 * allowed by its prefix (a hooks-only route opened /status and /metrics).
 */
export function normalRequestPath(target: string | undefined): string | undefined {
  const path = requestPath(target);
  const written = (target ?? '').split('?', 1)[0] || '/';
  return path === written ? path : undefined;
}
